"""Runs one engine step: claim, call the model outside any transaction, commit.

Celery tasks and the in-process ``run_discussion`` command both drive rooms
through ``run_step``; only the scheduling of the next step differs.
"""
import logging
import random
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from facilitation import budget
from facilitation.actions import steps as commit
from facilitation.context import RoomContext, load_context
from facilitation.deliberation.markers import parse_markers
from facilitation.engine import Concluded, Evaluation, Opening, ParticipantTurn, Synthesis, next_step, parse_decision
from facilitation.engine.decision import fallback_decision
from facilitation.llm import LLMRequest, LLMResponse, TerminalLLMError, TransientLLMError, provider_for
from facilitation.prompts.builder import for_step
from rooms.models import Room

log = logging.getLogger("convene.engine")

MAX_ATTEMPTS = 3
# How often a call in flight checks that its lease still holds (a stop takes it away).
POLL_SECONDS = 0.5
_pool: ThreadPoolExecutor | None = None


@dataclass
class StepResult:
    outcome: str  # committed | not_claimable | lost_lease | abandoned | retry | missing
    retry_in: float = 0.0
    step: str = ""


class StepTimeout(Exception):
    pass


class Abandoned(Exception):
    pass


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(8, settings.CONVENE["WORKER_CONCURRENCY"] * 2), thread_name_prefix="llm-call")
    return _pool


def call_model(provider, request: LLMRequest, timeout: float, should_abandon) -> LLMResponse:
    """Call in a helper thread; give up at ``timeout`` or as soon as ``should_abandon()`` says so.

    A pooled database connection goes back to the pool for the length of the call.
    """
    if connection.vendor != "sqlite" and not connection.in_atomic_block:
        connection.close()
    future = _executor().submit(provider.complete, request)
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            future.cancel()
            raise StepTimeout(f"no answer within {timeout:.0f} s")
        try:
            return future.result(timeout=min(POLL_SECONDS, remaining))
        except FutureTimeout:
            if should_abandon():
                future.cancel()
                raise Abandoned()


def _timeouts() -> tuple[float, float]:
    cfg = settings.CONVENE
    return float(cfg["PARTICIPANT_TIMEOUT"]), float(cfg["FACILITATOR_TIMEOUT"])


def _call_record(component: str, agent_id, request: LLMRequest, response: LLMResponse | None, error: str = "") -> commit.CallRecord:
    record = commit.CallRecord(
        component=component, agent_id=agent_id,
        input={"purpose": request.purpose, "question": request.meta.get("question", ""),
               "round": request.meta.get("round"), "promptChars": len(request.system) + sum(len(m["content"]) for m in request.messages)},
        success=response is not None and not error, error=error,
    )
    if response is not None:
        record.provider, record.model, record.output = response.provider, response.model, response.text
        record.input_tokens, record.output_tokens = response.input_tokens, response.output_tokens
        record.cache_read_tokens, record.cache_write_tokens = response.cache_read_tokens, response.cache_write_tokens
        record.latency_ms = response.latency_ms
        record.cost_usd = budget.cost_of(response)
    return record


def _budget_exceeded(holder, request: LLMRequest, model: str) -> bool:
    """Would this call take the room or agent (anything with budget_* and *_used fields) over its budget?"""
    need_tokens, need_usd = budget.estimate(request, model)
    return budget.exceeds(holder.budget_tokens, holder.budget_usd, holder.tokens_used, holder.cost_usd, need_tokens, need_usd)


def _backoff(attempt: int) -> float:
    return min(30.0, 2 ** attempt) * (0.5 + random.random() / 2)


def run_step(room_id: int, step_seq: int) -> StepResult:
    participant_timeout, facilitator_timeout = _timeouts()
    lease = max(participant_timeout, facilitator_timeout) + settings.CONVENE["LEASE_MARGIN"]
    claimed = commit.claim_step(room_id, step_seq, lease)
    if claimed is None:
        return StepResult("not_claimable")
    claim, room = claimed
    ctx = load_context(room)
    step = next_step(ctx.state, ctx.seats)
    if isinstance(step, Concluded):
        commit.release_claim(claim)
        return StepResult("not_claimable", step="concluded")

    def abandon() -> bool:
        return not commit.still_ours(claim)

    try:
        if isinstance(step, ParticipantTurn):
            return _run_turn(ctx, claim, step, participant_timeout, abandon)
        if isinstance(step, (Opening, Evaluation)):
            return _run_decision(ctx, claim, step, facilitator_timeout, abandon)
        return _run_synthesis(ctx, claim, step, facilitator_timeout, abandon)
    except Abandoned:
        commit.release_claim(claim)
        log.info("room %s step %s abandoned", room_id, step_seq)
        return StepResult("abandoned", step=step.kind)


def _retry_or_give_up(claim, attempt_error: str) -> StepResult | None:
    """Transient failure: retry later while attempts remain, else the caller records the failure."""
    if claim.attempt < MAX_ATTEMPTS:
        commit.release_claim(claim)
        return StepResult("retry", retry_in=_backoff(claim.attempt))
    return None


def _provider_name(response: LLMResponse | None, provider) -> str:
    return response.provider if response is not None else getattr(provider, "name", "")


def _speaker(ctx: RoomContext, seat_id: int) -> commit.Speaker:
    seat = ctx.seat(seat_id)
    return commit.Speaker(seat_id=seat_id, name=seat.name, role=seat.role, is_agent=ctx.agents[seat_id].agent_id is not None)


def _run_turn(ctx: RoomContext, claim, step: ParticipantTurn, timeout: float, abandon) -> StepResult:
    agent = ctx.agents[step.seat_id]
    provider = provider_for(agent.provider)
    request = for_step(ctx, step, timeout)
    model = request.model or provider.name
    if _budget_exceeded(ctx, request, model):
        return _run_synthesis(ctx, claim, Synthesis("budget"), _timeouts()[1], abandon)
    if _budget_exceeded(agent, request, model):
        ok = commit.commit_turn(claim, _speaker(ctx, step.seat_id), f"{agent.name} has used up its budget and passes this turn.",
                                "error", [], None, provider.name)
        return StepResult("committed" if ok else "lost_lease", step=step.kind)
    response, status, error = None, "ok", ""
    try:
        response = call_model(provider, request, timeout, abandon)
    except StepTimeout as exc:
        status, error = "timed_out", str(exc)
    except TransientLLMError as exc:
        retry = _retry_or_give_up(claim, str(exc))
        if retry:
            commit.record_discarded_call(claim, _call_record("participant.turn", agent.agent_id, request, None, str(exc)), "transient error, retrying")
            return retry
        status, error = "error", str(exc)
    except TerminalLLMError as exc:
        status, error = "error", str(exc)
    call = _call_record("participant.turn", agent.agent_id, request, response, error)
    content = response.text.strip() if response else ""
    markers = parse_markers(content) if content else []
    ok = commit.commit_turn(claim, _speaker(ctx, step.seat_id), content, status, markers, call, _provider_name(response, provider))
    if not ok and response is not None:
        commit.record_discarded_call(claim, call, "lease lost")
    return StepResult("committed" if ok else "lost_lease", step=step.kind)


def _run_decision(ctx: RoomContext, claim, step, timeout: float, abandon) -> StepResult:
    opening = isinstance(step, Opening)
    fac = ctx.facilitator
    provider = provider_for(fac.provider)
    request = for_step(ctx, step, timeout)
    speaking_ids = [s.id for s in ctx.speakers]
    rounds_left = step.rounds_left if not opening else ctx.max_rounds
    if not opening and _budget_exceeded(ctx, request, request.model or provider.name):
        return _run_synthesis(ctx, claim, Synthesis("budget"), timeout, abandon)
    response, error = None, ""
    component = f"facilitator.{step.kind}"
    try:
        response = call_model(provider, request, timeout, abandon)
        decision = parse_decision(response.text, speaking_ids=speaking_ids, opening=opening,
                                  rounds_left=rounds_left, last_id=ctx.last_seat_id)
    except (StepTimeout, TransientLLMError, TerminalLLMError) as exc:
        if isinstance(exc, TransientLLMError):
            retry = _retry_or_give_up(claim, str(exc))
            if retry:
                commit.record_discarded_call(claim, _call_record(component, fac.agent_id, request, None, str(exc)), "transient error, retrying")
                return retry
        error = str(exc)
        reason = "timeout" if isinstance(exc, StepTimeout) else "model_error"
        decision = fallback_decision(opening=opening, speaking_ids=speaking_ids, last_id=ctx.last_seat_id,
                                     rounds_left=rounds_left, reason=reason)
    call = _call_record(component, fac.agent_id, request, response, error)
    ok = commit.commit_decision(claim, decision, call, fac.seat_id or None, fac.name, _provider_name(response, provider))
    if not ok and response is not None:
        commit.record_discarded_call(claim, call, "lease lost")
    return StepResult("committed" if ok else "lost_lease", step=step.kind)


def _offline_synthesis(request: LLMRequest) -> LLMResponse:
    from facilitation.llm.rehearsal import RehearsalProvider

    return RehearsalProvider().complete(request)


def _run_synthesis(ctx: RoomContext, claim, step: Synthesis, timeout: float, abandon) -> StepResult:
    fac = ctx.facilitator
    provider = provider_for(fac.provider)
    request = for_step(ctx, step, timeout)
    response, error = None, ""
    if step.reason == "budget" and _budget_exceeded(ctx, request, request.model or provider.name):
        error = "room budget exhausted: extractive synthesis without a model call"
    else:
        try:
            response = call_model(provider, request, timeout, abandon)
        except (StepTimeout, TransientLLMError, TerminalLLMError) as exc:
            if isinstance(exc, TransientLLMError):
                retry = _retry_or_give_up(claim, str(exc))
                if retry:
                    return retry
            error = str(exc)
    call = _call_record("facilitator.synthesis", fac.agent_id, request, response, error) if response or error else None
    text = response.text.strip() if response is not None and response.text.strip() else ""
    used = _provider_name(response, provider)
    if not text:
        text = _offline_synthesis(request).text
        used = "rehearsal"
    ok = commit.commit_synthesis(claim, text, step.reason, call, fac.seat_id or None, fac.name, used)
    return StepResult("committed" if ok else "lost_lease", step=step.kind)


def drive_inline(room_id: int, on_step=None, max_steps: int = 500) -> Room:
    """Run a room's steps in this process until it is no longer active (the ``run_discussion`` path)."""
    from facilitation.scheduling import inline

    with inline():
        for _ in range(max_steps):
            room = Room.objects.get(pk=room_id)
            if room.status != Room.Status.ACTIVE:
                return room
            result = run_step(room_id, room.step_seq)
            if result.outcome == "retry":
                time.sleep(result.retry_in)
            elif result.outcome == "not_claimable":
                time.sleep(0.05)
            if on_step:
                on_step(result)
    return Room.objects.get(pk=room_id)
