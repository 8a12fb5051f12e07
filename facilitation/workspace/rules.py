"""The room-level rules every workspace write checks, and correlation ids."""
import uuid

from rooms.audit import current_correlation_id
from rooms.errors import StateConflict
from rooms.models import Room, Seat, Turn

S = Room.Status
CLOSED = (S.COMPLETED, S.ARCHIVED)
RUNNING = (S.ACTIVE, S.PAUSED)
# Roles (by key) no workspace agent seat works in (``Seat.NOT_WORK_ROLES``). Their names are those of seat roles
# (``Seat.role``), which only the room's creation sets; a work role that says otherwise would only contradict it.
# Neither creation nor a swap accepts them; the desk offers neither (workspace.js NOT_WORK_ROLES).
NOT_WORK_ROLES = Seat.NOT_WORK_ROLES


def locked(room_or_id) -> Room:
    pk = room_or_id.pk if isinstance(room_or_id, Room) else room_or_id
    return Room.objects.select_for_update().get(pk=pk)


def require_workspace(room: Room) -> None:
    if room.kind != Room.Kind.WORKSPACE:
        raise StateConflict("This is only for workspace rooms.", {"kind": room.kind}, code="not_workspace")


def require_open(room: Room) -> None:
    """A completed or archived workspace is read-only."""
    require_workspace(room)
    if room.status in CLOSED:
        raise StateConflict(f"This workspace is {room.status}: it is read-only.", {"status": room.status}, code="room_closed")


def require_status(room: Room, allowed: tuple, what: str) -> None:
    require_open(room)
    if room.status not in allowed:
        raise StateConflict(f"Cannot {what} while the workspace is {room.status}.", {"status": room.status},
                            code="invalid_transition")


def new_correlation(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def current_turn(room: Room) -> Turn | None:
    if room.round <= 0:
        return None
    return Turn.objects.filter(room=room, number=room.round).first()


def correlation_of(room: Room) -> str:
    """The chain a manager action joins: the current round's correlation id; before round 1 the enclosing
    ``rooms.audit.correlation()`` block's (one request's rows), else a fresh one."""
    turn = current_turn(room)
    if turn is not None and turn.correlation_id:
        return turn.correlation_id
    return current_correlation_id() or new_correlation(f"ws{room.pk}")
