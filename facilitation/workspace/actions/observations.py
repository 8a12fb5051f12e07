"""Typed observations: published by agents (from the workers) or posted by people."""
from django.db import transaction
from django.db.models import F

from facilitation.workspace import inputs
from facilitation.workspace.audit import log_invocation
from facilitation.workspace.payloads import observation_payload
from facilitation.workspace.rules import RUNNING, current_turn, locked, require_status
from rooms.errors import StateConflict
from rooms.events import EventType, next_seq, record_event
from rooms.models import Observation, Room, Seat, Turn

EVENT = EventType.OBSERVATION


def check_observation(room_id: int, *, event_type, content, responding_to_id=None, confidence=None,
                      errors: inputs.Errors | None = None) -> dict:
    """Validate one observation; returns the clean values or raises ``ValidationFailed``."""
    own = errors is None
    errors = errors if errors is not None else inputs.Errors()
    clean = {
        "event_type": inputs.event_type(event_type, errors),
        "content": inputs.text(content, "content", errors, limit=inputs.COMMENT),
        "confidence": inputs.confidence(confidence, errors),
        "responding_to_id": inputs.optional_id(responding_to_id, "respondingToId", errors),
    }
    rid = clean["responding_to_id"]
    if rid is not None and not Observation.objects.filter(pk=rid, room_id=room_id).exclude(event_type="").exists():
        errors.add("respondingToId", "No observation with that id in this room.")
    if own:
        errors.raise_if_any("The observation is not valid.")
    return clean


def write_observation(room: Room, turn: Turn, *, event_type: str, content: str, responding_to_id: int | None,
                      confidence: float | None, seat: Seat | None, author_name: str, author_kind: str,
                      provider: str = "", tokens: int = 0) -> Observation:
    """Store a checked observation in the current round. The caller holds the room's lock."""
    seq = next_seq(room)
    obs = Observation.objects.create(
        room=room, seq=seq, turn=turn, round=turn.number, seat=seat, author_name=author_name, author_kind=author_kind,
        kind=Observation.Kind.CONTRIBUTION, event_type=event_type, content=content, responding_to_id=responding_to_id,
        confidence=confidence, provider=provider, tokens=tokens,
    )
    Turn.objects.filter(pk=turn.pk).update(event_count=F("event_count") + 1)
    turn.event_count += 1
    record_event(room, EVENT, {"observation": observation_payload(obs)}, seq=seq)
    return obs


def do_post_observation(room: Room, user, *, event_type, content, responding_to_id=None, confidence=None,
                        manager: bool = False) -> Observation:
    """A person publishes an observation in the current round."""
    from facilitation.workspace.actions.rounds import end_round_if_due

    with transaction.atomic():
        room = locked(room)
        require_status(room, RUNNING, "publish observations")
        clean = check_observation(room.pk, event_type=event_type, content=content, responding_to_id=responding_to_id,
                                  confidence=confidence)
        turn = current_turn(room)
        if turn is None or turn.ended_at is not None:
            raise StateConflict("No round is open.", code="no_open_round")
        seat = Seat.objects.filter(room=room, user=user).first()
        obs = write_observation(room, turn, seat=seat, author_name=user.get_username(),
                                author_kind=Observation.AuthorKind.HUMAN, **clean)
        log_invocation(room, "manager.publish_observation" if manager else "person.publish_observation",
                       correlation=turn.correlation_id, user=user,
                       input={"type": clean["event_type"], "respondingToId": clean["responding_to_id"],
                              "confidence": clean["confidence"]},
                       output=f"observation {obs.pk}")
        end_round_if_due(room, turn)
    return obs
