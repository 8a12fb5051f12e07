"""The JSON shapes of rooms, turns and statuses, shared by events, REST and exports."""
from rooms.models import Observation, Room, Seat


def speaker_payload(obs: Observation) -> dict:
    seat: Seat | None = obs.seat
    return {
        "id": obs.seat_id,
        "name": obs.author_name,
        "kind": obs.author_kind,
        "role": seat.role if seat is not None else ("facilitator" if obs.author_kind == "facilitator" else "system"),
    }


def turn_payload(obs: Observation) -> dict:
    return {
        "id": obs.pk,
        "seq": obs.seq,
        "round": obs.round,
        "kind": obs.kind,
        "speaker": speaker_payload(obs),
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
