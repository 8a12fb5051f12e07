"""Committing a step's outcome: the exactly-once heart of the engine.

The lease is taken by ``facilitation.runs.leases.claim_step``; the model is called
outside any transaction. ``commit_*`` writes the outcome only if the lease is
still ours, so a redelivered, duplicated or abandoned step never writes twice.
"""
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from facilitation.actions import phases
from facilitation.engine import Decision, EngineState, after_decision, after_synthesis, after_turn, force_synthesis
from facilitation.runs.leases import Claim, locked_if_ours
from facilitation.runs.scheduling import schedule_step
from rooms.actions.deliveries import queue_relay
from rooms.events import EventType, build, next_seq, record_event
from rooms.models import Agent, Invocation, Observation, Room, Seat, Turn


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
        # Locked so a concurrent delete cannot slip in between; a deleted room has nothing to account to.
        if not list(Room.objects.select_for_update().filter(pk=claim.room_id).values_list("pk", flat=True)):
            return
        _record_call(None, claim.room_id, call, claim.correlation)


def _finish_step(room: Room, state: EngineState, claim: Claim, call: CallRecord | None) -> None:
    if call is not None:
        _record_call(room, room.pk, call, claim.correlation)
    room.engine_state = state.dump()
    room.round = state.round
    if state.phase == "done":
        room.status = Room.Status.CONCLUDED
        room.ended_at = timezone.now()
    room.save(update_fields=["engine_state", "round", "status", "ended_at", "conclusion", "seq", "tokens_used",
                             "cost_usd", "updated_at"])
    if room.status == Room.Status.ACTIVE:
        # A discussion step has one slot; ``locked_if_ours`` opened the next one.
        schedule_step(room.pk, claim.step_seq + 1)


def commit_decision(claim: Claim, decision: Decision, call: CallRecord | None, facilitator_seat_id: int | None,
                    facilitator_name: str, provider: str) -> bool:
    with transaction.atomic():
        room = locked_if_ours(claim)
        if room is None:
            return False
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        if decision.decision == "continue" and state.phase == "evaluation" and phases.concludes(room):
            # A person's vote reached consensus in the last phase since the latest turn: the room concludes.
            decision = Decision("synthesize", None, "", decision.reasoning, fallback=decision.fallback,
                                progress=decision.progress, corrections=list(decision.corrections) + [{
                                    "rule": "consensus",
                                    "reason": "Consensus was reached in the last phase; the discussion concludes."}])
        seq = next_seq(room, persist=False)
        obs = Observation.objects.create(
            room=room, seq=seq, round=state.round, seat_id=facilitator_seat_id, author_name=facilitator_name,
            author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.DECISION,
            content=decision.question or decision.reasoning, data=decision.as_payload(), provider=provider,
            tokens=call.tokens if call else 0,
        )
        state = after_decision(state, decision)
        if any(c.get("rule") == "consensus" for c in decision.corrections):
            state.synthesisReason = "consensus"
        record_event(room, EventType.MODERATOR, build.moderator(obs, decision.as_payload(), state.round), seq=seq)
        queue_relay(room, obs)  # to linked chats, if any
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
                provider: str, data: dict | None = None) -> bool:
    """Write a participant's turn. ``data`` is kept on it (``{"pass": true}`` for a pass)."""
    with transaction.atomic():
        room = locked_if_ours(claim)
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
            provider=provider, tokens=call.tokens if call else 0, data=data or {},
        )
        obs.save(force_insert=True)
        if call is not None and call.tokens:
            Seat.objects.filter(pk=seat_id).update(tokens_used=F("tokens_used") + call.tokens, cost_usd=F("cost_usd") + call.cost_usd)
        record_event(room, EventType.TURN, build.turn(obs, role=speaker.role), seq=seq)
        if phases.after_turn(room) == "conclude":  # consensus in the last phase ends the discussion
            state = force_synthesis(state, "consensus")
        room.round = state.round
        record_event(room, EventType.STATUS, build.status(room), persist_seq=False)
        queue_relay(room, obs)  # to linked chats, if any
        _finish_step(room, state, claim, call)
    return True


def commit_synthesis(claim: Claim, text: str, reason: str, call: CallRecord | None, facilitator_seat_id: int | None,
                     facilitator_name: str, provider: str, data: dict | None = None) -> bool:
    with transaction.atomic():
        room = locked_if_ours(claim)
        if room is None:
            return False
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        seq = next_seq(room, persist=False)
        obs = Observation.objects.create(
            room=room, seq=seq, round=state.round, seat_id=facilitator_seat_id, author_name=facilitator_name,
            author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.SYNTHESIS, content=text,
            data={"reason": reason, **(data or {})}, provider=provider, tokens=call.tokens if call else 0,
        )
        room.conclusion = text
        state = after_synthesis(state)
        room.status = Room.Status.CONCLUDED
        record_event(room, EventType.CONCLUDED, build.concluded(room, obs), seq=seq)
        record_event(room, EventType.STATUS, build.status(room), persist_seq=False)
        queue_relay(room, obs)  # to linked chats, if any
        _finish_step(room, state, claim, call)
    return True
