"""How a discussion's steps run: the opening and evaluations (facilitator decisions),
participants' turns and the synthesis.

``register()`` (called at app start) tells ``facilitation.runs`` that rooms of kind
``discussion`` are planned by the pure engine and which handler runs each step kind.
"""
from facilitation import budget, replays
from facilitation.actions import steps as commit
from facilitation.context import RoomContext, load_context
from facilitation.deliberation.markers import PASS, is_pass, parse_markers
from facilitation.deliberation import conclusion
from facilitation.discussions.steering import checked_conclusion, settle_decision
from facilitation.engine import Concluded, Evaluation, Opening, ParallelTurns, ParticipantTurn, Synthesis, next_step
from facilitation.llm import LLMRequest, LLMResponse, provider_for
from facilitation.llm.base import prompt_text
from facilitation.llm.registry import get_provider
from facilitation.prompts.builder import for_step
from facilitation.runs import leases, registry
from facilitation.runs.calls import CallOutcome, call_or_retry, timeouts
from facilitation.runs.registry import Planned, StepResult, StepRun

ROOM_KIND = "discussion"


def plan(room) -> Planned | None:
    ctx = load_context(room)
    step = next_step(ctx.state, ctx.seats)
    if isinstance(step, Concluded):
        return None
    return Planned(step=step, context=ctx)


def _call_record(component: str, agent_id, request: LLMRequest, response: LLMResponse | None, error: str = "") -> commit.CallRecord:
    record = commit.CallRecord(
        component=component, agent_id=agent_id,
        input={"purpose": request.purpose, "question": request.meta.get("question", ""),
               "round": request.meta.get("round"), "promptChars": len(prompt_text(request))},
        success=response is not None and not error, error=error,
    )
    if response is not None:
        record.provider, record.model, record.output = response.provider, response.model, response.text
        record.input_tokens, record.output_tokens = response.input_tokens, response.output_tokens
        record.cache_read_tokens, record.cache_write_tokens = response.cache_read_tokens, response.cache_write_tokens
        record.latency_ms = response.latency_ms
        record.cost_usd = budget.cost_of(response)
    return record


def _provider_name(response: LLMResponse | None, provider) -> str:
    return response.provider if response is not None else getattr(provider, "name", "")


def _speaker(ctx: RoomContext, seat_id: int) -> commit.Speaker:
    seat = ctx.seat(seat_id)
    return commit.Speaker(seat_id=seat_id, name=seat.name, role=seat.role, is_agent=ctx.agents[seat_id].agent_id is not None)


def _call(run: StepRun, provider, request: LLMRequest, timeout: float, component: str, agent_id) -> CallOutcome:
    """The one call path: a transient error retries the step and keeps the discarded call's invocation."""
    def discard(error: str) -> None:
        commit.record_discarded_call(run.claim, _call_record(component, agent_id, request, None, error), "transient error, retrying")

    return call_or_retry(run, provider, request, timeout, on_retry=discard)


def _committed(ok: bool, run: StepRun) -> StepResult:
    if ok:  # the room state this step replayed goes on to the room's next step
        replays.keep(run.context.room)
    return StepResult("committed" if ok else "lost_lease", step=run.step.kind)


def run_turn(run: StepRun) -> StepResult:
    return _take_turn(run, run.step, commit.commit_turn)


def run_parallel_turn(run: StepRun) -> StepResult:
    """One slot of several seats asked at once: this slot's seat, from the same context as the others (none
    sees the others' answers); committed by ``commit_parallel_turn`` in the facilitator's order."""
    step = run.step
    if run.claim.slot >= len(step.seat_ids):  # a slot the step does not use
        return _committed(commit.commit_parallel_turn(run.claim, _speaker(run.context, step.seat_ids[0]), "", "error",
                                                      [], None, ""), run)
    seat_step = ParticipantTurn(seat_id=step.seat_ids[run.claim.slot], question=_to_everyone(run.context, step))
    return _take_turn(run, seat_step, commit.commit_parallel_turn, parallel=True)


def _to_everyone(ctx: RoomContext, step: ParallelTurns) -> str:
    """The facilitator's question without the first speaker's name in front: it goes to every seat asked."""
    question = step.question.strip()
    first = ctx.seat(step.seat_ids[0]).name
    if first and question.lower().startswith(first.lower()):
        rest = question[len(first):].lstrip(" ,:;")
        question = rest[:1].upper() + rest[1:] if rest else question
    return question


def _take_turn(run: StepRun, step: ParticipantTurn, commit_turn, parallel: bool = False) -> StepResult:
    ctx = run.context
    agent = ctx.agents[step.seat_id]
    provider = provider_for(run.provider_override or agent.provider)
    timeout = timeouts()[0]
    request = for_step(ctx, step, timeout)
    need = budget.estimate(request, request.model or provider.name)
    # Turns asked at once check the room's budget at the same time: each keeps its need on its lease (``leases.reserve``)
    # and counts the others'. A single turn has nobody to count.
    kept = leases.reserve(run.claim, need) if parallel else not budget.over(ctx, need)
    if kept is None:
        return StepResult("lost_lease", step=step.kind)
    if not kept:
        if not parallel:
            return run_synthesis(run, Synthesis("budget"))
        ok = commit_turn(run.claim, _speaker(ctx, step.seat_id), "The room's budget is used up.", "error", [], None, provider.name)
        return _committed(ok, run)
    if budget.over(agent, need):
        ok = commit_turn(run.claim, _speaker(ctx, step.seat_id), f"{agent.name} has used up its budget and passes this turn.",
                         "error", [], None, provider.name)
        return _committed(ok, run)
    outcome = _call(run, provider, request, timeout, "participant.turn", agent.agent_id)
    if outcome.retry:
        return outcome.retry
    status = {"": "ok", "timeout": "timed_out"}.get(outcome.failure, "error")
    response = outcome.response
    call = _call_record("participant.turn", agent.agent_id, request, response, outcome.error)
    content = response.text.strip() if response else ""
    passed = status == "ok" and is_pass(content)
    markers = parse_markers(content) if content and not passed else []
    ok = commit_turn(run.claim, _speaker(ctx, step.seat_id), PASS if passed else content, status, markers, call,
                     _provider_name(response, provider), data={"pass": True} if passed else None)
    if not ok and response is not None:
        commit.record_discarded_call(run.claim, call, commit.LEASE_LOST)
    return _committed(ok, run)


def together_for(ctx: RoomContext, decision, opening: bool) -> tuple:
    """The seats asked at once with the decision's speaker, when the room runs turns in parallel
    (``maxParallel`` > 1): everyone asked for the floor with ``@`` (``@all``), the voters of an open
    independent ballot who have not voted, or every speaking seat at a brainstorm's opening. The speaker
    comes first, then the others in the order asked; the last speaker is never among them."""
    if ctx.max_parallel < 2 or decision.decision != "continue" or decision.next_participant_id is None:
        return ()
    speaking = [s.id for s in ctx.speakers]
    asked = list(ctx.room.requested if ctx.room else [])
    if ctx.sealed_from is not None:
        asked += list(ctx.unvoted)
    if opening and ctx.format == "brainstorm":
        asked += speaking
    first = decision.next_participant_id
    others = [i for i in dict.fromkeys(asked) if i != first and i != ctx.last_seat_id and i in speaking]
    return tuple([first, *others][: ctx.max_parallel]) if others else ()


def run_decision(run: StepRun) -> StepResult:
    ctx, step = run.context, run.step
    opening = isinstance(step, Opening)
    fac = ctx.facilitator
    provider = provider_for(run.provider_override or fac.provider)
    timeout = timeouts()[1]
    request = for_step(ctx, step, timeout)
    if not opening and budget.over(ctx, budget.estimate(request, request.model or provider.name)):
        return run_synthesis(run, Synthesis("budget"))
    component = f"facilitator.{step.kind}"
    outcome = _call(run, provider, request, timeout, component, fac.agent_id)
    if outcome.retry:
        return outcome.retry
    settled = settle_decision(run, provider, request, outcome, timeout, _discarder(run, component, fac.agent_id))
    decision, request, outcome = settled.decision, settled.request, settled.outcome
    call = _call_record(component, fac.agent_id, request, outcome.response, outcome.error)
    ok = commit.commit_decision(run.claim, decision, call, fac.seat_id or None, fac.name, _provider_name(outcome.response, provider),
                                together=together_for(ctx, decision, opening))
    if not ok and outcome.response is not None:
        commit.record_discarded_call(run.claim, call, commit.LEASE_LOST)
    return _committed(ok, run)


def _rehearsal():
    """The offline model, for an extractive synthesis when no model answered."""
    return get_provider("rehearsal")


def _discarder(run: StepRun, component: str, agent_id):
    def record(request: LLMRequest, response: LLMResponse, reason: str) -> None:
        commit.record_discarded_call(run.claim, _call_record(component, agent_id, request, response), reason)
    return record


def run_synthesis(run: StepRun, step: Synthesis | None = None) -> StepResult:
    ctx = run.context
    step = step or run.step
    fac = ctx.facilitator
    provider = provider_for(run.provider_override or fac.provider)
    timeout = timeouts()[1]
    request = for_step(ctx, step, timeout)
    error, response, text, data = "", None, "", {}
    if step.reason == "budget" and budget.over(ctx, budget.estimate(request, request.model or provider.name)):
        error = "room budget exhausted: extractive synthesis without a model call"
    else:
        checked = checked_conclusion(run, provider, step, timeout, _discarder(run, "facilitator.synthesis", fac.agent_id),
                                     redos=0 if step.reason == "budget" else None)
        if checked.retry:
            return checked.retry
        request, response, text, error = checked.request or request, checked.response, checked.text, checked.error
        data = {"checks": checked.checks, "gaps": checked.gaps}
    call = _call_record("facilitator.synthesis", fac.agent_id, request, response, error) if response or error else None
    used = _provider_name(response, provider)
    if not text:
        text = _rehearsal().complete(request).text
        used = "rehearsal"
        data = {"checks": data.get("checks", []), "gaps": [dict(g, id=g.get("id") or "") for g in conclusion.omissions(text, ctx.room)]}
    text = conclusion.with_gaps(text, data["gaps"])
    ok = commit.commit_synthesis(run.claim, text, step.reason, call, fac.seat_id or None, fac.name, used, data=data)
    return StepResult("committed" if ok else "lost_lease", step=step.kind)


def register() -> None:
    registry.register_planner(ROOM_KIND, plan)
    registry.register_handler(ParticipantTurn.kind, run_turn)
    registry.register_handler(ParallelTurns.kind, run_parallel_turn)
    registry.register_handler(Opening.kind, run_decision)
    registry.register_handler(Evaluation.kind, run_decision)
    registry.register_handler(Synthesis.kind, run_synthesis)
