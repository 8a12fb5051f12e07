"""facilitation.runs.outages: a step's commit that meets a database outage is tried again until the
database is back (within ``OUTAGE_SECONDS``), and written once."""
import pytest
from django.db import OperationalError

from facilitation.actions import lifecycle
from facilitation.actions import steps as commits
from facilitation.runs import leases, outages, scheduling
from facilitation.runs.runner import run_step
from rooms.models import Observation
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def naps(monkeypatch):
    box = []
    monkeypatch.setattr(outages, "_sleep", box.append)
    return box


def _started():
    room = make_discussion(make_user(), max_rounds=2)
    with scheduling.inline():
        lifecycle.do_start_discussion(room.pk)
    return room


def test_a_commit_that_meets_an_outage_is_written_once_the_database_is_back(monkeypatch, naps):
    room = _started()
    real, errors = commits.locked_room, [OperationalError("server closed the connection unexpectedly")] * 2

    def away_then_back(room_id, seen=None):
        if errors:
            raise errors.pop()
        return real(room_id, seen)

    monkeypatch.setattr(commits, "locked_room", away_then_back)  # the opening decision's commit reads it first
    with scheduling.inline():
        assert run_step(room.pk, leases.current(room.pk).step_seq).outcome == "committed"
    assert naps == [outages.PAUSE_SECONDS] * 2
    assert Observation.objects.filter(room=room).count() == 1


def test_a_database_that_stays_away_fails_the_step(monkeypatch, naps):
    room = _started()
    clock = iter(range(0, 1000, 3))  # every look: 3 s later
    monkeypatch.setattr(outages, "_clock", lambda: next(clock))

    def away(room_id, seen=None):
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(commits, "locked_room", away)
    with scheduling.inline(), pytest.raises(OperationalError):
        run_step(room.pk, leases.current(room.pk).step_seq)
    assert len(naps) == int(outages.OUTAGE_SECONDS // 3)
    assert Observation.objects.filter(room=room).count() == 0


def test_a_workspace_agents_commit_rides_out_an_outage_too(monkeypatch, naps):
    from facilitation.workspace.actions.lifecycle import do_start_workspace
    from tests.workspace.helpers import agent_seats, make_workspace

    manager = make_user("manager")
    room = make_workspace(manager, agents=1)
    with scheduling.inline():
        do_start_workspace(room, manager)
    real, errors = leases.locked_room, [OperationalError("terminating connection due to administrator command")]

    def away_then_back(room_id, seen=None):
        if errors:
            raise errors.pop()
        return real(room_id, seen)

    monkeypatch.setattr(leases, "locked_room", away_then_back)
    with scheduling.inline():
        assert run_step(room.pk, leases.current(room.pk).step_seq, slot=0).outcome == "committed"
    assert naps == [outages.PAUSE_SECONDS]
    assert Observation.objects.filter(room=room, seat=agent_seats(room)[0]).exists()


def _fails_as_it_commits(monkeypatch, module, name: str):
    """``module.name`` (called inside a commit's transaction) makes that transaction's COMMIT land and then
    raise, as a connection lost while the server committed does: the commit is tried again."""
    from django.db import transaction

    real, failures = getattr(module, name), [OperationalError("server closed the connection unexpectedly")]

    def committing(*args, **kwargs):
        result = real(*args, **kwargs)
        if failures:
            failure = failures.pop()

            def lost():
                raise failure

            transaction.on_commit(lost)  # runs once the COMMIT is done: the caller sees an error after it
        return result

    monkeypatch.setattr(module, name, committing)
    return failures


def test_a_commit_that_landed_as_its_connection_failed_counts_its_call_once(monkeypatch, naps):
    from rooms.models import Invocation, Room

    room = _started()
    failures = _fails_as_it_commits(monkeypatch, commits, "_finish_step")
    with scheduling.inline():
        result = run_step(room.pk, leases.current(room.pk).step_seq)
    assert failures == [] and naps == [outages.PAUSE_SECONDS]
    assert result.outcome == "lost_lease"  # the second try found the step done: by the first
    calls = list(Invocation.objects.filter(room=room, component="facilitator.opening"))
    assert [(c.success, c.error) for c in calls] == [(True, "")]
    assert Observation.objects.filter(room=room).count() == 1
    everything = Invocation.objects.filter(room=room)
    assert Room.objects.get(pk=room.pk).tokens_used == sum(c.input_tokens + c.output_tokens for c in everything) > 0


def test_a_workspace_commit_that_landed_as_its_connection_failed_counts_its_call_once(monkeypatch, naps):
    from facilitation.workspace import rounds
    from facilitation.workspace.actions.lifecycle import do_start_workspace
    from rooms.models import Invocation, Room
    from tests.workspace.helpers import agent_seats, make_workspace

    manager = make_user("manager")
    room = make_workspace(manager, agents=1)
    with scheduling.inline():
        do_start_workspace(room, manager)
    failures = _fails_as_it_commits(monkeypatch, rounds, "_account")
    with scheduling.inline():
        run_step(room.pk, leases.current(room.pk).step_seq, slot=0)
    assert failures == [] and naps == [outages.PAUSE_SECONDS]
    work = Invocation.objects.filter(room=room, component="agent.round_work")
    assert [(c.success, c.error) for c in work] == [(True, "")]
    assert Observation.objects.filter(room=room, seat=agent_seats(room)[0]).exists()
    assert Room.objects.get(pk=room.pk).tokens_used == sum(c.input_tokens + c.output_tokens for c in Invocation.objects.filter(room=room))
