"""Running a room's next step in the task that committed the step before it.

When a step's commit makes the room's next step ready at once, the worker task that ran it runs
that next step too: ``scheduling.carrying`` keeps the step instead of sending it, and ``carry_on``
runs what was kept, one step after another. A step carried on costs no message: no send to the
broker, no fetch, no acknowledgement, about half of a worker's time per step otherwise.

The task stops carrying on and sends the step as usual when ``may_go_on`` says another task may be
waiting for its thread, after ``CARRY_SECONDS``, or when a step asks to be retried later. Nothing is
lost if the worker dies while carrying on: the step it was running holds a short lease like any
other, and the sweeper sends it again once that lease lapses. A step that meets a database error
(one longer than a step rides out, ``facilitation.runs.outages``) is sent again after ``RETRY_SECONDS``.
"""
import logging
import time
from collections.abc import Callable

from django.db import InterfaceError, OperationalError

from facilitation.runs import scheduling
from facilitation.runs.registry import StepResult
from facilitation.runs.runner import run_step

log = logging.getLogger("convene.engine")

CARRY_SECONDS = 120.0  # well inside the broker's visibility timeout for the task's own message
RETRY_SECONDS = 1.0  # a carried step that met a database hiccup is sent again after this


def carry_on(may_go_on: Callable[[], bool], seconds: float = CARRY_SECONDS,
             clock: Callable[[], float] = time.monotonic) -> list[StepResult]:
    """Run the steps that ``scheduling.carrying`` keeps, while ``may_go_on()`` and for at most
    ``seconds``; whatever is kept when it stops is sent to the workers. The results of the steps run."""
    until = clock() + seconds
    results = []
    while (kept := scheduling.take_carried()) is not None:
        room_id, step_seq, slot = kept
        if clock() >= until or not may_go_on():
            scheduling.send_kept(room_id, step_seq, slot)
            break
        try:
            result = run_step(room_id, step_seq, slot=slot)
        except (OperationalError, InterfaceError):
            log.warning("carried step %s of room %s met a database error; sent again", step_seq, room_id, exc_info=True)
            scheduling.send_kept(room_id, step_seq, slot, RETRY_SECONDS)
            break
        results.append(result)
        if result.outcome == "retry":
            scheduling.send_or_leave(room_id, step_seq, slot, result.retry_in)
            break
    return results
