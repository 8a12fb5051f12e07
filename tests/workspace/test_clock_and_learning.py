"""The turn policy's clock (a round ends after ``maxSeconds``) and adaptation learning that retries
when the manager tuned the same row meanwhile."""
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from facilitation.runs.scheduling import inline
from facilitation.workspace import scheduling
from facilitation.workspace.actions import adaptation as adaptation_actions
from facilitation.workspace.actions.adaptation import do_tune_adaptation
from facilitation.workspace.actions.lifecycle import do_start_workspace
from facilitation.workspace.actions.rounds import do_end_round
from facilitation.workspace.work import drain_inline, run_round_timeout
from rooms.models import Invocation, Narrative, PersonaAdaptation, Room, Turn
from tests.factories import make_user
from tests.workspace.helpers import agent_seats, make_workspace


@pytest.fixture
def manager(db):
    return make_user("clockwatcher")


def test_starting_a_round_sends_every_agent_and_the_round_clock(manager, django_capture_on_commit_callbacks):
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 90})
    with mock.patch("celery.current_app.send_task") as send, django_capture_on_commit_callbacks(execute=True):
        do_start_workspace(room, manager)
    sent = [(c.args[0], c.kwargs.get("args"), c.kwargs.get("countdown")) for c in send.call_args_list]
    seats = [s.pk for s in agent_seats(room)]
    assert sorted(a[2] for n, a, _ in sent if n == scheduling.AGENT_TASK) == sorted(seats)
    assert [(a, c) for n, a, c in sent if n == scheduling.TIMEOUT_TASK] == [([room.pk, 1], 90)]


def test_the_clock_ends_a_round_after_max_seconds_and_the_next_one_starts(manager):
    with inline():
        room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        do_start_workspace(room, manager)
        drain_inline()
        assert run_round_timeout(room.pk, 1) == "not_due"  # a minute has not passed
        assert Turn.objects.get(room=room, number=1).ended_at is None
        Turn.objects.filter(room=room, number=1).update(started_at=timezone.now() - timedelta(seconds=61))
        assert run_round_timeout(room.pk, 1) == "ended"
        assert run_round_timeout(room.pk, 1) == "not_due"  # a second delivery of the clock changes nothing
        drain_inline()  # the round's close: narrative, then round 2's agents
    turn = Turn.objects.get(room=room, number=1)
    assert turn.ended_by == Turn.EndedBy.POLICY and turn.event_count == 6
    assert Invocation.objects.filter(room=room, component="round.end", correlation_id=turn.correlation_id).count() == 1
    assert Narrative.objects.filter(room=room, round=1).count() == 1
    room = Room.objects.get(pk=room.pk)
    assert room.round == 2 and Turn.objects.get(room=room, number=2).ended_at is None
    # The clock of a paused room does not end its round.
    Turn.objects.filter(room=room, number=2).update(started_at=timezone.now() - timedelta(seconds=600))
    Room.objects.filter(pk=room.pk).update(status=Room.Status.PAUSED)
    assert run_round_timeout(room.pk, 2) == "not_due"


def test_learning_retries_on_a_concurrent_tune_and_keeps_the_managers_values(manager):
    with inline():
        room = make_workspace(manager, agents=1)
        do_start_workspace(room, manager)
        drain_inline()
        row = adaptation_actions.adaptation_for(room, agent_seats(room)[0])  # the row the manager sees and tunes
        real_learn = adaptation_actions.learn
        calls = []

        def learn_while_the_manager_tunes(thresholds, counts, signals):
            calls.append(dict(thresholds or {}))
            if len(calls) == 1:  # between the worker's read and its write, the manager tunes the row
                current = PersonaAdaptation.objects.get(pk=row.pk)
                do_tune_adaptation(room, row.pk, manager, learned_thresholds={"taskFocus": 0.9}, version=current.version)
            return real_learn(thresholds, counts, signals)

        do_end_round(room, manager)
        with mock.patch.object(adaptation_actions, "learn", learn_while_the_manager_tunes):
            drain_inline()
    assert len(calls) == 2 and calls[1]["taskFocus"] == 0.9  # the retry read the manager's values
    row.refresh_from_db()
    assert row.rounds_learned == 1 and row.last_round == 1
    # No task was completed this round: focus moves from the manager's 0.9 towards 0, by the learning rate.
    assert row.learned_thresholds["taskFocus"] == pytest.approx(0.9 * (1 - 0.3), abs=1e-4)
    assert Invocation.objects.filter(room=room, component="adaptation.learn").count() == 1
    assert Invocation.objects.filter(room=room, component="manager.tune_adaptation").count() == 1
