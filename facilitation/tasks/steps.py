"""Celery tasks: one engine step per task, and the sweeper that re-enqueues stranded steps."""
from datetime import timedelta

from celery import shared_task
from django.db import InterfaceError, OperationalError
from django.db.models import Q
from django.utils import timezone

from rooms.models import Room

STEP_TIME_LIMIT = 600


@shared_task(name="facilitation.run_step", bind=True, acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=STEP_TIME_LIMIT, time_limit=STEP_TIME_LIMIT + 30, max_retries=None,
             # A database hiccup (locked SQLite file, a dropped connection) retries the step;
             # the lease makes a retry harmless.
             autoretry_for=(OperationalError, InterfaceError), retry_backoff=0.5, retry_backoff_max=10,
             retry_jitter=True)
def run_step_task(self, room_id: int, step_seq: int, **kwargs):
    from facilitation.runner import run_step

    result = run_step(room_id, step_seq)
    if result.outcome == "retry":
        raise self.retry(countdown=result.retry_in)
    return result.outcome


@shared_task(name="facilitation.sweep_rooms", acks_late=True, time_limit=60)
def sweep_rooms(stale_seconds: float = 15.0, **kwargs) -> int:
    """Re-enqueue active rooms whose lease expired or whose ready step nobody picked up."""
    now = timezone.now()
    stale = now - timedelta(seconds=stale_seconds)
    rooms = Room.objects.filter(status=Room.Status.ACTIVE).filter(
        Q(lease_until__lt=now) | Q(lease_until__isnull=True, step_ready_at__lt=stale)
    ).values_list("pk", "step_seq")
    count = 0
    for room_id, step_seq in rooms:
        run_step_task.delay(room_id, step_seq)
        count += 1
    if count:
        Room.objects.filter(pk__in=[r for r, _ in rooms], lease_until__isnull=True).update(step_ready_at=now)
    return count
