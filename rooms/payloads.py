"""The JSON shapes of rooms, turns and statuses, shared by events, REST and exports."""
from rooms.models import Observation, Room, Seat


def speaker_payload(obs: Observation, role: str | None = None) -> dict:
    """Who spoke. ``role`` saves a seat lookup when the caller knows it."""
    if role is None:
        if obs.author_kind == Observation.AuthorKind.FACILITATOR:
            role = Seat.Role.FACILITATOR
        else:
            seat: Seat | None = obs.seat
            role = seat.role if seat is not None else "system"
    return {"id": obs.seat_id, "name": obs.author_name, "kind": obs.author_kind, "role": role}


def turn_payload(obs: Observation, role: str | None = None) -> dict:
    return {
        "id": obs.pk,
        "seq": obs.seq,
        "round": obs.round,
        "kind": obs.kind,
        "speaker": speaker_payload(obs, role),
        "content": obs.content,
        "markers": obs.markers,
        "status": obs.status,
        "provider": obs.provider,
        "rehearsal": obs.provider == "rehearsal",
        "tokens": obs.tokens,
        "data": obs.data,
        "createdAt": obs.created_at.isoformat() if obs.created_at else None,
    }


def status_payload(room: Room) -> dict:
    return {"status": room.status, "round": room.round, "maxRounds": room.max_rounds}
