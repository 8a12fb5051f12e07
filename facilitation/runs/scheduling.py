"""Enqueueing steps by task name, after the transaction that made them ready commits.

Steps are sent by name (``facilitation.run_step``), so nothing here imports the task
module or the runner. In "inline" mode (``run_discussion``, in-process tests) nothing is
enqueued: the caller drives the steps itself with ``facilitation.runs.runner.run_step``.

Inside ``carrying(room_id)`` (a worker task running a step of that room), the first slot of the
room's next step that is ready at once is not sent but kept, for the task to run next
(``take_carried``, see ``facilitation.runs.carry``); whatever is still kept when the block ends is
sent then, so nothing made ready is lost.

In both cases the thread runs the room's next step itself right after the commit
(``runs_next_here``), so the commit hands the next step's claim on to it (``leases.finish``);
a step kept but sent after all is let go first (``send_kept``). ``driving()`` is ``inline()`` for
a driver that runs every room's next step at once (``facilitation.management.inline``).
"""
import contextlib
import logging
import threading

from datetime import datetime

from celery import current_app
from django.db import transaction
from django.utils import timezone

from facilitation.runs import leases
from facilitation.runs.leases import OpenStep

log = logging.getLogger("convene.engine")

RUN_STEP_TASK = "facilitation.run_step"
QUEUE = "turns"

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


@contextlib.contextmanager
def driving():
    """``inline()`` for a driver that runs each room's next step in this thread as soon as it is ready:
    commits hand their next step's claim on to it; the claims it has not run are let go at the end."""
    previous = getattr(_local, "driving", False)
    _local.driving = True
    try:
        with inline():
            yield
    finally:
        _local.driving = previous
        if not previous:
            try:
                leases.let_go_all()
            except Exception:  # the leases lapse on their own and the sweeper sends the steps
                log.warning("could not give back the steps this driver did not run", exc_info=True)


def runs_next_here(room_id: int) -> bool:
    """Will this thread run the room's next step itself, right after the commit? (driving, or carrying
    the room with no step kept yet)"""
    if getattr(_local, "driving", False):
        return True
    return getattr(_local, "carry_room", None) == room_id and getattr(_local, "carried", None) is None


@contextlib.contextmanager
def carrying(room_id: int):
    """Keep the first slot of ``room_id``'s next step that a commit makes ready at once (see the module)."""
    _local.carry_room, _local.carried = room_id, None
    try:
        yield
    finally:
        left = take_carried()
        _local.carry_room = None
        if left is not None:
            send_kept(*left)


def take_carried() -> tuple[int, int, int] | None:
    """``(room_id, step_seq, slot)`` kept by ``carrying`` since the last call, or None."""
    carried, _local.carried = getattr(_local, "carried", None), None
    return carried


def _keep(room_id: int, step_seq: int, slot: int) -> bool:
    if getattr(_local, "carry_room", None) != room_id or getattr(_local, "carried", None) is not None:
        return False
    _local.carried = (room_id, step_seq, slot)
    return True


def send_step(room_id: int, step_seq: int, countdown: float | None = None, slot: int = 0) -> None:
    """Send one slot of the step to the workers now (no transaction involved)."""
    current_app.send_task(RUN_STEP_TASK, args=(room_id, step_seq, slot), queue=QUEUE, countdown=countdown or None)


def schedule_slots(room_id: int, step_seq: int, slots: list[tuple[int, datetime | None]]) -> None:
    """Enqueue the given slots of the room's step ``step_seq`` once the current transaction commits,
    each ``(slot, ready_at)``: a slot ready later is sent with a countdown (and cannot be claimed before)."""
    if is_inline() or not slots:
        return

    def send():
        now = timezone.now()
        for slot, ready_at in slots:
            countdown = max(0.0, (ready_at - now).total_seconds()) if ready_at else 0.0
            if countdown or not _keep(room_id, step_seq, slot):
                send_kept(room_id, step_seq, slot, countdown)

    transaction.on_commit(send)


def send_kept(room_id: int, step_seq: int, slot: int, countdown: float = 0.0) -> None:
    """Send a step that was kept to run here after all: its claim handed on is given back first."""
    try:
        leases.let_go(room_id, step_seq, slot)
    except Exception:  # the lease lapses on its own and the sweeper sends the step
        log.warning("could not give back step %s of room %s", step_seq, room_id, exc_info=True)
    send_or_leave(room_id, step_seq, slot, countdown)


def send_or_leave(room_id: int, step_seq: int, slot: int, countdown: float = 0.0) -> None:
    """``send_step``, or a warning when the broker cannot be reached: the step stays ready in the
    database and the sweeper sends it later."""
    try:
        send_step(room_id, step_seq, countdown, slot)
    except Exception:
        log.warning("could not enqueue step %s of room %s; the sweeper will", step_seq, room_id, exc_info=True)


def schedule_step(room_id: int, step_seq: int, slots: int = 1, ready_at: datetime | None = None) -> None:
    """Enqueue every slot of the room's step ``step_seq`` once the current transaction commits;
    a step ready later (``ready_at``) is sent with a countdown (and cannot be claimed before)."""
    schedule_slots(room_id, step_seq, [(slot, ready_at) for slot in range(slots)])


def schedule(room_id: int, step: OpenStep | None) -> None:
    """``schedule_step`` for what ``leases.finish`` / ``leases.open_step`` returned (None: nothing),
    each slot at its own ready time."""
    if step is not None:
        schedule_slots(room_id, step.step_seq, step.ready_times())
