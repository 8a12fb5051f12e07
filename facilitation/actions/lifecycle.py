"""Start, pause, resume, stop and conclude a discussion: the one lifecycle table.

``TRANSITIONS`` says, per verb, from which statuses it may run, which status a client asks
for to run it (``PATCH {"status"}``), and whether it is a socket control. The REST routes,
the PATCH, the socket handlers and the page's buttons all read it; ``run(verb, room)``
dispatches. A transition that is not allowed from the room's current status raises
``StateConflict`` (HTTP 409) and changes nothing. Every transition leaves an audit row
(``lifecycle.<verb>``).
"""
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from facilitation.engine import EngineState, force_synthesis
from facilitation.runs.leases import advance, locked_room, mark_ready
from facilitation.runs.scheduling import schedule, schedule_step
from rooms import rows
from rooms.audit import audit
from rooms.errors import StateConflict
from rooms.events import Command, EventType, build, record_event
from rooms.models import Room

S = Room.Status


@dataclass(frozen=True)
class Transition:
    verb: str
    sources: tuple[str, ...]
    target: str  # the status a client asks for; conclude asks for "concluded" (reached when the synthesis is written)
    summary: str
    command: Command | None = None  # the Socket.IO control that runs it, if any


TRANSITIONS: dict[str, Transition] = {t.verb: t for t in (
    Transition("start", (S.DRAFT,), S.ACTIVE, "Start a draft discussion (the facilitator opens)."),
    Transition("pause", (S.ACTIVE,), S.PAUSED, "Pause an active discussion; takes effect between steps.", Command.PAUSE),
    Transition("resume", (S.PAUSED,), S.ACTIVE, "Resume a paused discussion exactly where it stopped.", Command.RESUME),
    Transition("stop", (S.ACTIVE, S.PAUSED), S.STOPPED,
               "Stop for good: the step in flight is abandoned and the discussion ends.", Command.STOP),
    Transition("conclude", (S.ACTIVE, S.PAUSED, S.STOPPED), S.CONCLUDED,
               "Synthesize now from what exists; status becomes concluded when the synthesis is written.", Command.CONCLUDE),
)}


def verb_for(target: str, current: str) -> str | None:
    """The verb that takes a room from ``current`` to the asked-for ``target`` status, if any."""
    for t in TRANSITIONS.values():
        if t.target == target and current in t.sources:
            return t.verb
    return None


def verbs_by_status() -> dict[str, list[str]]:
    """For the page's buttons: the verbs allowed from each status."""
    return {status: [t.verb for t in TRANSITIONS.values() if status in t.sources] for status in S.values}


def _locked(room_or_id) -> Room:
    pk = room_or_id.pk if isinstance(room_or_id, Room) else room_or_id
    room = locked_room(pk)
    if room is None:
        raise Room.DoesNotExist("Room matching query does not exist.")
    return room


def _require(room: Room, verb: str) -> None:
    if room.kind == Room.Kind.WORKSPACE:  # workspaces run rounds (facilitation.workspace), not these steps
        raise StateConflict(f"A workspace does not {verb} this way.", {"status": room.status}, code="invalid_transition")
    if room.status not in TRANSITIONS[verb].sources:
        raise StateConflict(f"Cannot {verb} a discussion that is {room.status}.", {"status": room.status}, code="invalid_transition")


def _status_changed(room: Room, actor, component: str, before: str, **details) -> None:
    record_event(room, EventType.STATUS, build.status(room), persist_seq=False)  # the seq it takes is saved with the room
    rows.save(room)
    audit(room, actor, component, before={"status": before}, after={"status": room.status, **details})


def do_start_discussion(room_or_id, actor=None) -> Room:
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, "start")
        if room.kind == Room.Kind.FACILITATION:
            raise StateConflict("A facilitation run starts when a chat group joins it with its code.",
                                {"status": room.status}, code="invalid_transition")
        before = room.status
        room.status = S.ACTIVE
        room.started_at = timezone.now()
        room.engine_state = EngineState(phase="opening", maxRounds=room.max_rounds).dump()
        step = advance(room)
        _status_changed(room, actor, "lifecycle.start", before)
        schedule_step(room.pk, step.step_seq)
    return room


def do_pause_discussion(room_or_id, actor=None) -> Room:
    """Takes effect between steps: a step in flight commits, the next one waits for resume."""
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, "pause")
        before = room.status
        room.status = S.PAUSED
        _status_changed(room, actor, "lifecycle.pause", before)
    return room


def do_resume_discussion(room_or_id, actor=None) -> Room:
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, "resume")
        before = room.status
        room.status = S.ACTIVE
        step = mark_ready(room.pk)
        _status_changed(room, actor, "lifecycle.resume", before)
        schedule(room.pk, step)
    return room


def do_stop_discussion(room_or_id, actor=None) -> Room:
    """A real stop: the step in flight loses its lease (its call is abandoned) and the room ends."""
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, "stop")
        before = room.status
        advance(room)
        room.status = S.STOPPED
        room.ended_at = timezone.now()
        _status_changed(room, actor, "lifecycle.stop", before)
    return room


def do_conclude_discussion(room_or_id, actor=None) -> Room:
    """Synthesize now from what exists (also after a stop: the turns said so far get their conclusion)."""
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, "conclude")
        before = room.status
        if room.status == S.STOPPED:
            room.ended_at = None
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        if state.phase != "synthesis":
            room.engine_state = force_synthesis(state, "forced").dump()
            step = advance(room)
        else:
            step = mark_ready(room.pk)
        room.status = S.ACTIVE
        _status_changed(room, actor, "lifecycle.conclude", before)
        schedule(room.pk, step)
    return room


def do_fail_discussion(room_id: int, reason: str) -> Room:
    with transaction.atomic():
        room = _locked(room_id)
        if room.is_terminal:
            return room
        before = room.status
        advance(room)
        room.status = S.FAILED
        room.ended_at = timezone.now()
        room.conclusion = room.conclusion or f"The discussion failed: {reason}"
        _status_changed(room, None, "lifecycle.fail", before, reason=reason)
    return room


ACTIONS: dict[str, Callable[..., Room]] = {
    "start": do_start_discussion,
    "pause": do_pause_discussion,
    "resume": do_resume_discussion,
    "stop": do_stop_discussion,
    "conclude": do_conclude_discussion,
}


def run(verb: str, room_or_id, actor=None) -> Room:
    """Run the transition named ``verb`` (a key of ``TRANSITIONS``)."""
    return ACTIONS[verb](room_or_id, actor=actor)
