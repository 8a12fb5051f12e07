"""What a discussion's facilitator steps add around the model call.

- ``settle_decision``: read the answer; if it cannot be used, ask once more with the
  validation error (the first call's invocation is kept); then the fallback, and the
  guardrails on whatever was decided. Every repair and correction is on the decision.
- ``checked_conclusion``: check the conclusion against the room state; one that leaves
  decisions or open items out is written again with the list of omissions, at most
  ``SYNTHESIS_REDOS`` times, then accepted with the remaining gaps listed.
"""
from dataclasses import dataclass, field

from facilitation.deliberation import conclusion
from facilitation.engine import apply_guardrails, decide_from, read_decision
from facilitation.engine.decision import fallback_decision
from facilitation.llm import LLMRequest, LLMResponse, TerminalLLMError, TransientLLMError
from facilitation.prompts.builder import for_step
from facilitation.prompts.repair import repair_request
from facilitation.runs.calls import CallOutcome, StepTimeout, call_model, call_or_retry
from facilitation.runs.registry import StepRun

#: A conclusion that leaves items out is written again at most this many times.
SYNTHESIS_REDOS = 2


def call_once(run: StepRun, provider, request: LLMRequest, timeout: float) -> CallOutcome:
    """A further call inside a step that already has an answer: any failure is final (no step retry)."""
    try:
        return CallOutcome(response=call_model(provider, request, timeout, run.abandoned))
    except StepTimeout as exc:
        return CallOutcome(error=str(exc), failure="timeout")
    except (TransientLLMError, TerminalLLMError) as exc:
        return CallOutcome(error=str(exc), failure="model_error")


@dataclass
class Settled:
    decision: object
    request: LLMRequest
    outcome: CallOutcome


def settle_decision(run: StepRun, provider, request: LLMRequest, outcome: CallOutcome, timeout: float, record_discarded) -> Settled:
    """The decision for a facilitator's answer (``outcome``), repaired once if needed and checked by the guardrails.

    ``record_discarded(request, response, reason)`` keeps the invocation of a call whose answer was not used.
    """
    ctx, step = run.context, run.step
    opening = step.kind == "opening"
    rounds_left = ctx.max_rounds - ctx.round if opening else step.rounds_left
    speaking_ids = [s.id for s in ctx.speakers]
    parse = {"speaking_ids": speaking_ids, "opening": opening, "rounds_left": rounds_left, "names": ctx.speaker_names()}
    note = None
    if outcome.response is None:
        decision = fallback_decision(opening=opening, speaking_ids=speaking_ids, last_id=ctx.last_seat_id,
                                     rounds_left=rounds_left, reason=outcome.failure or "model_error")
    else:
        read = read_decision(outcome.response.text, **parse)
        if not read.ok:
            record_discarded(request, outcome.response, f"invalid decision ({read.code}), asked again")
            retry = repair_request(request, outcome.response.text, read.error)
            again = call_once(run, provider, retry, timeout)
            if again.response is not None:
                second = read_decision(again.response.text, **parse)
                result = "the second answer was valid" if second.ok else f"the second answer was invalid too ({second.error})"
                note = {"rule": "repair", "reason": f"The decision was invalid ({read.error}); asked once more: {result}."}
                read, request, outcome = second, retry, again
            else:
                note = {"rule": "repair", "reason": f"The decision was invalid ({read.error}); asking again failed ({again.error})."}
                outcome = CallOutcome(error=again.error, failure=again.failure)
        decision = decide_from(read, speaking_ids=speaking_ids, opening=opening, rounds_left=rounds_left, last_id=ctx.last_seat_id)
    if note:
        decision.corrections = [note, *decision.corrections]
    decision = apply_guardrails(decision, ctx.guardrail_facts(rounds_left), opening=opening)
    return Settled(decision, request, outcome)


@dataclass
class Checked:
    text: str = ""
    request: LLMRequest | None = None
    response: LLMResponse | None = None
    error: str = ""
    retry: object = None
    checks: list = field(default_factory=list)
    gaps: list = field(default_factory=list)


def _gap(item: dict) -> dict:
    return {"id": item.get("id") or "", "kind": item["kind"], "by": item.get("by") or "", "text": item["text"]}


def checked_conclusion(run: StepRun, provider, step, timeout: float, record_discarded, redos: int | None = None) -> Checked:
    """Ask for the conclusion and check it, writing it again for omissions (``redos`` times at most)."""
    ctx = run.context
    redos = SYNTHESIS_REDOS if redos is None else redos
    result, missing = Checked(), []
    for attempt in range(1, redos + 2):
        request = for_step(ctx, step, timeout, omissions=missing if attempt > 1 else None)
        outcome = call_once(run, provider, request, timeout) if attempt > 1 else call_or_retry(run, provider, request, timeout)
        if outcome.retry:
            result.retry = outcome.retry
            return result
        if outcome.response is None:
            result.error = outcome.error
            break
        if result.response is not None:  # the earlier draft is superseded; its call is kept
            record_discarded(result.request, result.response, f"the conclusion left out {len(missing)} item(s); written again")
        result.request, result.response = request, outcome.response
        result.text = outcome.response.text.strip()
        missing = conclusion.omissions(result.text, ctx.room) if result.text else []
        result.checks.append({"attempt": attempt, "omissions": [_gap(m) for m in missing]})
        if not missing:
            break
    result.gaps = [_gap(m) for m in missing] if result.text else []
    return result
