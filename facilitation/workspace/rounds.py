"""What the workers do in a workspace round, in three parts each: prepare, call, commit.

- An **agent seat's work**: load the seat's context (role, persona, adaptation, latest narrative,
  open blockers and questions, its tasks, what a search for its role finds), call its model outside
  any transaction, then commit in one transaction: its observations, its task steps and its
  invocations, only if its slot's lease still holds and the round is still open.
- A **round's close**: learn each agent's adaptation from the ended round (versioned, retried),
  have the moderator agent write the narrative, commit it once, and set the next round's agents
  to work with it in their context.

Each is one slot of the room's step (``facilitation.workspace.steps`` plans and runs them): the
call gives up as soon as the slot's lease is gone, and the commit ends the slot with
``leases.finish`` in its transaction, writing nothing when the lease is no longer ours. A second
run of the same slot cannot claim it; a seat's round is moreover written only if no commit of that
(round, seat) exists, and a round has one narrative (a unique constraint).
"""
import logging
from dataclasses import asdict, dataclass, field
from decimal import Decimal

from django.db import IntegrityError, transaction

from facilitation import budget
from facilitation.llm import LLMRequest, LLMResponse, TerminalLLMError, TransientLLMError, provider_for
from facilitation.runs import leases, scheduling
from facilitation.runs.calls import Abandoned, StepTimeout, call_model
from facilitation.runs.leases import Claim
from facilitation.runs.outages import rides_out
from facilitation.workspace import prompts
from facilitation.workspace.actions.adaptation import learn_round
from facilitation.workspace.actions.observations import write_observation
from facilitation.workspace.actions.rounds import closing_round, end_round_if_due, round_step_shape
from facilitation.workspace.actions.status import BUDGET, pause_itself
from facilitation.workspace.actions.tasks import advance_task
from facilitation.workspace.audit import log_invocation
from facilitation.workspace.context import AgentContext, agent_context, narrative_context
from facilitation.workspace.payloads import narrative_payload
from facilitation.workspace.rules import CLOSED
from rooms.errors import ActionError
from rooms.events import EventType, record_event
from rooms.models import Agent, Invocation, Narrative, Observation, Room, Seat, TaskAssignment, Turn
from rooms.usage import add_usage

log = logging.getLogger("convene.workspace")


@dataclass
class Called:
    response: LLMResponse | None
    status: str  # ok | timed_out | error
    error: str = ""
    transient: bool = False  # a rate limit, an overload, a dropped connection: worth another attempt

    @property
    def text(self) -> str:
        return self.response.text.strip() if self.response is not None else ""


@dataclass
class Usage:
    provider: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_ms: int = 0

    @classmethod
    def of(cls, called: Called, provider_name: str) -> "Usage":
        r = called.response
        if r is None:
            return cls(provider=provider_name)
        return cls(r.provider, r.model, r.input_tokens + r.cache_read_tokens + r.cache_write_tokens, r.output_tokens,
                   budget.cost_of(r), r.latency_ms)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def logged(self) -> dict:
        """The call's fields of its invocation (``log_invocation``): provider, model, tokens, cost and latency."""
        return asdict(self)


def _account(room: Room, agent_id: int | None, seat_id: int | None, usage: Usage) -> None:
    if not usage.tokens and not usage.cost_usd:
        return
    for model, pk in ((Room, room.pk), (Agent, agent_id), (Seat, seat_id)):
        add_usage(model, pk, usage.tokens, usage.cost_usd)


# --- an agent seat's work ---------------------------------------------------------------------------

@dataclass
class AgentWork:
    room_id: int
    round: int
    seat_id: int
    context: AgentContext
    request: LLMRequest
    provider: object
    correlation: str
    notes: list[str] = field(default_factory=list)


def prepare_agent(room: Room, number: int, seat_id: int, timeout: float, provider_override: str = "") -> AgentWork | None:
    """The seat's context and request; None when the seat has nothing to do in this round."""
    turn = Turn.objects.filter(room=room, number=number).first()
    seat = Seat.objects.filter(pk=seat_id, room=room, agent__isnull=False).select_related("agent").first()
    if turn is None or turn.ended_at is not None or seat is None or not seat.is_active:
        return None
    ctx = agent_context(room, seat, number)
    roster = [(s.pk, s.agent.name) for s in Seat.objects.filter(room=room, agent__isnull=False, role__in=Seat.SPEAKING)
              .select_related("agent").order_by("position", "id")]
    request = prompts.agent_request(ctx, roster, timeout)
    return AgentWork(room_id=room.pk, round=number, seat_id=seat_id, context=ctx, request=request,
                     provider=provider_for(provider_override or ctx.provider), correlation=turn.correlation_id)


def over_budget(claim: Claim, agent_id: int | None, request: LLMRequest, model: str) -> tuple[str, str, tuple[int, float]]:
    """Whether a call would take the workspace or its agent over budget: ``("room" | "agent" | "lost" | "", why, need)``,
    ``need`` being what the call may use at most (``budget.estimate``: its prompt and its output limit). The room's
    check keeps the need on the slot's lease until the slot is done (``leases.reserve``), so the seats of a round
    that check at once cannot together go over the budget; "lost": the lease is gone (no call)."""
    need = budget.estimate(request, model)
    kept = leases.reserve(claim, need)
    if kept is None:
        return "lost", "", need
    if not kept:
        return "room", f"The next call would go over the workspace's budget: {budget.need_text(need)}.", need
    agent = Agent.objects.only("name", "budget_tokens", "budget_usd", "tokens_used", "cost_usd").filter(pk=agent_id).first()
    if agent is not None and budget.over(agent, need):
        return "agent", f"{agent.name} has used up its budget.", need
    return "", "", need


def _round_open(room: Room, number: int) -> Turn | None:
    if room.status in CLOSED or room.status not in (Room.Status.ACTIVE, Room.Status.PAUSED) or room.round != number:
        return None
    turn = Turn.objects.filter(room=room, number=number).first()
    return turn if turn is not None and turn.ended_at is None else None


def writers(room_id: int, number: int, seat_id: int, correlation: str) -> set:
    """The attempts at the seat's slot that wrote its round (a discarded call's invocation does not count;
    an invocation written before attempts were kept gives None): empty while the round is not written."""
    return set(Invocation.objects.filter(room_id=room_id, component="agent.round_work", correlation_id=correlation,
                                         input__seatId=seat_id, input__round=number)
               .exclude(error__startswith="discarded").values_list("input__attempt", flat=True))


def committed(room_id: int, number: int, seat_id: int, correlation: str) -> bool:
    """The seat's round is already written."""
    return bool(writers(room_id, number, seat_id, correlation))


@rides_out
def skip_agent(claim: Claim) -> bool:
    """End a seat's slot with nothing to write (the seat has no work in this round, or it is written)."""
    with transaction.atomic():
        if leases.locked_room(claim.room_id) is None:
            return False
        return leases.finish(claim) is not None


@rides_out
def sit_out_for_budget(work: AgentWork, why: str, need: tuple[int, float], claim: Claim) -> bool:
    """The workspace's budget does not cover the seat's next call: no call, and in one transaction the
    workspace pauses itself (``status.BUDGET``, keeping ``need`` for the resume's check) and the seat's
    slot is given back, not finished: once the manager raised the budget and resumed, the seat works
    in this very round. Its invocation says why, marked discarded (it is not the seat's round's work).
    False when the lease is gone."""
    with transaction.atomic():
        room = leases.locked_room(work.room_id)
        if room is None or not leases.still_ours(claim):
            return False
        log_invocation(room, "agent.round_work", correlation=work.correlation, agent_id=work.context.agent_id,
                       input={"round": work.round, "seatId": work.seat_id, "attempt": claim.attempt,
                              "purpose": work.request.purpose},
                       output="", success=False, error=f"discarded: {why} The seat works once the workspace resumes.")
        pause_itself(room, BUDGET, work.correlation, need=need)
        leases.give_back(claim)
    return True


@rides_out
def commit_agent(work: AgentWork, called: Called, claim: Claim, pause: str = "") -> bool:
    """Write the seat's round in one transaction, ending its slot, if the slot's lease still holds;
    ``pause``: the workspace pauses itself for that reason in the same transaction.

    Returns False (and writes nothing but the discarded call's invocation) when the lease is gone,
    the round closed meanwhile, or the seat's round is already written.
    """
    provider_name = getattr(work.provider, "name", "")
    usage = Usage.of(called, provider_name)
    observations, actions, problems = prompts.parse_agent_answer(called.text) if called.text else ([], [], [])
    if called.status != "ok":
        problems.append(f"{called.status}: {called.error}")
    ctx = work.context
    with transaction.atomic():
        room = leases.locked_room(work.room_id)
        if room is None:
            return False
        turn = _round_open(room, work.round)
        written_by = writers(room.pk, work.round, work.seat_id, work.correlation) if turn is not None else set()
        if turn is None or leases.finish(claim) is None or written_by:
            if claim.attempt in written_by:
                return False  # by this very attempt, whose connection failed as it committed: its usage is in, once
            log_invocation(room, "agent.round_work", correlation=work.correlation, agent_id=ctx.agent_id,
                           input={"round": work.round, "seatId": work.seat_id}, output=called.text[:4000], success=False,
                           error="discarded: the round closed or the lease was lost", **usage.logged())
            _account(room, ctx.agent_id, work.seat_id, usage)
            return False
        seat = Seat.objects.select_related("agent").get(pk=work.seat_id)
        log_invocation(room, "tool.discovery", correlation=work.correlation, agent_id=ctx.agent_id,
                       input={"query": ctx.search_query, "round": work.round},
                       output=", ".join(f"#{i.id}" for i in ctx.found), )
        log_invocation(room, "agent.round_work", correlation=work.correlation, agent_id=ctx.agent_id,
                       input={"round": work.round, "seatId": work.seat_id, "attempt": claim.attempt,
                              "purpose": work.request.purpose,
                              "narrative": ({"round": ctx.narrative["round"], "version": ctx.narrative["version"]}
                                            if ctx.narrative else None),
                              "personaId": ctx.persona_id,
                              "promptChars": len(work.request.system) + sum(len(m["content"]) for m in work.request.messages)},
                       output=called.text[:4000], success=called.status == "ok", error="; ".join(problems)[:2000],
                       **usage.logged())
        _account(room, ctx.agent_id, work.seat_id, usage)
        valid_ids = set(Observation.objects.filter(room=room, pk__in=[o["respondingToId"] for o in observations
                                                                        if o["respondingToId"]]).exclude(event_type="")
                        .values_list("pk", flat=True))
        for o in observations:
            responding = o["respondingToId"] if o["respondingToId"] in valid_ids else None
            obs = write_observation(room, turn, event_type=o["type"], content=o["content"], responding_to_id=responding,
                                    confidence=o["confidence"] if o["confidence"] is not None else ctx.thresholds.get("confidence"),
                                    seat=seat, author_name=seat.agent.name, author_kind=Observation.AuthorKind.AGENT,
                                    provider=usage.provider, tokens=usage.tokens // max(1, len(observations)))
            log_invocation(room, "tool.publish_observation", correlation=work.correlation, agent_id=ctx.agent_id,
                           input={"type": o["type"], "respondingToId": responding, "confidence": obs.confidence},
                           output=f"observation {obs.pk}")
        for a in actions:
            task = TaskAssignment.objects.select_for_update().filter(pk=a["id"], room=room).first()
            if task is None:
                continue
            try:
                with transaction.atomic():
                    advance_task(room, task, a["action"], seat, agent_id=ctx.agent_id, correlation=work.correlation)
            except ActionError as exc:  # an illegal step (someone else claimed it first): skipped, logged
                log_invocation(room, f"agent.{a['action']}_task", correlation=work.correlation, agent_id=ctx.agent_id,
                               input={"taskId": task.pk}, output="", success=False, error=exc.message)
                task.refresh_from_db()
        if pause:
            pause_itself(room, pause, work.correlation)
        end_round_if_due(room, turn)
    return True


def call_provider(provider, request: LLMRequest, timeout: float, should_abandon) -> Called:
    """One model call (``runs.calls.call_model``: a helper thread, the timeout, giving up as soon as
    ``should_abandon()`` says the slot's lease is gone), its outcome as a value."""
    try:
        return Called(call_model(provider, request, timeout, should_abandon), "ok")
    except TransientLLMError as exc:
        return Called(None, "error", f"transient: {exc}", transient=True)
    except TerminalLLMError as exc:
        return Called(None, "error", str(exc))
    except StepTimeout as exc:
        return Called(None, "timed_out", str(exc))
    except Abandoned:  # the round closed or the room stopped running meanwhile
        return Called(None, "error", "abandoned: the round is no longer open")


# --- a round's close: adaptations and the narrative -------------------------------------------------------

@dataclass
class CloseWork:
    room_id: int
    round: int
    request: LLMRequest
    provider: object
    correlation: str
    moderator_id: int | None


def learn_adaptations(room: Room, number: int) -> int:
    """Fold round ``number`` into the adaptation each agent wore in it (idempotent per round)."""
    turn = Turn.objects.filter(room=room, number=number).first()
    if turn is None:
        return 0
    learned = 0
    for seat in Seat.objects.filter(room=room, agent__isnull=False, role__in=Seat.SPEAKING).select_related("agent"):
        state = (turn.agent_states or {}).get(str(seat.pk), {})
        persona_id = state.get("personaId", seat.persona_in_use_id)
        if learn_round(room, number, seat, persona_id, turn.correlation_id) is not None:
            learned += 1
    return learned


def prepare_close(room: Room, number: int, timeout: float, provider_override: str = "") -> CloseWork | None:
    turn = Turn.objects.filter(room=room, number=number).first()
    if turn is None or turn.ended_at is None or Narrative.objects.filter(room=room, round=number).exists():
        return None
    ctx = narrative_context(room, number)
    return CloseWork(room_id=room.pk, round=number, request=prompts.narrative_request(ctx, timeout),
                     provider=provider_for(provider_override or ctx.provider), correlation=turn.correlation_id,
                     moderator_id=ctx.moderator_id)


def _offline_narrative(work: CloseWork) -> dict:
    from facilitation.llm.rehearsal import RehearsalProvider

    return prompts.parse_narrative_answer(RehearsalProvider().complete(work.request).text)


def _next_round(room: Room, claim: Claim, number: int) -> bool:
    """End round ``number``'s close slot and open the next round's step (False, with nothing written,
    when the lease is gone). The agents are sent, on commit, only while the room runs that round (a
    paused room sends them on resume, a closed one never); when the scope closed the next round, its
    close is sent instead. The caller holds the room's lock."""
    nxt = Turn.objects.filter(room=room, number=number + 1, ended_at__isnull=True).first()
    running = nxt is not None and room.status == Room.Status.ACTIVE and room.round == nxt.number
    last = closing_round(room) if nxt is None else None
    closing = last is not None and last.number > number  # the scope closed the next round: its close
    slots, later = (1, {}) if closing else round_step_shape(room, clock=running)
    finished = leases.finish(claim, next_slots=slots, later=later)
    if finished is None:
        return False
    if running or closing:
        scheduling.schedule(room.pk, finished.next)
    return True


@rides_out
def skip_close(claim: Claim, number: int) -> bool:
    """End a close slot that has nothing to write (the narrative exists): the next round's agents start."""
    with transaction.atomic():
        room = leases.locked_room(claim.room_id)
        if room is None:
            return False
        return _next_round(room, claim, number)


@rides_out
def commit_narrative(work: CloseWork, called: Called, claim: Claim) -> Narrative | None:
    """Write round N's narrative once, ending the close's slot (if its lease still holds), then set
    round N+1's agents to work (when the room still runs)."""
    provider_name = getattr(work.provider, "name", "")
    usage = Usage.of(called, provider_name)
    parsed = prompts.parse_narrative_answer(called.text) if called.text else None
    fallback = parsed is None
    if fallback:  # the moderator failed or ignored the format: an extractive narrative, labelled as offline
        parsed = _offline_narrative(work)
        usage.provider = "rehearsal"
    with transaction.atomic():
        room = leases.locked_room(work.room_id)
        if room is None:
            return None
        if not _next_round(room, claim, work.round) or Narrative.objects.filter(room=room, round=work.round).exists():
            _keep_discarded_narrative(room, work, called, claim, usage)
            return None
        return _write_narrative(room, work, called, parsed, fallback, usage, claim.attempt)


def _keep_discarded_narrative(room: Room, work: CloseWork, called: Called, claim: Claim, usage: Usage) -> None:
    """A narrative call whose result is not written (the lease was lost, or the round's narrative is written) still
    cost something: its invocation is kept, marked discarded, and its usage counted. Unless no call was made, or this
    very attempt's narrative is in (its commit landed while its connection failed, and ``rides_out`` tried again)."""
    if called.response is None:
        return
    if Invocation.objects.filter(room_id=room.pk, component="narrative.generate", correlation_id=work.correlation,
                                 input__round=work.round, input__attempt=claim.attempt).exclude(
                                     error__startswith="discarded").exists():
        return
    log_invocation(room, "narrative.generate", correlation=work.correlation, agent_id=work.moderator_id,
                   input={"round": work.round, "attempt": claim.attempt, "purpose": work.request.purpose},
                   output=called.text[:4000], success=False, error="discarded: the lease was lost or the round's narrative "
                   "is written", **usage.logged())
    _account(room, work.moderator_id, None, usage)


def _write_narrative(room: Room, work: CloseWork, called: Called, parsed: dict, fallback: bool, usage: Usage,
                     attempt: int) -> Narrative | None:
    open_blockers = set(Observation.objects.filter(room=room, event_type=Observation.EventType.BLOCKER, responses__isnull=True)
                        .exclude(event_type="").values_list("pk", flat=True))
    try:
        with transaction.atomic():
            narrative = Narrative.objects.create(
                room=room, turn=Turn.objects.filter(room=room, number=work.round).first(), round=work.round,
                content=parsed["summary"], generated_content=parsed["summary"], key_decisions=parsed["keyDecisions"],
                blockers=[b for b in parsed["blockers"] if b in open_blockers], next_steps=parsed["nextSteps"],
                provider=usage.provider, written_by_agent_id=work.moderator_id, correlation_id=work.correlation,
            )
    except IntegrityError:
        return None
    log_invocation(room, "narrative.generate", correlation=work.correlation, agent_id=work.moderator_id,
                   input={"round": work.round, "attempt": attempt, "purpose": work.request.purpose, "fallback": fallback},
                   output=called.text[:4000] or parsed["summary"][:4000], success=called.status == "ok" and not fallback,
                   error=called.error, **usage.logged())
    _account(room, work.moderator_id, None, usage)
    record_event(room, EventType.NARRATIVE, {"narrative": narrative_payload(narrative)})
    return narrative
