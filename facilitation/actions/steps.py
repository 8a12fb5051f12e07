"""Committing a step's outcome: the exactly-once heart of the engine.

The lease is taken by ``facilitation.runs.leases.claim_step``; the model is called
outside any transaction. ``commit_*`` writes the outcome only if the lease is
still ours, so a redelivered, duplicated or abandoned step never writes twice.
"""
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from facilitation import records
from facilitation.actions import phases
from facilitation.engine import (
    Decision, EngineState, after_decision, after_parallel, after_synthesis, after_turn, force_synthesis,
)
from facilitation.runs.leases import RUNNING, Claim, finish, hand_room, locked_if_ours, locked_room
from facilitation.runs.outages import rides_out
from facilitation.runs.scheduling import runs_next_here, schedule_step
from rooms import rows
from rooms.actions.deliveries import queue_relay
from rooms.events import EventType, build, next_seq, record_event, written_together
from rooms.models import Agent, Invocation, Observation, Room, Seat
from rooms.usage import add_usage


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
    rows.create(
        Invocation, room_id=room_id, agent_id=call.agent_id, component=call.component, provider=call.provider, model=call.model,
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
            add_usage(Room, room_id, call.tokens, call.cost_usd)
        add_usage(Agent, call.agent_id, call.tokens, call.cost_usd)


#: The reason a step gives when its commit found the lease gone.
LEASE_LOST = "lease lost"


@rides_out
def record_discarded_call(claim: Claim, call: CallRecord, reason: str, correlation: str = "") -> None:
    """A call whose result cannot be committed still cost something: keep its invocation, marked discarded,
    in the attempt's correlation, or in ``correlation`` when given (a workspace's calls join their round's).

    Unless the lease was lost to this very attempt's commit: a commit whose connection failed while it
    committed is tried again (``rides_out``) and finds the lease moved on, though the first try did
    commit, with this call's invocation. Only a commit writes a successful invocation of an attempt in
    the attempt's own correlation; a caller that correlates otherwise judges that case itself (a
    workspace seat's commit does, by the attempt its invocation names)."""
    call.success = False
    call.error = f"discarded: {reason}"
    with transaction.atomic():
        # Locked so a concurrent delete cannot slip in between; a deleted room has nothing to account to.
        if locked_room(claim.room_id) is None:
            return
        if reason == LEASE_LOST and Invocation.objects.filter(
                room_id=claim.room_id, correlation_id=claim.correlation, success=True).exists():
            return
        _record_call(None, claim.room_id, call, correlation or claim.correlation)


def _hand_on(room: Room) -> bool:
    """Does this thread run the room's next step itself (``leases.finish``)? Only while the room is active."""
    return room.status == Room.Status.ACTIVE and runs_next_here(room.pk)


def _relay(room: Room, obs: Observation) -> None:
    """To the chats linked to the room, if it ever had one (the locked room row says so)."""
    if room.chat_linked:
        queue_relay(room, obs)


#: The room's fields a step's commit sets (in one UPDATE); a step that ends the room also sets how it ended. The
#: room's status is indexed: naming it in every step's UPDATE would rewrite that index's page each time.
_COMMITTED = ("engine_state", "round", "seq", "tokens_used", "cost_usd", "updated_at")
_ENDED = _COMMITTED + ("status", "ended_at", "conclusion")


def _finish_step(room: Room, state: EngineState, claim: Claim, call: CallRecord | None, slots: int = 1) -> None:
    if call is not None:
        _record_call(room, room.pk, call, claim.correlation)
    room.engine_state = state.dump()
    room.round = state.round
    if state.phase == "done":
        room.status = Room.Status.CONCLUDED
        room.ended_at = timezone.now()
    rows.update(room, _ENDED if room.status == Room.Status.CONCLUDED else _COMMITTED)
    hand_room(room, claim.step_seq + 1)
    if room.status == Room.Status.ACTIVE:
        # The step's last slot is done, so the next step is open (``finish``): one slot, or one per parallel turn.
        schedule_step(room.pk, claim.step_seq + 1, slots)


@rides_out
def commit_decision(claim: Claim, decision: Decision, call: CallRecord | None, facilitator_seat_id: int | None,
                    facilitator_name: str, provider: str, together: tuple = ()) -> bool:
    """Write a facilitator decision. ``together``: seats asked at once (the speaker first, at most the room's
    ``max_parallel``); with two or more, the next step is their turns in parallel, one slot each."""
    with transaction.atomic():
        room = locked_room(claim.room_id, seen=claim.seen)
        if room is None or room.status not in RUNNING:
            return False
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        if decision.decision == "continue" and state.phase == "evaluation" and phases.concludes(room):
            # A person's vote reached consensus in the last phase since the latest turn: the room concludes.
            decision = Decision("synthesize", None, "", decision.reasoning, fallback=decision.fallback,
                                progress=decision.progress, corrections=list(decision.corrections) + [{
                                    "rule": "consensus",
                                    "reason": "Consensus was reached in the last phase; the discussion concludes."}])
        together = list(together)[: min(room.max_parallel, state.rounds_left)] if decision.decision == "continue" else []
        if len(together) < 2 or together[0] != decision.next_participant_id:
            together = []
        if finish(claim, next_slots=len(together) or 1, hand_on=_hand_on(room)) is None:
            return False
        before = room.seq
        payload = decision.as_payload()
        if together:
            payload["together"] = together
        seq = next_seq(room, persist=False)
        obs = rows.create(
            Observation, room_id=room.pk, seq=seq, round=state.round, seat_id=facilitator_seat_id, author_name=facilitator_name,
            author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.DECISION,
            content=decision.question or decision.reasoning, data=payload, provider=provider,
            tokens=call.tokens if call else 0,
        )
        state = after_decision(state, decision, tuple(together))
        if any(c.get("rule") == "consensus" for c in decision.corrections):
            state.synthesisReason = "consensus"
        record_event(room, EventType.MODERATOR, build.moderator(obs, payload, state.round), seq=seq)
        _relay(room, obs)
        _finish_step(room, state, claim, call, slots=len(together) or 1)
        records.wrote(room, before, [records.row_of(obs)])
    return True


@dataclass(frozen=True)
class Speaker:
    """The seat a turn belongs to, as the runner already knows it."""

    seat_id: int
    name: str
    role: str
    is_agent: bool = True


def _write_turn(room: Room, round: int, speaker: Speaker, content: str, status: str, markers: list, provider: str,
                tokens: int, data: dict | None, written: list) -> bool:
    """One participant turn, its events and relays (the room locked; its record row added to ``written``);
    True when it concludes the last phase."""
    # A discussion's turn is its observation (its round says which): the Turn rows are a workspace's rounds.
    seq = next_seq(room, persist=False)
    obs = rows.new(
        Observation, room_id=room.pk, seq=seq, round=round, seat_id=speaker.seat_id, author_name=speaker.name,
        author_kind=Observation.AuthorKind.AGENT if speaker.is_agent else Observation.AuthorKind.HUMAN,
        kind=Observation.Kind.CONTRIBUTION, content=content, markers=markers, status=status,
        provider=provider, tokens=tokens, data=data or {},
    )
    rows.insert(obs)
    written.append(records.row_of(obs))
    record_event(room, EventType.TURN, build.turn(obs, role=speaker.role), seq=seq)
    concludes = phases.after_turn(room) == "conclude"  # consensus in the last phase ends the discussion
    _relay(room, obs)
    return concludes


def _charge_seat(seat_id: int, call: CallRecord | None) -> None:
    if call is not None and call.tokens:
        add_usage(Seat, seat_id, call.tokens, call.cost_usd)


@rides_out
def commit_turn(claim: Claim, speaker: Speaker, content: str, status: str, markers: list, call: CallRecord | None,
                provider: str, data: dict | None = None) -> bool:
    """Write a participant's turn. ``data`` is kept on it (``{"pass": true}`` for a pass)."""
    with transaction.atomic():
        room = locked_if_ours(claim, hand_on=_hand_on)
        if room is None:
            return False
        before, written = room.seq, []
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        state = after_turn(state, speaker.seat_id)
        _charge_seat(speaker.seat_id, call)
        with written_together():  # the turn's events (and a phase change's) in one INSERT
            if _write_turn(room, state.round, speaker, content, status, markers, provider, call.tokens if call else 0, data,
                           written):
                state = force_synthesis(state, "consensus")
            room.round = state.round
            record_event(room, EventType.STATUS, build.status(room), persist_seq=False)
        _finish_step(room, state, claim, call)
        records.wrote(room, before, written)
    return True


@rides_out
def commit_parallel_turn(claim: Claim, speaker: Speaker, content: str, status: str, markers: list,
                         call: CallRecord | None, provider: str, data: dict | None = None) -> bool:
    """One slot of a parallel step answered: its turn is kept on the room's engine state until every slot has
    answered; the last one writes them all, in the order the facilitator chose (slot order), then the
    evaluation follows. A slot commits only while its lease holds, so each turn is written exactly once,
    and a slot whose worker died is run again without touching the others."""
    with transaction.atomic():
        room = locked_room(claim.room_id)
        if room is None or room.status not in RUNNING:
            return False
        done = finish(claim)
        if done is None:
            return False
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        if call is not None:
            _record_call(room, room.pk, call, claim.correlation)
        _charge_seat(speaker.seat_id, call)
        state.staged[str(claim.slot)] = {
            "seatId": speaker.seat_id, "name": speaker.name, "role": speaker.role, "isAgent": speaker.is_agent,
            "content": content, "status": status, "markers": markers, "provider": provider,
            "tokens": call.tokens if call else 0, "data": data or {},
        }
        if done.next is None:  # others are still answering
            room.engine_state = state.dump()
            rows.update(room, ("engine_state", "tokens_used", "cost_usd", "updated_at"))
            return True
        staged = [state.staged[key] for key in sorted(state.staged, key=int)]
        concluded, before, written = False, room.seq, []
        with written_together():
            for number, entry in enumerate(staged, start=1):
                who = Speaker(entry["seatId"], entry["name"], entry["role"], entry["isAgent"])
                concluded = _write_turn(room, state.round + number, who, entry["content"], entry["status"], entry["markers"],
                                        entry["provider"], entry["tokens"], entry["data"], written) or concluded
            state = after_parallel(state, [entry["seatId"] for entry in staged])
            if concluded:
                state = force_synthesis(state, "consensus")
            room.round = state.round
            record_event(room, EventType.STATUS, build.status(room), persist_seq=False)
        _finish_step(room, state, claim, None)
        records.wrote(room, before, written)
    return True


@rides_out
def commit_synthesis(claim: Claim, text: str, reason: str, call: CallRecord | None, facilitator_seat_id: int | None,
                     facilitator_name: str, provider: str, data: dict | None = None) -> bool:
    with transaction.atomic():
        room = locked_if_ours(claim)
        if room is None:
            return False
        before = room.seq
        state = EngineState.load(room.engine_state, room.max_rounds, room.round)
        seq = next_seq(room, persist=False)
        obs = rows.create(
            Observation, room_id=room.pk, seq=seq, round=state.round, seat_id=facilitator_seat_id, author_name=facilitator_name,
            author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.SYNTHESIS, content=text,
            data={"reason": reason, **(data or {})}, provider=provider, tokens=call.tokens if call else 0,
        )
        room.conclusion = text
        state = after_synthesis(state)
        room.status = Room.Status.CONCLUDED
        with written_together():
            record_event(room, EventType.CONCLUDED, build.concluded(room, obs), seq=seq)
            record_event(room, EventType.STATUS, build.status(room), persist_seq=False)
        _relay(room, obs)
        _finish_step(room, state, claim, call)
        records.wrote(room, before, [records.row_of(obs)])
    return True
