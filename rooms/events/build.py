"""The data of each event, built from the rows it describes (``record_event`` adds the envelope).

Actions call these instead of spelling payloads inline, so every event of a type has one
shape (``schemas.py``): ``record_event(room, EventType.STATUS, build.status(room))``.
"""
from rooms.chat_shapes import delivery_shape, link_shape
from rooms.models import Observation, Room
from rooms.payloads import status_payload, turn_payload


def status(room: Room) -> dict:
    """``discussion:status``: the room's status and round on every lifecycle change."""
    return status_payload(room)


def turn(obs: Observation, role: str | None = None) -> dict:
    """``discussion:turn``: a contribution (``role`` saves a seat lookup when the caller knows it)."""
    return {"turn": turn_payload(obs, role=role)}


def turn_updated(obs: Observation, change: str) -> dict:
    """``discussion:turn_updated``: a person's turn as it reads now, after its chat message was ``edited``,
    ``deleted`` or ``restored`` (the turn keeps its id and seq; the event has a seq of its own)."""
    return {"turn": turn_payload(obs, role="participant"), "change": change}


def moderator(obs: Observation, decision: dict, round: int) -> dict:
    """``discussion:moderator``: a facilitator decision and the turn that records it."""
    return {"decision": decision, "round": round, "turn": turn_payload(obs)}


def concluded(room: Room, obs: Observation) -> dict:
    """``discussion:concluded``: the synthesis."""
    return {"conclusion": room.conclusion, "status": room.status, "turn": turn_payload(obs)}


def phase(name: str, votes: list[dict]) -> dict:
    """``discussion:phase``: the phase entered and the votes that carried it (``[{seatId, name, value, seq}]``)."""
    return {"phase": name, "votes": votes}


def observation(shape: dict) -> dict:
    """``discussion:observation``: a typed observation, as its REST resource renders it."""
    return {"observation": shape}


def round_changed(number: int, state: str) -> dict:
    """``discussion:round``: a workspace round ``started`` or ``ended``."""
    return {"round": number, "state": state}


def narrative(shape: dict) -> dict:
    """``discussion:narrative``: a round's narrative, generated or edited."""
    return {"narrative": shape}


def task(shape: dict) -> dict:
    """``discussion:task``: a task created or changed."""
    return {"task": shape}


def artifact(shape: dict) -> dict:
    """``discussion:artifact``: the outcome a facilitation run builds."""
    return {"artifact": shape}


def revoked(room_id: int) -> dict:
    """``discussion:revoked`` (direct, not logged): this connection no longer receives the room."""
    return {"discussionId": room_id}


def access(room_id: int, access: str) -> dict:
    """``discussion:access`` (direct, not logged): this connection's person now has ``access`` to the room."""
    return {"discussionId": room_id, "access": access}


def session_revoked(reason: str) -> dict:
    """``session:revoked`` (direct, not logged): the connection's credential was withdrawn."""
    return {"reason": reason}


#: What a ``discussion:delivery`` event tells everyone in the room, live and in a join's replay. Who a message
#: went to (``principal``, ``recipient``) and why it did not arrive (``diagnostic``, which names people and their
#: chat accounts) are for the owner and staff: ``GET /api/discussions/{id}/deliveries``.
DELIVERY_EVENT_FIELDS = ("id", "kind", "platform", "status", "state", "attempts", "chatId", "sourceSeq", "createdAt",
                         "sentAt")


def delivery_for_the_room(shape: dict) -> dict:
    """A delivery's shape cut to ``DELIVERY_EVENT_FIELDS`` (also for events stored before it was)."""
    return {key: shape[key] for key in DELIVERY_EVENT_FIELDS if key in shape}


def delivery(row) -> dict:
    """``discussion:delivery``: a message to a chat or a person, as its state changes (``DELIVERY_EVENT_FIELDS``)."""
    return {"delivery": delivery_for_the_room(delivery_shape(row))}


def link(row, state: str) -> dict:
    """``discussion:link``: a chat linked to the room, or unlinked."""
    return {"link": link_shape(row), "state": state}
