"""Claiming a step and committing its outcome: the exactly-once heart of the engine.

``claim_step`` takes a lease with one conditional UPDATE. The model is called
outside any transaction. ``commit_*`` writes the outcome only if the lease is
still ours, so a redelivered, duplicated or abandoned step never writes twice.
"""
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from facilitation.engine import Decision, EngineState, after_decision, after_synthesis, after_turn
from facilitation.scheduling import schedule_step
from rooms.events import next_seq, record_event
from rooms.models import Agent, Invocation, Observation, Room, Seat, Turn
from rooms.payloads import status_payload, turn_payload


@dataclass(frozen=True)
class Claim:
    room_id: int
    step_seq: int
    token: str
    attempt: int


@dataclass
class CallRecord:
    """One model call, as written to the Invocation row."""

    component: str
    agent_id: int | None = None
    provider: str = ""
    model: str = ""
    input: dict = field(default_factory=dict)
    output: str = ""
    success: bool = True
    error: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_ms: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens


def claim_step(room_id: int, step_seq: int, lease_seconds: float) -> tuple[Claim, Room] | None:
    """Take the lease on a room's step; returns the claim and the room as claimed, or None."""
    now = timezone.now()
    token = uuid.uuid4().hex
    claimed = (
        Room.objects.filter(pk=room_id, step_seq=step_seq, status=Room.Status.ACTIVE)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(lease_token=token, lease_until=now + timedelta(seconds=lease_seconds), step_attempt=F("step_attempt") + 1)
    )
    if not claimed:
        return None
    room = Room.objects.filter(pk=room_id).first()
    if room is None or room.lease_token != token:
        return None
    return Claim(room_id=room_id, step_seq=step_seq, token=token, attempt=room.step_attempt), room


def release_claim(claim: Claim) -> None:
    """Give the lease back without committing (a transient failure to retry)."""
    Room.objects.filter(pk=claim.room_id, step_seq=claim.step_seq, lease_token=claim.token).update(lease_token="", lease_until=None)


def still_ours(claim: Claim) -> bool:
    """The lease holds: no stop or forced conclusion took the step away (a pause lets it finish)."""
    return Room.objects.filter(pk=claim.room_id, step_seq=claim.step_seq, lease_token=claim.token,
                               status__in=(Room.Status.ACTIVE, Room.Status.PAUSED)).exists()


def _locked_if_ours(claim: Claim) -> Room | None:
    room = Room.objects.select_for_update().filter(pk=claim.room_id).first()
    if room is None or room.step_seq != claim.step_seq or room.lease_token != claim.token:
        return None
    if room.status not in (Room.Status.ACTIVE, Room.Status.PAUSED):
        return None
    return room


def _record_call(room: Room | None, room_id: int, call: CallRecord, correlation: str) -> None:
    """Write the Invocation and add its usage to the agent and the room.

    With a locked ``room`` the room's counters are added in memory and saved by the caller.
    """
    Invocation.objects.create(
        room_id=room_id, agent_id=call.agent_id, component=call.component, provider=call.provider, model=call.model,
        input=call.input, output=call.output, success=call.success, error=call.error[:2000],
        input_tokens=call.input_tokens, output_tokens=call.output_tokens, cache_read_tokens=call.cache_read_tokens,
        cache_write_tokens=call.cache_write_tokens, cost_usd=call.cost_usd, latency_ms=call.latency_ms,
        correlation_id=correlation,
    )
    if call.tokens or call.cost_usd:
        if room is not None:
            room.tokens_used += call.tokens
            room.cost_usd += call.cost_usd
        else:
            Room.objects.filter(pk=room_id).update(tokens_used=F("tokens_used") + call.tokens, cost_usd=F("cost_usd") + call.cost_usd)
        if call.agent_id:
            Agent.objects.filter(pk=call.agent_id).update(tokens_used=F("tokens_used") + call.tokens, cost_usd=F("cost_usd") + call.cost_usd)


def record_discarded_call(claim: Claim, call: CallRecord, reason: str) -> None:
    """A call whose result cannot be committed still cost something: keep its invocation."""
    call.success = False
    call.error = f"discarded: {reason}"
    with transaction.atomic():
        _record_call(None, claim.room_id, call, f"{claim.room_id}:{claim.step_seq}:{claim.attempt}")


def _finish_step(room: Room, state: EngineState, claim: Claim, call: CallRecord | None) -> None:
    if call is not None:
        _record_call(room, room.pk, call, f"{room.pk}:{claim.step_seq}:{claim.attempt}")
    room.engine_state = state.dump()
    room.round = state.round
    room.step_seq += 1
    room.step_attempt = 0
    room.lease_token = ""
    room.lease_until = None
    room.step_ready_at = timezone.now()
    if state.phase == "done":
        room.status = Room.Status.CONCLUDED
        room.ended_at = timezone.now()
    room.save(update_fields=["engine_state", "round", "step_seq", "step_attempt", "lease_token", "lease_until",
                             "step_ready_at", "status", "ended_at", "conclusion", "seq", "tokens_used", "cost_usd",
                             "updated_at"])
    if room.status == Room.Status.ACTIVE:
        schedule_step(room.pk, room.step_seq)


def commit_decision(claim: Claim, decision: Decision, call: CallRecord | None, facilitator_seat_id: int | None,
                    facilitator_name: str, provider: str) -> bool:
    with transaction.atomic():
        room = _locked_if_ours(claim)
        if room is None:
            return False
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        seq = next_seq(room, persist=False)
        obs = Observation.objects.create(
            room=room, seq=seq, round=state.round, seat_id=facilitator_seat_id, author_name=facilitator_name,
            author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.DECISION,
            content=decision.question or decision.reasoning, data=decision.as_payload(), provider=provider,
            tokens=call.tokens if call else 0,
        )
        state = after_decision(state, decision)
        record_event(room, "discussion:moderator", {"decision": decision.as_payload(), "round": state.round,
                                                    "turn": turn_payload(obs)}, seq=seq)
        _finish_step(room, state, claim, call)
    return True


@dataclass(frozen=True)
class Speaker:
    """The seat a turn belongs to, as the runner already knows it."""

    seat_id: int
    name: str
    role: str
    is_agent: bool = True


def commit_turn(claim: Claim, speaker: Speaker, content: str, status: str, markers: list, call: CallRecord | None,
                provider: str) -> bool:
    with transaction.atomic():
        room = _locked_if_ours(claim)
        if room is None:
            return False
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        seat_id = speaker.seat_id
        state = after_turn(state, seat_id)
        # The lease makes this the only writer of this round: no get_or_create needed.
        turn = Turn.objects.create(room=room, number=state.round, ended_at=timezone.now())
        seq = next_seq(room, persist=False)
        obs = Observation(
            room=room, seq=seq, turn=turn, round=state.round, seat_id=seat_id, author_name=speaker.name,
            author_kind=Observation.AuthorKind.AGENT if speaker.is_agent else Observation.AuthorKind.HUMAN,
            kind=Observation.Kind.CONTRIBUTION, content=content, markers=markers, status=status,
            provider=provider, tokens=call.tokens if call else 0,
        )
        obs.save(force_insert=True)
        if call is not None and call.tokens:
            Seat.objects.filter(pk=seat_id).update(tokens_used=F("tokens_used") + call.tokens, cost_usd=F("cost_usd") + call.cost_usd)
        record_event(room, "discussion:turn", {"turn": turn_payload(obs, role=speaker.role)}, seq=seq)
        room.round = state.round
        record_event(room, "discussion:status", status_payload(room), persist_seq=False)
        _finish_step(room, state, claim, call)
    return True


def commit_synthesis(claim: Claim, text: str, reason: str, call: CallRecord | None, facilitator_seat_id: int | None,
                     facilitator_name: str, provider: str) -> bool:
    with transaction.atomic():
        room = _locked_if_ours(claim)
        if room is None:
            return False
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        seq = next_seq(room, persist=False)
        obs = Observation.objects.create(
            room=room, seq=seq, round=state.round, seat_id=facilitator_seat_id, author_name=facilitator_name,
            author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.SYNTHESIS, content=text,
            data={"reason": reason}, provider=provider, tokens=call.tokens if call else 0,
        )
        room.conclusion = text
        state = after_synthesis(state)
        room.status = Room.Status.CONCLUDED
        record_event(room, "discussion:concluded", {"conclusion": text, "status": room.status, "turn": turn_payload(obs)}, seq=seq)
        record_event(room, "discussion:status", status_payload(room), persist_seq=False)
        _finish_step(room, state, claim, call)
    return True
