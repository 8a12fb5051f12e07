"""Floor arbitration: when the facilitator speaks in a group. Pure.

It speaks when addressed, when the artifact changed, on a stall or a timebox, never after
every message, and at most ``per_minute`` messages in any minute. It never answers another
bot unless that bot addressed it.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Moment:
    now: float                      # seconds
    addressed: bool = False         # mentioned, replied to, or a command
    artifact_changed: bool = False
    stalled: bool = False
    timebox_due: bool = False
    from_bot: bool = False


def may_speak(moment: Moment, recent: list[float], per_minute: int = 3) -> bool:
    """``recent``: when the facilitator spoke before (seconds)."""
    if moment.from_bot and not moment.addressed:
        return False
    if not (moment.addressed or moment.artifact_changed or moment.stalled or moment.timebox_due):
        return False
    in_last_minute = [t for t in recent if moment.now - t < 60.0]
    return len(in_last_minute) < per_minute
