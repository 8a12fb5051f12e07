"""The facilitator (or the system) saying something to everyone in a room: the browser sees a
turn, every linked chat gets the message."""
from django.db import transaction

from rooms.actions.deliveries import queue_relay
from rooms.audit import new_correlation_id, record
from rooms.errors import StateConflict
from rooms.events import EventType, build, next_seq, record_event
from rooms.models import Observation, Room


def do_announce(room_or_id, text: str, *, author: str | None = None, author_kind: str = Observation.AuthorKind.FACILITATOR,
                data: dict | None = None, correlation_id: str | None = None) -> Observation:
    """Record ``text`` as a message turn in the room and relay it to the linked chats."""
    correlation = correlation_id or new_correlation_id()
    with transaction.atomic():
        pk = getattr(room_or_id, "pk", room_or_id)
        room = Room.objects.select_for_update(of=("self",)).select_related("moderator").get(pk=pk)
        if room.is_terminal:
            raise StateConflict(f"The discussion is {room.status}.", {"status": room.status})
        name = author or (room.moderator.name if room.moderator_id else "Facilitator")
        seq = next_seq(room)
        obs = Observation.objects.create(room=room, seq=seq, round=room.round, author_name=name[:200], author_kind=author_kind,
                                         kind=Observation.Kind.MESSAGE, content=text, data=data or {})
        role = "facilitator" if author_kind == Observation.AuthorKind.FACILITATOR else "system"
        record_event(room, EventType.TURN, build.turn(obs, role=role), seq=seq)
        record("room.announce", room=room, correlation_id=correlation, data={"seq": seq}, output=text[:500])
        queue_relay(room, obs, correlation_id=correlation)
    return obs
