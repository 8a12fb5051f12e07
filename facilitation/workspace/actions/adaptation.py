"""Persona adaptations: created per (agent, persona, room), learned each round, tuned by the manager.

The version is an optimistic lock: the worker re-reads and retries when someone else wrote
first; the API answers 409 with the current row.
"""
from django.db import IntegrityError, transaction
from django.db.models import Count, Q

from facilitation.workspace import inputs
from facilitation.workspace.adaptation import RoundSignals, change_ratio, learn
from facilitation.workspace.audit import log_invocation
from facilitation.workspace.payloads import adaptation_payload
from facilitation.workspace.rules import correlation_of, locked, require_open
from rooms.errors import NotFound, StateConflict
from rooms.events import EventType, record_event
from rooms.models import Narrative, Observation, PersonaAdaptation, Room, Seat, TaskAssignment

EVENT = EventType.ADAPTATION


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
RETRIES = 8


def adaptation_for(room: Room, seat: Seat) -> PersonaAdaptation:
    """The row of the seat's agent with the persona it wears now (created on first use)."""
    persona_id = seat.persona_in_use_id
    row = PersonaAdaptation.objects.filter(room=room, agent_id=seat.agent_id, persona_id=persona_id).first()
    if row is not None:
        return row
    try:
        with transaction.atomic():
            return PersonaAdaptation.objects.create(room=room, agent_id=seat.agent_id, persona_id=persona_id)
    except IntegrityError:  # created concurrently
        return PersonaAdaptation.objects.get(room=room, agent_id=seat.agent_id, persona_id=persona_id)


def signals_for(room: Room, number: int, seat: Seat) -> RoundSignals:
    previous = Narrative.objects.filter(room=room, round=number - 1).first() if number > 1 else None
    change = change_ratio(previous.generated_content, previous.content) if previous and previous.edited_at else None
    rows = (Observation.objects.filter(room=room, round=number, seat=seat).exclude(event_type="")
            .values("event_type").annotate(n=Count("id"), replies=Count("id", filter=Q(responding_to__isnull=False))))
    types = {r["event_type"]: r["n"] for r in rows}
    turn = room.turns.filter(number=number).first()
    done = TaskAssignment.objects.filter(room=room, claimed_by=seat, status=TaskAssignment.Status.COMPLETED)
    if turn is not None:
        done = done.filter(completed_at__gte=turn.started_at)
        if turn.ended_at:
            done = done.filter(completed_at__lte=turn.ended_at)
    return RoundSignals(narrative_change=change, tasks_completed=done.count(), types=types,
                        replies=sum(r["replies"] for r in rows))


def learn_round(room: Room, number: int, seat: Seat, persona_id: int | None, correlation: str) -> PersonaAdaptation | None:
    """Fold one round's signals into the adaptation the seat wore; retry on a concurrent update."""
    signals = signals_for(room, number, seat)
    row = PersonaAdaptation.objects.filter(room=room, agent_id=seat.agent_id, persona_id=persona_id).first()
    if row is None:
        try:
            with transaction.atomic():
                row = PersonaAdaptation.objects.create(room=room, agent_id=seat.agent_id, persona_id=persona_id)
        except IntegrityError:
            row = PersonaAdaptation.objects.get(room=room, agent_id=seat.agent_id, persona_id=persona_id)
    for _ in range(RETRIES):
        if row.last_round >= number:
            return row  # this round was already learned (a redelivered task)
        thresholds, counts = learn(row.learned_thresholds, row.observation_counts, signals)
        with transaction.atomic():
            # The room's row lock orders this event's seq after whatever the manager or the agents
            # recorded since ``room`` was read.
            locked_room = locked(room)
            updated = PersonaAdaptation.objects.filter(pk=row.pk, version=row.version).update(
                learned_thresholds=thresholds, observation_counts=counts, rounds_learned=row.rounds_learned + 1,
                last_round=number, version=row.version + 1)
            if updated:
                row.refresh_from_db()
                log_invocation(locked_room, "adaptation.learn", correlation=correlation, agent_id=seat.agent_id,
                               input={"round": number, "personaId": persona_id, "signals": signals.__dict__},
                               output=str(thresholds))
                record_event(locked_room, EVENT, {"adaptation": adaptation_payload(row)})
                return row
        row.refresh_from_db()
    return None


def do_tune_adaptation(room: Room, adaptation_id: int, user, *, learned_thresholds=None, version=None, **unknown) -> PersonaAdaptation:
    """The manager sets thresholds by hand; a stale version is 409."""
    with transaction.atomic():
        room = locked(room)
        require_open(room)
        row = PersonaAdaptation.objects.select_for_update().filter(pk=adaptation_id, room=room).first()
        if row is None:
            raise NotFound("No such adaptation in this room.")
        errors = inputs.Errors()
        for key in sorted(unknown):
            errors.add(key, "Unknown or read-only field.")
        clean_version = inputs.version(version, errors)
        if not isinstance(learned_thresholds, dict) or not learned_thresholds or len(learned_thresholds) > 20 or not all(
                isinstance(k, str) and len(k) <= 40 and not isinstance(v, bool) and isinstance(v, (int, float)) and 0 <= v <= 1
                for k, v in learned_thresholds.items()):
            errors.add("learnedThresholds", "An object of at most 20 names, each with a number from 0 to 1.")
        errors.raise_if_any("The adaptation is not valid.")
        if clean_version != row.version:
            raise StateConflict("The adaptation changed meanwhile.", {"yourVersion": clean_version,
                                                                     "current": adaptation_payload(row)}, code="stale_version")
        before = dict(row.learned_thresholds)
        # The API's parser turned the names to snake_case; thresholds are named in camelCase.
        row.learned_thresholds = {**before, **{_camel(k): float(v) for k, v in learned_thresholds.items()}}
        row.version += 1
        row.save(update_fields=["learned_thresholds", "version", "updated_at"])
        record_event(room, EVENT, {"adaptation": adaptation_payload(row)})
        log_invocation(room, "manager.tune_adaptation", correlation=correlation_of(room), user=user,
                       input={"adaptationId": row.pk, "before": before, "after": row.learned_thresholds}, output="")
    return row
