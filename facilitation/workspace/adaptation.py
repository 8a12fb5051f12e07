"""What an (agent, persona) pair learns from one round: pure functions, no database.

Signals that exist after a round:
- how much the manager changed the previous narrative (0 = kept as written, 1 = rewritten),
- how many tasks the seat completed during the round,
- which observation types the seat published (and how many of them answered someone).

The thresholds move by an exponential moving average, so one round nudges and several
rounds settle. They reach the agent's next prompt as plain numbers with their meaning.
"""
import difflib
from dataclasses import dataclass, field

DEFAULTS = {"confidence": 0.6, "narrativeTrust": 1.0, "answerBias": 0.5, "taskFocus": 0.3, "typeDiversity": 0.5}
RATE = 0.3


@dataclass
class RoundSignals:
    narrative_change: float | None = None   # None: no narrative edited yet
    tasks_completed: int = 0
    types: dict = field(default_factory=dict)  # event type -> count this round
    replies: int = 0


def change_ratio(generated: str, edited: str) -> float:
    """How much of a narrative the manager changed: 0 (kept) .. 1 (rewritten)."""
    if not generated and not edited:
        return 0.0
    return round(1.0 - difflib.SequenceMatcher(None, generated or "", edited or "", autojunk=False).ratio(), 4)


def _ema(old: float, target: float) -> float:
    return round(min(1.0, max(0.0, old + RATE * (target - old))), 4)


def learn(thresholds: dict, counts: dict, signals: RoundSignals) -> tuple[dict, dict]:
    """New (thresholds, observation counts) after a round."""
    t = {**DEFAULTS, **(thresholds or {})}
    published = sum(signals.types.values())
    if signals.narrative_change is not None:
        t["narrativeTrust"] = _ema(t["narrativeTrust"], 1.0 - signals.narrative_change)
    # Confidence follows how well the room's summary held up and whether the seat delivered work.
    target = 0.45 + 0.4 * t["narrativeTrust"] + 0.05 * min(signals.tasks_completed, 3)
    t["confidence"] = _ema(t["confidence"], min(0.95, target))
    t["taskFocus"] = _ema(t["taskFocus"], 1.0 if signals.tasks_completed else 0.0)
    if published:
        t["answerBias"] = _ema(t["answerBias"], signals.replies / published)
        t["typeDiversity"] = _ema(t["typeDiversity"], len(signals.types) / published)
    merged = dict(counts or {})
    for kind, n in signals.types.items():
        merged[kind] = int(merged.get(kind, 0)) + int(n)
    return t, merged


def describe(thresholds: dict) -> list[str]:
    """The thresholds as lines a prompt can carry."""
    t = {**DEFAULTS, **(thresholds or {})}
    return [
        f"confidence {t['confidence']:.2f}: state your confidence near this unless you know better",
        f"narrativeTrust {t['narrativeTrust']:.2f}: how far the manager kept the summaries (low: ask and clarify more)",
        f"answerBias {t['answerBias']:.2f}: share of your observations that answered someone",
        f"taskFocus {t['taskFocus']:.2f}: how much your recent rounds delivered tasks",
        f"typeDiversity {t['typeDiversity']:.2f}: how varied your observation types were",
    ]
