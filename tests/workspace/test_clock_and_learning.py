"""The turn policy's clock (a round ends after ``maxSeconds``) and adaptation learning that retries
when the manager tuned the same row meanwhile."""
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from facilitation.runs.models import StepLease
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import RUN_STEP_TASK, inline
from facilitation.workspace.actions import adaptation as adaptation_actions
from facilitation.workspace.actions.adaptation import do_tune_adaptation
from facilitation.workspace.actions.lifecycle import do_pause_workspace, do_resume_workspace, do_start_workspace
from facilitation.workspace.actions.rounds import do_end_round, do_set_turn_policy
from rooms.models import Invocation, Narrative, PersonaAdaptation, Room, Turn
from tests.factories import make_user
from tests.workspace.helpers import agent_seats, clock_slot, make_workspace, run_round_work


@pytest.fixture
def manager(db):
    return make_user("clockwatcher")


def test_starting_a_round_sends_every_agent_and_the_round_clock(manager, django_capture_on_commit_callbacks):
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 90})
    with mock.patch("celery.current_app.send_task") as send, django_capture_on_commit_callbacks(execute=True):
        do_start_workspace(room, manager)
    sent = [(c.args[0], c.kwargs.get("args"), c.kwargs.get("countdown")) for c in send.call_args_list]
    seats = agent_seats(room)
    # One slot of the round's step per agent seat, sent at once, and the round's clock as the last slot.
    assert {name for name, _, _ in sent} == {RUN_STEP_TASK}
    step_seq, clock = clock_slot(room)
    assert clock == len(seats)
    assert sorted((args[2], countdown) for _, args, countdown in sent if args[1] == step_seq) == (
        [(slot, None) for slot in range(len(seats))] + [(clock, pytest.approx(90, abs=2))])


def _time_passes(room, seconds):
    """Move the open round's start and its clock's ready time ``seconds`` into the past."""
    room = Room.objects.get(pk=room.pk)
    Turn.objects.filter(room=room, number=room.round).update(started_at=timezone.now() - timedelta(seconds=seconds))
    StepLease.objects.filter(room=room, slot=clock_slot(room)[1]).update(ready_at=timezone.now() - timedelta(seconds=1))


def test_the_clock_ends_a_round_after_max_seconds_and_the_next_one_starts(manager):
    with inline():
        room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        do_start_workspace(room, manager)
        run_round_work(room)
        step_seq, clock = clock_slot(room)
        assert run_step(room.pk, step_seq, slot=clock).outcome == "not_claimable"  # a minute has not passed
        assert Turn.objects.get(room=room, number=1).ended_at is None
        _time_passes(room, 61)
        assert run_step(room.pk, step_seq, slot=clock).outcome == "committed"
        # A second delivery of the clock changes nothing.
        assert run_step(room.pk, step_seq, slot=clock).outcome == "not_claimable"
        run_round_work(room)  # the round's close: narrative, then round 2's agents
    turn = Turn.objects.get(room=room, number=1)
    assert turn.ended_by == Turn.EndedBy.POLICY and turn.event_count == 6
    assert Invocation.objects.filter(room=room, component="round.end", correlation_id=turn.correlation_id).count() == 1
    assert Narrative.objects.filter(room=room, round=1).count() == 1
    room = Room.objects.get(pk=room.pk)
    assert room.round == 2 and Turn.objects.get(room=room, number=2).ended_at is None
    # The clock of a paused room does not end its round; the resume starts it again for maxSeconds.
    with inline():
        do_pause_workspace(room, manager)
        _time_passes(room, 600)
        step_seq, clock = clock_slot(room)
        assert run_step(room.pk, step_seq, slot=clock).outcome == "not_claimable"
        assert Turn.objects.get(room=room, number=2).ended_at is None
        do_resume_workspace(room, manager)
        ready_at = StepLease.objects.get(room=room, slot=clock).ready_at
        assert 55 <= (ready_at - timezone.now()).total_seconds() <= 60
        assert run_step(room.pk, step_seq, slot=clock).outcome == "not_claimable"


def test_a_clock_that_comes_early_waits_for_its_time(manager):
    with inline():
        room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        do_start_workspace(room, manager)
        step_seq, clock = clock_slot(room)
        # The slot is ready (a clock set from an earlier time) but the round began less than a minute ago.
        StepLease.objects.filter(room=room, slot=clock).update(ready_at=timezone.now() - timedelta(seconds=1))
        result = run_step(room.pk, step_seq, slot=clock)
        assert (result.step, result.outcome) == ("workspace.clock", "postponed")
        lease = StepLease.objects.get(room=room, slot=clock)
        assert lease.attempt == 0 and lease.token == "" and not lease.done
        assert 55 <= (lease.ready_at - timezone.now()).total_seconds() <= 60
    assert Turn.objects.get(room=room, number=1).ended_at is None


def test_learning_retries_on_a_concurrent_tune_and_keeps_the_managers_values(manager):
    with inline():
        room = make_workspace(manager, agents=1)
        do_start_workspace(room, manager)
        run_round_work(room)
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
            run_round_work(room)
    assert len(calls) == 2 and calls[1]["taskFocus"] == 0.9  # the retry read the manager's values
    row.refresh_from_db()
    assert row.rounds_learned == 1 and row.last_round == 1
    # No task was completed this round: focus moves from the manager's 0.9 towards 0, by the learning rate.
    assert row.learned_thresholds["taskFocus"] == pytest.approx(0.9 * (1 - 0.3), abs=1e-4)
    assert Invocation.objects.filter(room=room, component="adaptation.learn").count() == 1
    assert Invocation.objects.filter(room=room, component="manager.tune_adaptation").count() == 1


def test_a_new_round_length_sends_the_open_rounds_clock_for_its_new_time(manager, django_capture_on_commit_callbacks):
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 600})
    with inline():
        do_start_workspace(room, manager)
        run_round_work(room)
    Turn.objects.filter(room=room, number=1).update(started_at=timezone.now() - timedelta(seconds=30))
    step_seq, clock = clock_slot(room)
    with mock.patch("celery.current_app.send_task") as send, django_capture_on_commit_callbacks(execute=True):
        do_set_turn_policy(room, manager, {"maxSeconds": 90})
    sent = [(c.kwargs["args"], c.kwargs.get("countdown")) for c in send.call_args_list if c.args[0] == RUN_STEP_TASK]
    assert [(args[1], args[2]) for args, _ in sent] == [(step_seq, clock)]
    assert sent[0][1] == pytest.approx(60, abs=2)
