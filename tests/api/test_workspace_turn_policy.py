"""The manager changes a workspace's round pacing (PATCH ``turnPolicy``): who may, what is refused,
and how the open round follows the new policy at once."""
from datetime import timedelta

import pytest
from django.utils import timezone

from facilitation.runs.models import StepLease
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline
from facilitation.workspace.actions.lifecycle import do_complete_workspace, do_pause_workspace, do_resume_workspace, do_start_workspace
from rooms.models import Invocation, Room, RoomEvent, Turn
from tests.factories import make_discussion
from tests.workspace.helpers import clock_slot, make_workspace, run_round_work


@pytest.fixture
def ws(people):
    return make_workspace(people["owner"], viewer=people["viewer"], turn_policy={"maxEvents": 50, "maxSeconds": 600})


def patch(client, room, policy):
    return client.patch(f"/api/discussions/{room.pk}", {"turnPolicy": policy})


def _round_began(room, seconds_ago):
    Turn.objects.filter(room=room, number=Room.objects.get(pk=room.pk).round).update(
        started_at=timezone.now() - timedelta(seconds=seconds_ago))


def _clock(room):
    step_seq, slot = clock_slot(room)
    return step_seq, slot, StepLease.objects.get(room=room, slot=slot)


def test_the_manager_changes_one_setting_and_the_other_stays(clients, ws):
    r = patch(clients["owner"], ws, {"maxEvents": 20})
    assert r.status_code == 200, r.json()
    assert r.json()["data"]["turnPolicy"] == {"maxEvents": 20, "maxSeconds": 600}
    log = Invocation.objects.get(room=ws, component="manager.set_turn_policy")
    assert log.user.username == "owner"
    assert log.input == {"before": {"maxEvents": 50, "maxSeconds": 600}, "after": {"maxEvents": 20, "maxSeconds": 600}}
    assert RoomEvent.objects.filter(room=ws, type="discussion:status").exists()


@pytest.mark.parametrize("policy", [{"maxEvents": 0}, {"maxSeconds": 4}, {"maxSeconds": "soon"}, {"every": 3}, "fast", []])
def test_a_bad_policy_is_400_and_changes_nothing(clients, ws, policy):
    r = patch(clients["owner"], ws, policy)
    assert r.status_code == 400 and r.json()["error"]["details"], r.json()
    assert Room.objects.get(pk=ws.pk).turn_policy == {"maxEvents": 50, "maxSeconds": 600}
    assert not Invocation.objects.filter(room=ws, component="manager.set_turn_policy").exists()


@pytest.mark.parametrize("caller, status", [("viewer", 403), ("other", 404), ("anonymous", 401)])
def test_only_the_manager_changes_it(clients, ws, caller, status):
    assert patch(clients[caller], ws, {"maxEvents": 3}).status_code == status
    assert Room.objects.get(pk=ws.pk).turn_policy == {"maxEvents": 50, "maxSeconds": 600}


def test_a_discussion_has_no_turn_policy(clients, people):
    room = make_discussion(people["owner"])
    r = patch(clients["owner"], room, {"maxEvents": 3})
    assert r.status_code == 400 and r.json()["error"]["message"] == "turnPolicy is for workspace rooms."
    assert Room.objects.get(pk=room.pk).turn_policy == {}


def test_a_closed_workspace_keeps_its_policy(clients, ws, people):
    with inline():
        do_start_workspace(ws, people["owner"])
        do_complete_workspace(ws, people["owner"])
    r = patch(clients["owner"], ws, {"maxEvents": 3})
    assert r.status_code == 409 and r.json()["error"]["code"] == "room_closed"
    assert Room.objects.get(pk=ws.pk).turn_policy == {"maxEvents": 50, "maxSeconds": 600}


def test_a_shorter_round_moves_the_open_rounds_clock_and_ends_a_round_already_that_long(clients, ws, people):
    with inline():
        do_start_workspace(ws, people["owner"])
        run_round_work(ws)
        _round_began(ws, 120)
        # Five minutes: the clock now comes three minutes from now instead of eight.
        assert patch(clients["owner"], ws, {"maxSeconds": 300}).status_code == 200
        step_seq, slot, lease = _clock(ws)
        assert 175 <= (lease.ready_at - timezone.now()).total_seconds() <= 181
        assert run_step(ws.pk, step_seq, slot=slot).outcome == "not_claimable"
        # One minute: the round is already longer, so its clock is ready now and ends it.
        assert patch(clients["owner"], ws, {"maxSeconds": 60}).status_code == 200
        step_seq, slot, lease = _clock(ws)
        assert lease.ready_at <= timezone.now()
        assert run_step(ws.pk, step_seq, slot=slot).outcome == "committed"
    turn = Turn.objects.get(room=ws, number=1)
    assert turn.ended_at is not None and turn.ended_by == Turn.EndedBy.POLICY


def test_a_longer_round_postpones_a_clock_that_comes_at_the_old_time(clients, ws, people):
    with inline():
        do_start_workspace(ws, people["owner"])
        run_round_work(ws)
        assert patch(clients["owner"], ws, {"maxSeconds": 3600}).status_code == 200
        step_seq, slot, lease = _clock(ws)
        assert 3590 <= (lease.ready_at - timezone.now()).total_seconds() <= 3600
        _round_began(ws, 601)  # the old length has passed, the new one has not
        StepLease.objects.filter(pk=lease.pk).update(ready_at=timezone.now() - timedelta(seconds=1))
        assert run_step(ws.pk, step_seq, slot=slot).outcome == "postponed"
    assert Turn.objects.get(room=ws, number=1).ended_at is None


def test_fewer_observations_per_round_end_a_round_that_already_has_them(clients, ws, people):
    with inline():
        do_start_workspace(ws, people["owner"])
        run_round_work(ws)
    held = Turn.objects.get(room=ws, number=1).event_count
    assert held >= 2
    assert patch(clients["owner"], ws, {"maxEvents": held + 1}).status_code == 200
    assert Turn.objects.get(room=ws, number=1).ended_at is None
    assert patch(clients["owner"], ws, {"maxEvents": held}).status_code == 200
    turn = Turn.objects.get(room=ws, number=1)
    assert turn.ended_by == Turn.EndedBy.POLICY and Room.objects.get(pk=ws.pk).round == 2


def test_a_paused_workspace_takes_the_new_length_when_it_resumes(clients, ws, people):
    with inline():
        do_start_workspace(ws, people["owner"])
        run_round_work(ws)
        do_pause_workspace(ws, people["owner"])
        _round_began(ws, 900)
        assert patch(clients["owner"], ws, {"maxSeconds": 120}).status_code == 200
        assert Turn.objects.get(room=ws, number=1).ended_at is None  # paused: no round ends meanwhile
        StepLease.objects.filter(room=ws, slot=clock_slot(ws)[1]).update(ready_at=timezone.now() - timedelta(seconds=1))
        do_resume_workspace(ws, people["owner"])
        _, _, lease = _clock(ws)
    assert 115 <= (lease.ready_at - timezone.now()).total_seconds() <= 121

