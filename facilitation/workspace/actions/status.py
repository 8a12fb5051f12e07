"""A workspace's status changes: the one write every change of status makes, and the pauses a
workspace takes on its own: when nobody tends it, and when its budget is used up (the seat whose
call would go over it writes nothing but that, ``facilitation.workspace.steps``).

Rounds end by themselves (``turnPolicy``), so a workspace that nobody looks after would go on
calling its agents' models round after round. At the end of a round that ended by itself, a
workspace pauses itself when no person has acted in it for ``CONVENE["WORKSPACE_IDLE_PAUSE"]``
seconds (default an hour; 0: never), or when ``CONVENE["WORKSPACE_IDLE_ROUNDS"]`` rounds in a
row ended by themselves since a person last acted (default 3; 0: never): a small ``maxEvents``
ends a round as soon as the agents have published, so rounds would otherwise follow each other
within seconds. The ended round still gets its narrative, then nothing runs until somebody
resumes it. The pause's audit row (``room.idle_pause``) says which of the two fired (``triggers``,
with the limit reached: ``idleSeconds``, ``idleRounds``), so the desk can name it. Acting is
anything a person does in the room that leaves an invocation with their name (starting or resuming
it, publishing, editing a narrative, a task, a persona swap, ending a round).
"""
from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from facilitation.workspace.audit import log_invocation
from rooms.events import EventType, record_event
from rooms.models import Invocation, Room
from rooms.payloads import status_payload

IDLE = "idle"
BUDGET = "budget"
# What made an idle pause (its audit row's ``triggers``): nobody acted for the idle limit, or the idle
# number of rounds in a row ended by themselves since a person last acted (both, when both held).
IDLE_TIME = "time"
IDLE_ROUNDS = "rounds"


def status_changed(room: Room, user, component: str, before: str, correlation: str, detail: dict | None = None) -> None:
    """Save ``room``'s new status (and the dates and reason that go with it), tell the browsers, and keep
    the change in the log (``detail``: more for its input). The caller holds the room's lock. Only these
    fields are written: usage added in the same transaction (``rooms.usage.add_usage``, an UPDATE) is not
    in ``room``."""
    room.save(update_fields=["status", "pause_reason", "started_at", "ended_at", "updated_at"])
    record_event(room, EventType.STATUS, status_payload(room))
    log_invocation(room, component, correlation=correlation, user=user,
                   input={"from": before, "to": room.status, **(detail or {})}, output=room.status)


def last_acted(room: Room) -> datetime | None:
    """When a person last did something in the room (its start, when nobody is on record)."""
    return since_a_person_acted(room, 0)[0]


def since_a_person_acted(room: Room, rounds: int) -> tuple[datetime | None, int]:
    """``(when a person last acted, how many rounds ended by themselves since)``, in one query: the
    newest person's actions and automatic round ends (``round.end`` without a user), at most
    ``rounds + 1`` of them. When none of those is a person's, the time is the room's start (nobody is
    on record), or unknown past the window, whose ``rounds`` round ends are then enough to tell."""
    kept = Q(user__isnull=False)
    if rounds:
        kept |= Q(component="round.end", user__isnull=True)
    rows = list(Invocation.objects.filter(room=room).filter(kept).order_by("-id")
                .values_list("user_id", "created_at")[:rounds + 1])
    automatic = 0
    for user_id, created_at in rows:
        if user_id is not None:
            return created_at, automatic
        automatic += 1
    return (room.started_at if len(rows) <= rounds else None), automatic


def pause_if_idle(room: Room, correlation: str, now: datetime | None = None) -> bool:
    """Pause an active workspace nobody has acted in for the idle limit, or in which the idle number
    of rounds in a row ended by themselves since a person last acted; True when it paused.
    The caller holds the room's lock."""
    limit, rounds = settings.CONVENE["WORKSPACE_IDLE_PAUSE"], settings.CONVENE["WORKSPACE_IDLE_ROUNDS"]
    if not (limit or rounds) or room.status != Room.Status.ACTIVE:
        return False
    acted, automatic = since_a_person_acted(room, rounds)
    by_rounds = bool(rounds) and automatic >= rounds
    by_time = bool(limit) and acted is not None and ((now or timezone.now()) - acted).total_seconds() >= limit
    if not (by_rounds or by_time):
        return False
    # What fired, with the limit it reached, kept in the pause's audit row: the desk names it.
    triggers = {IDLE_TIME: by_time, IDLE_ROUNDS: by_rounds}
    detail = {"triggers": [name for name, fired in triggers.items() if fired]}
    if by_time:
        detail["idleSeconds"] = limit
    if by_rounds:
        detail["idleRounds"] = rounds
    return pause_itself(room, IDLE, correlation, detail=detail)


def last_idle_pause(room: Room) -> dict | None:
    """The newest idle pause's audit row as ``{"id", "triggers", "idleSeconds"?, "idleRounds"?}`` (None:
    the room never paused itself for being idle). ``triggers`` is empty for a pause logged before it was kept."""
    row = (Invocation.objects.filter(room=room, component=f"room.{IDLE}_pause").order_by("-id")
           .values_list("id", "input").first())
    if row is None:
        return None
    pk, data = row
    data = data if isinstance(data, dict) else {}
    kept = {key: data[key] for key in ("idleSeconds", "idleRounds") if key in data}
    return {"id": pk, "triggers": list(data.get("triggers") or []), **kept}


def pause_itself(room: Room, reason: str, correlation: str, need: tuple[int, float] | None = None,
                 detail: dict | None = None) -> bool:
    """Pause an active workspace for ``reason`` (``IDLE``, ``BUDGET``), logged as ``room.<reason>_pause``
    without a user (``need``: what the call the budget refused may use at most, kept in its input for the
    resume's check, ``budget_need``; ``detail``: more for that input, e.g. what made an idle pause);
    False when it is not active. The caller holds the room's lock."""
    if room.status != Room.Status.ACTIVE:
        return False
    room.status, room.pause_reason = Room.Status.PAUSED, reason
    detail = dict(detail or {})
    if need is not None:
        detail["need"] = {"tokens": need[0], "usd": need[1]}
    status_changed(room, None, f"room.{reason}_pause", Room.Status.ACTIVE, correlation, detail or None)
    return True


def budget_need(room: Room) -> tuple[int, float] | None:
    """What the call that paused the workspace for its budget may use at most (None: not known)."""
    need = (Invocation.objects.filter(room=room, component=f"room.{BUDGET}_pause").order_by("-id")
            .values_list("input__need", flat=True).first())
    return (int(need["tokens"]), float(need["usd"])) if isinstance(need, dict) else None
