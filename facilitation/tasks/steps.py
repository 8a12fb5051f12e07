"""Celery tasks: one slot of an engine step per task, and the sweeper that re-enqueues stranded slots."""
from celery import shared_task
from django.db import InterfaceError, OperationalError

from facilitation.runs import scheduling
from facilitation.runs.carry import carry_on
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import RUN_STEP_TASK
from facilitation.runs.sweeper import sweep
from facilitation.tasks.capacity import has_free_thread

STEP_TIME_LIMIT = 600


@shared_task(name=RUN_STEP_TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=STEP_TIME_LIMIT, time_limit=STEP_TIME_LIMIT + 30, max_retries=None,
             # A database hiccup (locked SQLite file, a dropped connection) retries the step;
             # the lease makes a retry harmless.
             autoretry_for=(OperationalError, InterfaceError), retry_backoff=0.5, retry_backoff_max=10,
             retry_jitter=True)
def run_step_task(self, room_id: int, step_seq: int, slot: int = 0, **kwargs):
    """Run the slot, then the room's steps its commits make ready at once while the worker has a
    thread to spare (``facilitation.runs.carry``)."""
    with scheduling.carrying(room_id):
        result = run_step(room_id, step_seq, slot=slot)
        if result.outcome == "retry":
            raise self.retry(countdown=result.retry_in)
        carry_on(has_free_thread)
    return result.outcome


@shared_task(name="facilitation.sweep_rooms", acks_late=True, time_limit=60)
def sweep_rooms(stale_seconds: float = 15.0, **kwargs) -> int:
    """Re-enqueue slots of active rooms whose lease expired or that nobody picked up."""
    return sweep(stale_seconds)
