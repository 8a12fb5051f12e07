"""One model call inside a step: timeout, abandonment, and the retry-or-give-up rule.

Every step kind calls a model the same way: in a helper thread, giving up at the timeout
or as soon as the lease is gone, and on a transient error either retrying the step later
(while attempts remain) or giving up so the handler records a failure. A model that answers in
process at once (``Provider.inline``) is called in the step's own thread: it has nothing to wait
for, and handing it over would cost a step more than the call does.
"""
import random
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Callable

from django.conf import settings
from django.db import connection

from facilitation.llm import LLMRequest, LLMResponse, TerminalLLMError, TransientLLMError
from facilitation.runs.leases import release_claim
from facilitation.runs.registry import StepResult, StepRun

MAX_ATTEMPTS = 3
# How often a call in flight checks that its lease still holds (a stop takes it away).
POLL_SECONDS = 0.5
_pool: ThreadPoolExecutor | None = None


class StepTimeout(Exception):
    pass


class Abandoned(Exception):
    pass


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(8, settings.CONVENE["WORKER_CONCURRENCY"] * 2), thread_name_prefix="llm-call")
    return _pool


def call_model(provider, request: LLMRequest, timeout: float, should_abandon: Callable[[], bool]) -> LLMResponse:
    """Call in a helper thread; give up at ``timeout`` or as soon as ``should_abandon()`` says so.

    A pooled database connection goes back to the pool for the length of the call, and again after
    each check of the lease: a hundred calls in flight must not hold a connection each between
    their checks (the commits would wait for one).
    """
    if getattr(provider, "inline", False):
        return provider.complete(request)
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
            if _pooled() and not connection.in_atomic_block:
                connection.close()  # back to the pool until the next check


def _pooled() -> bool:
    """This thread's database connection comes from a pool (closing it hands it back, nothing is torn down)."""
    return getattr(connection, "pool", None) is not None


def backoff(attempt: int) -> float:
    """Seconds before retry ``attempt``: exponential with jitter, from ``CONVENE["RETRY_BACKOFF_SECONDS"]``."""
    base = float(settings.CONVENE.get("RETRY_BACKOFF_SECONDS", 1.0))
    return min(30.0, base * 2 ** attempt) * (0.5 + random.random() / 2)


def timeouts() -> tuple[float, float]:
    """(participant, facilitator) timeouts in seconds."""
    cfg = settings.CONVENE
    return float(cfg["PARTICIPANT_TIMEOUT"]), float(cfg["FACILITATOR_TIMEOUT"])


@dataclass
class CallOutcome:
    """What one call came to: a response, or an error (``timeout`` / ``model_error``), or a retry of the step."""

    response: LLMResponse | None = None
    error: str = ""
    failure: str = ""  # "" | timeout | model_error
    retry: StepResult | None = None


def again_later(run: StepRun, error: str, on_retry: Callable[[str], None] | None = None) -> StepResult | None:
    """The one rule for a transient error: while attempts remain, the lease is given back and the step
    runs again after ``backoff`` (``on_retry(error)`` first, to record the failed call). None when the
    attempts are used up: the caller commits the failure."""
    if run.claim.attempt >= MAX_ATTEMPTS:
        return None
    if on_retry is not None:
        on_retry(error)
    release_claim(run.claim)
    return StepResult("retry", retry_in=backoff(run.claim.attempt), step=run.step.kind)


def call_or_retry(run: StepRun, provider, request: LLMRequest, timeout: float,
                  on_retry: Callable[[str], None] | None = None) -> CallOutcome:
    """Call the model for ``run``. A transient error retries the whole step later while attempts
    remain (the lease is given back; ``on_retry`` may record the discarded call); after that, and
    on a timeout or a terminal error, the outcome carries the error for the handler to record.
    ``Abandoned`` propagates: the runner gives the lease back.
    """
    try:
        return CallOutcome(response=call_model(provider, request, timeout, run.abandoned))
    except StepTimeout as exc:
        return CallOutcome(error=str(exc), failure="timeout")
    except TransientLLMError as exc:
        return CallOutcome(error=str(exc), failure="model_error", retry=again_later(run, str(exc), on_retry))
    except TerminalLLMError as exc:
        return CallOutcome(error=str(exc), failure="model_error")
