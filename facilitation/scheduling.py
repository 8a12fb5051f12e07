"""Enqueueing engine steps, after the transaction that made them ready commits.

In "inline" mode (``run_discussion``, in-process tests) nothing is enqueued: the
caller drives the steps itself with ``facilitation.runner.run_step``.
"""
import contextlib
import threading

from django.db import transaction

_local = threading.local()


@contextlib.contextmanager
def inline():
    previous = getattr(_local, "inline", False)
    _local.inline = True
    try:
        yield
    finally:
        _local.inline = previous


def is_inline() -> bool:
    return getattr(_local, "inline", False)


def schedule_step(room_id: int, step_seq: int) -> None:
    """Enqueue the room's step ``step_seq`` once the current transaction commits."""
    if is_inline():
        return
    from facilitation.tasks.steps import run_step_task

    transaction.on_commit(lambda: run_step_task.delay(room_id, step_seq))
