"""Enqueueing Celery tasks by name once the current transaction commits.

Rooms-level actions (deliveries, chat links) hand work to the bridge's tasks without
importing the bridge: by task name, on a named queue. ``settings.TASK_DISPATCH`` is
``"celery"`` (send to the broker) or ``"memory"`` (collect in ``sent``: unit tests
without a broker).
"""
from django.conf import settings
from django.db import transaction

sent: list[tuple[str, tuple, str]] = []


def send_now(name: str, args: tuple, queue: str, countdown: float | None = None) -> None:
    if getattr(settings, "TASK_DISPATCH", "celery") == "memory":
        sent.append((name, args, queue))
        return
    from celery import current_app

    current_app.send_task(name, args=list(args), queue=queue, countdown=countdown)


def enqueue_on_commit(name: str, *args, queue: str, countdown: float | None = None) -> None:
    """Send task ``name`` with ids-only ``args`` to ``queue`` after the transaction commits."""
    transaction.on_commit(lambda: send_now(name, args, queue, countdown))
