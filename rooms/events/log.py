"""The room event log and sequence.

Every state change an action makes is recorded as a ``RoomEvent`` with the room's
next ``seq``, in the action's transaction, and pushed to browsers only after that
transaction commits. A reconnecting client asks for everything after its last seq.

Inside ``written_together()`` the events recorded are stored in one INSERT when the block ends
(a step's commit records two or three; nothing in the block reads them back from the table).
"""
import contextlib
import threading

from django.db import transaction
from django.utils import timezone

from rooms import realtime, rows
from rooms.events.build import delivery_for_the_room
from rooms.events.types import EventType, as_event_type
from rooms.models import Room, RoomEvent

_pending = threading.local()


@contextlib.contextmanager
def written_together():
    """Store the events recorded inside the block in one INSERT at its end (the caller's transaction
    still open); an exception inside stores none of them."""
    outer = getattr(_pending, "events", None)
    events: list[RoomEvent] = []
    _pending.events = events
    try:
        yield
    finally:
        _pending.events = outer
    if outer is not None:
        outer.extend(events)
    elif events:
        rows.insert_all(events)


def next_seq(room: Room, persist: bool = True) -> int:
    """Take the room's next sequence number. The caller holds the room's row lock.

    With ``persist=False`` the caller saves ``room.seq`` itself before its transaction ends
    (the engine's commit does, with the rest of the room, in one UPDATE).
    """
    seq = room.seq + 1
    if persist:
        Room.objects.filter(pk=room.pk).update(seq=seq)
    room.seq = seq
    return seq


def record_event(room: Room, event_type: EventType | str, data: dict, seq: int | None = None,
                 persist_seq: bool = True) -> RoomEvent:
    """Store an event (taking a seq unless one is given) and push it on commit.

    ``event_type`` is an ``EventType`` (its string value is accepted too); ``data`` comes from
    the matching builder in ``rooms.events.build``. Direct events are not logged: refused here.
    """
    event_type = as_event_type(event_type)
    if not event_type.logged:
        raise ValueError(f"{event_type} is sent to connections directly, not logged")
    event_type = event_type.value
    if seq is None:
        seq = next_seq(room, persist=persist_seq)
    ts = timezone.now()
    payload = {"discussionId": room.pk, "seq": seq, "ts": ts.isoformat(), **data}
    event = rows.new(RoomEvent, room_id=room.pk, seq=seq, type=event_type, payload=payload)
    pending = getattr(_pending, "events", None)
    if pending is None:
        rows.insert(event)
    else:
        pending.append(event)
    transaction.on_commit(lambda: realtime.push(event_type, payload, room.pk))
    return event


def event_message(event: RoomEvent) -> dict:
    """An event as replayed to a client: the pushed payload plus its type. A ``discussion:delivery`` stored when
    the event still named its recipient is replayed as the event reads now (``build.delivery``)."""
    payload = event.payload
    if event.type == EventType.DELIVERY.value and isinstance(payload.get("delivery"), dict):
        payload = {**payload, "delivery": delivery_for_the_room(payload["delivery"])}
    return {"type": event.type, **payload}


def events_after(room_id: int, after_seq: int, limit: int = 1000) -> list[dict]:
    found = RoomEvent.objects.filter(room_id=room_id, seq__gt=after_seq).order_by("seq")[:limit]
    return [event_message(e) for e in found]
