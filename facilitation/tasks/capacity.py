"""Whether this worker process has a thread to spare: a task may keep its thread for a room's next
step (``facilitation.runs.carry``) only while that delays no other task."""
from celery.signals import worker_ready
from celery.worker import state

_pool = {"size": 0}


@worker_ready.connect
def _note_pool_size(sender=None, **_):
    _pool["size"] = int(getattr(getattr(sender, "controller", None), "concurrency", 0) or 0)


def _stopping() -> bool:
    # Celery sets these to an exit code, 0 included (so: identity, as ``state.maybe_shutdown`` checks).
    return any(flag is not None and flag is not False for flag in (state.should_stop, state.should_terminate))


def has_free_thread() -> bool:
    """True while a thread of this worker's pool is free and no task it fetched waits for one. Tasks
    hold their message unacknowledged until they end, so with every thread busy the broker may hold
    work this worker cannot fetch: the answer is then False. False too once the worker is shutting
    down (it waits for its running tasks), and outside a worker (pool size unknown)."""
    size = _pool["size"]
    if _stopping():
        return False
    active = len(state.active_requests)
    return 0 < size and active < size and len(state.reserved_requests) <= active
