"""Handing workspace work to the workers, by task name, once the transaction commits.

In inline mode (``facilitation.runs.scheduling.inline()``: in-process tests and commands) nothing
is sent: the work is queued in this thread and ``drain_inline`` runs it here.
"""
import threading

from django.db import transaction

from facilitation.runs.scheduling import is_inline

AGENT_TASK = "facilitation.workspace.agent_round"
CLOSE_TASK = "facilitation.workspace.close_round"
TIMEOUT_TASK = "facilitation.workspace.round_timeout"

_local = threading.local()


def _inline_queue() -> list:
    if not hasattr(_local, "queue"):
        _local.queue = []
    return _local.queue


def _send(name: str, args: list, countdown: float | None = None) -> None:
    if is_inline():
        _inline_queue().append((name, args))
        return
    from celery import current_app

    options = {"countdown": countdown} if countdown else {}
    transaction.on_commit(lambda: current_app.send_task(name, args=args, **options))


def schedule_agents(room_id: int, number: int, seat_ids: list[int]) -> None:
    for seat_id in seat_ids:
        _send(AGENT_TASK, [room_id, number, seat_id])


def schedule_round_close(room_id: int, number: int) -> None:
    _send(CLOSE_TASK, [room_id, number])


def schedule_round_timeout(room_id: int, number: int, seconds: float) -> None:
    if not is_inline():  # in-process runs end their rounds explicitly
        _send(TIMEOUT_TASK, [room_id, number], countdown=seconds)


def take_inline() -> list[tuple[str, list]]:
    """What was queued in inline mode (and forget it)."""
    queue = _inline_queue()
    items = list(queue)
    queue.clear()
    return items
