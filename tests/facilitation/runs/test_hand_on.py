"""A commit hands the room's next step on to the thread that runs it next (``leases.finish(hand_on=...)``):
the step opens claimed by that thread, which runs it without claiming again; anyone else finds it
taken, and a thread that does not run it gives it back."""
import contextlib
import threading

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from facilitation.actions import lifecycle
from facilitation.runs import leases, scheduling
from facilitation.runs.models import StepLease
from facilitation.runs.runner import run_step
from rooms.models import Observation, Room
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def scripted(settings):
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_PROVIDER": "scripted"}


def _started() -> Room:
    room = make_discussion(make_user(), max_rounds=2)
    with scheduling.inline():
        lifecycle.do_start_discussion(room.pk)
    return room


@contextlib.contextmanager
def _driving_past_the_opening():
    """Inside a driver, once the room's first step committed: ``(room, the step handed on)``."""
    room = _started()
    first = leases.current(room.pk).step_seq
    with scheduling.driving():
        assert run_step(room.pk, first).outcome == "committed"
        yield room, first + 1


def _lease(room) -> StepLease:
    return StepLease.objects.get(room=room, slot=0)


def _claims(queries) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if '"attempt" = "attempt" + 1' in q["sql"]]


def _elsewhere(fn):
    """``fn()`` in another thread (another worker, as far as the thread's handed-on claims go)."""
    box = []
    thread = threading.Thread(target=lambda: box.append(fn()))
    thread.start()
    thread.join()
    connection.close()  # the other thread's connection is its own; ours stays usable
    return box[0]


def test_a_driver_runs_the_next_step_on_the_claim_its_commit_handed_on(scripted):
    room = _started()
    first = leases.current(room.pk).step_seq
    with scheduling.driving():
        with CaptureQueriesContext(connection) as opening:
            assert run_step(room.pk, first).outcome == "committed"
        lease = _lease(room)
        assert (lease.step_seq, lease.attempt) == (first + 1, 1) and lease.token and lease.lease_until
        assert len(_claims(opening)) == 1  # the first step is claimed as usual
        with CaptureQueriesContext(connection) as turn:
            assert run_step(room.pk, first + 1).outcome == "committed"
        assert _claims(turn) == []  # the turn ran on the claim handed on
    assert Observation.objects.filter(room=room).count() == 2
    assert not leases.held(room.pk)  # the driver let go of the step it did not run


def test_a_step_handed_on_cannot_be_claimed_by_another_worker_until_given_back(scripted):
    with _driving_past_the_opening() as (room, handed):
        assert _elsewhere(lambda: run_step(room.pk, handed).outcome) == "not_claimable"
    assert _lease(room).attempt == 0  # given back: no attempt used
    assert _elsewhere(lambda: run_step(room.pk, handed).outcome) == "committed"


def test_a_paused_room_gives_the_handed_on_claim_back(scripted):
    with _driving_past_the_opening() as (room, handed):
        lifecycle.do_pause_discussion(room.pk)
        assert run_step(room.pk, handed).outcome == "not_claimable"
        lease = _lease(room)
        assert (lease.token, lease.attempt) == ("", 0)
    lifecycle.do_resume_discussion(room.pk)
    assert run_step(room.pk, leases.current(room.pk).step_seq).outcome == "committed"


def test_a_stop_takes_the_handed_on_step_away(scripted):
    with _driving_past_the_opening() as (room, handed):
        lifecycle.do_stop_discussion(room.pk)
        assert run_step(room.pk, handed).outcome == "not_claimable"
    assert Observation.objects.filter(room=room, kind="contribution").count() == 0


def test_a_commit_inside_an_outer_transaction_hands_nothing_on(scripted):
    room = _started()
    first = leases.current(room.pk).step_seq
    with scheduling.driving():
        with transaction.atomic():  # the claim would reach the thread only when this one commits
            assert run_step(room.pk, first).outcome == "committed"
        assert not leases.held(room.pk)
        assert run_step(room.pk, first + 1).outcome == "committed"


def test_without_a_driver_nothing_is_handed_on(scripted):
    room = _started()
    first = leases.current(room.pk).step_seq
    with scheduling.inline():
        assert run_step(room.pk, first).outcome == "committed"
    assert not leases.held(room.pk)
    assert _lease(room).attempt == 0


def _whole_room_reads(queries) -> int:
    return sum(1 for q in queries.captured_queries if q["sql"].startswith("SELECT") and '"rooms_room"."topic"' in q["sql"])


def test_the_step_handed_on_takes_the_room_its_commit_wrote_instead_of_reading_it(scripted):
    with _driving_past_the_opening() as (room, handed):
        with CaptureQueriesContext(connection) as turn:
            assert run_step(room.pk, handed).outcome == "committed"
    assert _whole_room_reads(turn) == 0  # the claim and the commit check that nobody wrote it since, and take it


def test_a_room_changed_after_the_commit_that_handed_its_step_on_is_read_again(scripted, monkeypatch):
    from facilitation.discussions import steps as discussion_steps
    from rooms.actions.rooms import do_update_room

    seen = []
    load = discussion_steps.load_context
    monkeypatch.setattr(discussion_steps, "load_context", lambda r: seen.append((r.topic, r.max_rounds)) or load(r))
    with _driving_past_the_opening() as (room, handed):
        do_update_room(Room.objects.get(pk=room.pk), topic="A topic changed in between", max_rounds=3)
        with CaptureQueriesContext(connection) as turn:
            assert run_step(room.pk, handed).outcome == "committed"
    assert seen[-1] == ("A topic changed in between", 3)  # the opening's room came first
    assert _whole_room_reads(turn) == 1  # the claim's; the commit finds the room as the claim read it


def test_usage_added_to_the_room_while_a_step_runs_is_kept_by_its_commit(scripted, monkeypatch):
    from facilitation.discussions import steps as discussion_steps
    from rooms.models import Invocation
    from rooms.usage import add_usage

    real = discussion_steps.call_or_retry

    def meanwhile(*args, **kwargs):  # another call's usage (e.g. one discarded elsewhere) lands during this one
        add_usage(Room, room.pk, 1000, 0)
        return real(*args, **kwargs)

    with _driving_past_the_opening() as (room, handed):
        monkeypatch.setattr(discussion_steps, "call_or_retry", meanwhile)
        with CaptureQueriesContext(connection) as turn:
            assert run_step(room.pk, handed).outcome == "committed"
    logged = sum(i.input_tokens + i.output_tokens + i.cache_read_tokens + i.cache_write_tokens
                 for i in Invocation.objects.filter(room=room))
    assert Room.objects.get(pk=room.pk).tokens_used == logged + 1000
    assert _whole_room_reads(turn) == 1  # the commit read the room again


def _reads_of(table: str, queries) -> int:
    return sum(1 for q in queries.captured_queries if q["sql"].startswith("SELECT") and f'FROM "{table}"' in q["sql"])


@pytest.mark.skipif(connection.vendor != "sqlite", reason="rooms.quiet: SQLite's data_version")
def test_a_step_handed_on_with_nobody_writing_since_reads_neither_its_room_nor_its_seats(scripted):
    with _driving_past_the_opening() as (room, handed):
        assert run_step(room.pk, handed).outcome == "committed"  # its claim follows a commit made here
        with CaptureQueriesContext(connection) as turn:
            assert run_step(room.pk, handed + 1).outcome == "committed"
    assert _reads_of("rooms_room", turn) == 0 and _reads_of("rooms_seat", turn) == 0


@pytest.mark.skipif(connection.vendor != "sqlite", reason="rooms.quiet: SQLite's data_version")
def test_a_seat_changed_by_another_connection_between_handed_on_steps_is_read_again(scripted, monkeypatch):
    from facilitation.discussions import steps as discussion_steps
    from rooms.models import Agent

    seen = []
    load = discussion_steps.load_context
    monkeypatch.setattr(discussion_steps, "load_context", lambda r: seen.append(load(r)) or seen[-1])
    with _driving_past_the_opening() as (room, handed):
        assert run_step(room.pk, handed).outcome == "committed"
        agent_id = seen[-1].agents[seen[-1].seats[0].id].agent_id
        writer = threading.Thread(target=lambda: _and_close(lambda: Agent.objects.filter(pk=agent_id).update(name="Renamed elsewhere")))
        writer.start()
        writer.join()  # this thread's connection stays open: only data_version tells
        with CaptureQueriesContext(connection) as turn:
            assert run_step(room.pk, handed + 1).outcome == "committed"
    assert seen[-1].seats[0].name == "Renamed elsewhere"
    assert _reads_of("rooms_seat", turn) == 1


def _and_close(fn) -> None:
    try:
        fn()
    finally:
        connections.close_all()  # the calling thread's own connections
