"""facilitation.runs.carry: a worker task runs the room's next step itself when its commit makes it
ready at once, and sends it to the workers as before when it must not keep its thread."""
import itertools
import weakref

import pytest
from celery.worker import state as worker_state
from django.db import OperationalError, connection
from django.test.utils import CaptureQueriesContext

from facilitation.actions import lifecycle
from facilitation.runs import carry, leases, outages, scheduling
from facilitation.runs.registry import StepResult
from facilitation.runs.runner import run_step
from facilitation.tasks import capacity
from facilitation.tasks import steps as step_tasks
from rooms import quiet
from rooms.models import Observation, Room
from tests.factories import make_discussion, make_user


@pytest.fixture
def sent(monkeypatch):
    """Every step sent to the workers, as (room_id, step_seq, slot, countdown)."""
    box = []
    monkeypatch.setattr(scheduling, "send_step",
                        lambda room_id, step_seq, countdown=None, slot=0: box.append((room_id, step_seq, slot, countdown)))
    return box


@pytest.fixture
def scripted(settings):
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_PROVIDER": "scripted", "RETRY_BACKOFF_SECONDS": 0.0}


def _started(sent) -> Room:
    room = make_discussion(make_user(), max_rounds=2)
    lifecycle.do_start_discussion(room.pk)
    assert sent == [(room.pk, leases.current(room.pk).step_seq, 0, 0.0)]  # the start sends its first step
    sent.clear()
    return Room.objects.get(pk=room.pk)


@pytest.mark.django_db(transaction=True)
def test_one_task_runs_a_whole_discussion_without_sending_a_message(sent, scripted, monkeypatch):
    room = _started(sent)
    monkeypatch.setattr(step_tasks, "has_free_thread", lambda: True)
    with CaptureQueriesContext(connection) as queries:
        assert step_tasks.run_step_task(room.pk, leases.current(room.pk).step_seq) == "committed"
    # Only the task's own step is claimed: each commit hands the next step's claim on (leases.finish).
    assert len([q for q in queries.captured_queries if '"attempt" = "attempt" + 1' in q["sql"]]) == 1
    room.refresh_from_db()
    assert room.status == Room.Status.CONCLUDED
    kinds = list(Observation.objects.filter(room=room).order_by("seq").values_list("kind", flat=True))
    assert kinds == ["decision", "contribution", "decision", "contribution", "decision", "synthesis"]
    assert sent == []


@pytest.mark.django_db(transaction=True)
def test_a_task_without_a_thread_to_spare_sends_the_next_step(sent, scripted, monkeypatch):
    room = _started(sent)
    first = leases.current(room.pk).step_seq
    monkeypatch.setattr(step_tasks, "has_free_thread", lambda: False)
    assert step_tasks.run_step_task(room.pk, first) == "committed"
    assert Observation.objects.filter(room=room).count() == 1
    assert sent == [(room.pk, first + 1, 0, 0.0)]
    assert leases.current(room.pk).step_seq == first + 1
    assert not leases.held(room.pk)  # the claim handed on was given back: the worker sent it claims it at once


@pytest.mark.django_db(transaction=True)
def test_carrying_on_stops_after_its_time_and_sends_what_it_kept(sent, scripted):
    room = _started(sent)
    first = leases.current(room.pk).step_seq
    ticks = itertools.count(0, 4)  # every look at the clock: 4 s later
    with scheduling.carrying(room.pk):
        assert run_step(room.pk, first).outcome == "committed"
        ran = carry.carry_on(lambda: True, seconds=10, clock=lambda: next(ticks))
    assert [r.outcome for r in ran] == ["committed", "committed"]  # at 4 s and 8 s; at 12 s it stops
    assert Observation.objects.filter(room=room).count() == 3
    assert sent == [(room.pk, first + 3, 0, 0.0)]
    assert not leases.held(room.pk)


@pytest.mark.django_db(transaction=True)
def test_a_kept_step_is_sent_when_the_task_ends_without_running_it(sent, scripted):
    room = _started(sent)
    first = leases.current(room.pk).step_seq
    with pytest.raises(RuntimeError):
        with scheduling.carrying(room.pk):
            assert run_step(room.pk, first).outcome == "committed"
            raise RuntimeError("the task failed after the commit")
    assert sent == [(room.pk, first + 1, 0, 0.0)]
    assert scheduling.take_carried() is None
    assert not leases.held(room.pk)


@pytest.mark.django_db(transaction=True)
def test_a_claim_in_hand_that_meets_a_database_error_waits_it_out_in_the_task(sent, scripted, monkeypatch):
    room = _started(sent)
    first = leases.current(room.pk).step_seq
    failures, naps = [OperationalError("server closed the connection"), OperationalError("again")], []
    monkeypatch.setattr(outages, "_sleep", naps.append)

    def flaky(real):  # the claim's reads of the room: whole, or whether it changed since the commit handed it on
        def read(room_id):
            if failures:
                raise failures.pop(0)
            return real(room_id)
        return read

    with scheduling.carrying(room.pk):
        assert run_step(room.pk, first).outcome == "committed"
        assert leases.held(room.pk)  # the next step, handed on
        monkeypatch.setattr(leases, "_ROOM", flaky(leases._ROOM))
        monkeypatch.setattr(leases, "_ROOM_MARKS", flaky(leases._ROOM_MARKS))
        # as when another connection wrote since the commit: the claim reads the room's marks
        monkeypatch.setattr(quiet, "claimed", lambda db, room_id: False)
        ran = carry.carry_on(lambda: True)
    assert naps == [outages.PAUSE_SECONDS] * 2 and failures == []
    assert ran and {r.outcome for r in ran} == {"committed"}  # the rest of the discussion, here
    assert sent == []
    room.refresh_from_db()
    assert room.status == Room.Status.CONCLUDED


@pytest.mark.django_db
def test_only_the_first_slot_of_the_same_room_ready_at_once_is_kept(sent, django_capture_on_commit_callbacks):
    from django.utils import timezone

    later = timezone.now() + timezone.timedelta(seconds=30)
    with scheduling.carrying(7):
        with django_capture_on_commit_callbacks(execute=True):
            scheduling.schedule_slots(7, 3, [(0, None), (1, None), (2, later)])
            scheduling.schedule_slots(8, 1, [(0, None)])  # another room's step
        assert scheduling.take_carried() == (7, 3, 0)
        assert scheduling.take_carried() is None
    assert [(r, s, slot) for r, s, slot, _ in sent] == [(7, 3, 1), (7, 3, 2), (8, 1, 0)]
    assert sent[0][3] == 0.0 and 29 < sent[1][3] <= 30
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):  # outside a task: everything is sent
        scheduling.schedule_slots(7, 4, [(0, None)])
    assert sent == [(7, 4, 0, 0.0)]


def _keep(room_id, step_seq, capture):
    with capture(execute=True):
        scheduling.schedule_slots(room_id, step_seq, [(0, None)])


@pytest.mark.django_db
@pytest.mark.parametrize("outcome, countdown", [(StepResult("retry", retry_in=2.5), 2.5),
                                                (OperationalError("database is locked"), carry.RETRY_SECONDS)])
def test_a_carried_step_that_must_wait_is_sent_with_its_delay(sent, monkeypatch, django_capture_on_commit_callbacks,
                                                               outcome, countdown):
    def step(room_id, step_seq, slot=0):
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(carry, "run_step", step)
    with scheduling.carrying(7):
        _keep(7, 3, django_capture_on_commit_callbacks)
        carry.carry_on(lambda: True)
    assert sent == [(7, 3, 0, countdown)]


class _Request:
    """Stands for a Celery request in the worker's state sets (they hold weak references)."""


def test_a_thread_is_free_only_below_the_pool_size_with_nothing_waiting(monkeypatch):
    active, reserved = weakref.WeakSet(), weakref.WeakSet()
    monkeypatch.setattr(worker_state, "active_requests", active)
    monkeypatch.setattr(worker_state, "reserved_requests", reserved)
    monkeypatch.setattr(capacity, "_pool", {"size": 0})
    running = [_Request() for _ in range(3)]
    for r in running:
        active.add(r)
        reserved.add(r)
    assert not capacity.has_free_thread()  # not a worker: the pool size is unknown
    capacity._note_pool_size(sender=type("Consumer", (), {"controller": type("Worker", (), {"concurrency": 4})()})())
    assert capacity._pool["size"] == 4
    assert capacity.has_free_thread()
    waiting = _Request()
    reserved.add(waiting)  # fetched, waiting for a thread
    assert not capacity.has_free_thread()
    reserved.discard(waiting)
    assert capacity.has_free_thread()
    monkeypatch.setattr(worker_state, "should_stop", 0)  # a warm shutdown waits for the running tasks
    assert not capacity.has_free_thread()
    monkeypatch.setattr(worker_state, "should_stop", None)
    monkeypatch.setattr(worker_state, "should_terminate", True)
    assert not capacity.has_free_thread()
    monkeypatch.setattr(worker_state, "should_terminate", None)
    fourth = _Request()
    active.add(fourth)  # every thread busy: the broker may hold work this worker cannot fetch
    assert not capacity.has_free_thread()
