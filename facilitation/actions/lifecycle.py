"""Start, pause, resume, stop and conclude a discussion.

A transition that is not allowed from the room's current status raises
``StateConflict`` (HTTP 409) and changes nothing.
"""
from django.db import transaction
from django.utils import timezone

from facilitation.engine import EngineState, force_synthesis
from facilitation.scheduling import schedule_step
from rooms.errors import StateConflict
from rooms.events import record_event
from rooms.models import Room
from rooms.payloads import status_payload

S = Room.Status


def _locked(room_or_id) -> Room:
    pk = room_or_id.pk if isinstance(room_or_id, Room) else room_or_id
    return Room.objects.select_for_update().get(pk=pk)


def _require(room: Room, allowed: tuple, verb: str) -> None:
    if room.status not in allowed:
        raise StateConflict(f"Cannot {verb} a discussion that is {room.status}.", {"status": room.status}, code="invalid_transition")


def _advance_step(room: Room) -> None:
    """Invalidate any step in flight and make a new one ready."""
    room.step_seq += 1
    room.step_attempt = 0
    room.lease_token = ""
    room.lease_until = None
    room.step_ready_at = timezone.now()


def _status_changed(room: Room) -> None:
    room.save()
    record_event(room, "discussion:status", status_payload(room))


def do_start_discussion(room_or_id) -> Room:
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, (S.DRAFT,), "start")
        room.status = S.ACTIVE
        room.started_at = timezone.now()
        room.engine_state = EngineState(phase="opening", maxRounds=room.max_rounds).dump()
        _advance_step(room)
        _status_changed(room)
        schedule_step(room.pk, room.step_seq)
    return room


def do_pause_discussion(room_or_id) -> Room:
    """Takes effect between steps: a step in flight commits, the next one waits for resume."""
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, (S.ACTIVE,), "pause")
        room.status = S.PAUSED
        _status_changed(room)
    return room


def do_resume_discussion(room_or_id) -> Room:
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, (S.PAUSED,), "resume")
        room.status = S.ACTIVE
        room.step_ready_at = timezone.now()
        _status_changed(room)
        schedule_step(room.pk, room.step_seq)
    return room


def do_stop_discussion(room_or_id) -> Room:
    """A real stop: the step in flight loses its lease (its call is abandoned) and the room ends."""
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, (S.ACTIVE, S.PAUSED), "stop")
        _advance_step(room)
        room.status = S.STOPPED
        room.ended_at = timezone.now()
        _status_changed(room)
    return room


def do_conclude_discussion(room_or_id) -> Room:
    """Synthesize now from what exists."""
    with transaction.atomic():
        room = _locked(room_or_id)
        _require(room, (S.ACTIVE, S.PAUSED), "conclude")
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        if state.phase != "synthesis":
            room.engine_state = force_synthesis(state, "forced").dump()
            _advance_step(room)
        room.status = S.ACTIVE
        _status_changed(room)
        schedule_step(room.pk, room.step_seq)
    return room


def do_fail_discussion(room_id: int, reason: str) -> Room:
    with transaction.atomic():
        room = _locked(room_id)
        if room.is_terminal:
            return room
        _advance_step(room)
        room.status = S.FAILED
        room.ended_at = timezone.now()
        room.conclusion = room.conclusion or f"The discussion failed: {reason}"
        _status_changed(room)
    return room
