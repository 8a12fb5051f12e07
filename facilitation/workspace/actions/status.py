"""A workspace's status changes: the one write every change of status makes, and the pauses a
workspace takes on its own: when nobody tends it, and when its budget is used up (the seat whose
call would go over it writes nothing but that, ``facilitation.workspace.steps``).

Rounds end by themselves (``turnPolicy``), so a workspace that nobody looks after would go on
calling its agents' models round after round. At the end of a round that ended by itself, a
workspace in which no person has acted for ``CONVENE["WORKSPACE_IDLE_PAUSE"]`` seconds (default
an hour; 0: never) pauses itself: the ended round still gets its narrative, then nothing runs
until somebody resumes it. Acting is anything a person does in the room that leaves an
invocation with their name (starting or resuming it, publishing, editing a narrative, a task, a
persona swap, ending a round).
"""
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from facilitation.workspace.audit import log_invocation
from rooms.events import EventType, record_event
from rooms.models import Invocation, Room
from rooms.payloads import status_payload

IDLE = "idle"
BUDGET = "budget"


def status_changed(room: Room, user, component: str, before: str, correlation: str) -> None:
    """Save ``room``'s new status (and the dates and reason that go with it), tell the browsers, and keep
    the change in the log. The caller holds the room's lock. Only these fields are written: usage
    added in the same transaction (``rooms.usage.add_usage``, an UPDATE) is not in ``room``."""
    room.save(update_fields=["status", "pause_reason", "started_at", "ended_at", "updated_at"])
    record_event(room, EventType.STATUS, status_payload(room))
    log_invocation(room, component, correlation=correlation, user=user, input={"from": before, "to": room.status},
                   output=room.status)


def last_acted(room: Room) -> datetime | None:
    """When a person last did something in the room (its start, when nobody is on record)."""
    acted = (Invocation.objects.filter(room=room, user__isnull=False).order_by("-id")
             .values_list("created_at", flat=True).first())
    return acted or room.started_at


def pause_if_idle(room: Room, correlation: str, now: datetime | None = None) -> bool:
    """Pause an active workspace nobody has acted in for the idle limit; True when it paused.
    The caller holds the room's lock."""
    limit = settings.CONVENE["WORKSPACE_IDLE_PAUSE"]
    if not limit or room.status != Room.Status.ACTIVE:
        return False
    acted = last_acted(room)
    if acted is None or ((now or timezone.now()) - acted).total_seconds() < limit:
        return False
    return pause_itself(room, IDLE, correlation)


def pause_itself(room: Room, reason: str, correlation: str) -> bool:
    """Pause an active workspace for ``reason`` (``IDLE``, ``BUDGET``), logged as ``room.<reason>_pause``
    without a user; False when it is not active. The caller holds the room's lock."""
    if room.status != Room.Status.ACTIVE:
        return False
    room.status, room.pause_reason = Room.Status.PAUSED, reason
    status_changed(room, None, f"room.{reason}_pause", Room.Status.ACTIVE, correlation)
    return True
