"""A workspace nobody tends pauses itself at the end of a round (``CONVENE["WORKSPACE_IDLE_PAUSE"]``)."""
from datetime import timedelta

import pytest
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from facilitation.runs.models import StepLease
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline
from facilitation.workspace.actions.lifecycle import do_pause_workspace, do_resume_workspace, do_start_workspace
from facilitation.workspace.actions.observations import do_post_observation
from facilitation.workspace.actions.rounds import do_end_round
from facilitation.workspace.actions.status import last_idle_pause, pause_if_idle
from facilitation.workspace.rules import locked
from rooms.models import Invocation, Narrative, Observation, Room, RoomEvent, RoomMember, Turn
from tests.factories import make_user
from tests.workspace.helpers import clock_slot, make_workspace, run_round_work


@pytest.fixture
def manager(db):
    return make_user("absentmanager")


@pytest.fixture
def hour_limit(settings):
    settings.CONVENE = {**settings.CONVENE, "WORKSPACE_IDLE_PAUSE": 3600}


def _nobody_acted_for(room, seconds):
    """Move every person's action in the room, and its start, ``seconds`` into the past."""
    past = timezone.now() - timedelta(seconds=seconds)
    Invocation.objects.filter(room=room, user__isnull=False).update(created_at=past)
    Room.objects.filter(pk=room.pk).update(started_at=past)


def _clock_runs_out(room):
    """The open round's clock ends it (as a worker would once ``maxSeconds`` passed)."""
    room = Room.objects.get(pk=room.pk)
    Turn.objects.filter(room=room, number=room.round).update(started_at=timezone.now() - timedelta(hours=1))
    step_seq, clock = clock_slot(room)
    StepLease.objects.filter(room=room, step_seq=step_seq, slot=clock).update(ready_at=timezone.now() - timedelta(seconds=1))
    assert run_step(room.pk, step_seq, slot=clock).outcome == "committed"


def _started(manager, **kwargs):
    room = make_workspace(manager, **kwargs)
    do_start_workspace(room, manager)
    run_round_work(room)
    return room


def _agent_observations(room, number):
    return Observation.objects.filter(room=room, round=number, author_kind="agent").count()


def test_a_round_that_ends_by_itself_in_a_workspace_nobody_tends_pauses_it(manager, hour_limit, client):
    with inline():
        room = _started(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        assert _agent_observations(room, 1) > 0
        _nobody_acted_for(room, 3601)
        _clock_runs_out(room)
        run_round_work(room)  # the ended round's close
    room.refresh_from_db()
    assert (room.status, room.pause_reason, room.round) == ("paused", "idle", 2)
    # The ended round still got its narrative; the next round's agents wait for somebody to resume.
    assert Narrative.objects.filter(room=room, round=1).count() == 1
    assert _agent_observations(room, 2) == 0
    pause = Invocation.objects.get(room=room, component="room.idle_pause")
    # The audit row names what fired: nobody acted for the hour (one round ended by itself, not three).
    assert pause.user_id is None and pause.input == {"from": "active", "to": "paused", "triggers": ["time"], "idleSeconds": 3600}
    status = RoomEvent.objects.filter(room=room, type="discussion:status").last()
    assert status.payload["status"] == "paused"
    client.force_login(manager)
    assert client.get(f"/api/discussions/{room.pk}").json()["data"]["pauseReason"] == "idle"
    listed = {d["id"]: d for d in client.get("/api/discussions").json()["data"]}
    assert listed[room.pk]["pauseReason"] == "idle"
    # Resuming is acting: the reason goes and the agents work round 2.
    with inline():
        do_resume_workspace(room, manager)
        run_round_work(room)
    room.refresh_from_db()
    assert (room.status, room.pause_reason) == ("active", "")
    assert _agent_observations(room, 2) > 0
    assert client.get(f"/api/discussions/{room.pk}").json()["data"]["pauseReason"] is None


def test_a_person_who_acted_within_the_limit_keeps_it_running(manager, hour_limit):
    with inline():
        room = _started(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        _nobody_acted_for(room, 7200)
        do_post_observation(room, manager, event_type="question", content="Who owns the retry queue?")
        _clock_runs_out(room)
        run_round_work(room)
    room.refresh_from_db()
    assert (room.status, room.pause_reason, room.round) == ("active", "", 2)
    assert _agent_observations(room, 2) > 0
    assert not Invocation.objects.filter(room=room, component="room.idle_pause").exists()


def test_a_round_that_ends_on_its_observation_count_pauses_an_idle_workspace_too(manager, hour_limit):
    with inline():
        room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        do_start_workspace(room, manager)
        _nobody_acted_for(room, 3601)
        Room.objects.filter(pk=room.pk).update(turn_policy={"maxEvents": 2, "maxSeconds": 60})
        run_round_work(room)  # the agents publish; the second observation ends the round
    room.refresh_from_db()
    assert Turn.objects.get(room=room, number=1).ended_by == Turn.EndedBy.POLICY
    assert (room.status, room.pause_reason) == ("paused", "idle")
    # The pause came in the same transaction as the last agent's usage, which it keeps.
    used = Invocation.objects.filter(room=room).aggregate(n=Sum("input_tokens") + Sum("output_tokens"))["n"]
    assert used and room.tokens_used == used


def test_the_manager_ending_a_round_or_pausing_is_not_an_idle_pause(manager, hour_limit, client):
    with inline():
        room = _started(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        _nobody_acted_for(room, 7200)
        do_end_round(room, manager)
        run_round_work(room)
        room.refresh_from_db()
        assert room.status == "active"
        do_pause_workspace(room, manager)
    room.refresh_from_db()
    assert (room.status, room.pause_reason) == ("paused", "")
    client.force_login(manager)
    assert client.get(f"/api/discussions/{room.pk}").json()["data"]["pauseReason"] is None


def test_a_limit_of_zero_never_pauses(manager, settings):
    settings.CONVENE = {**settings.CONVENE, "WORKSPACE_IDLE_PAUSE": 0}
    with inline():
        room = _started(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        _nobody_acted_for(room, 10 * 86400)
        _clock_runs_out(room)
        run_round_work(room)
    room.refresh_from_db()
    assert (room.status, room.round) == ("active", 2)
    assert _agent_observations(room, 2) > 0


def test_the_desk_says_why_the_workspace_paused(manager, client):
    room = make_workspace(manager)
    client.force_login(manager)
    page = client.get(f"/workspaces/{room.pk}/").content.decode()
    assert 'id="idle-notice"' in page and "Resume it to set the agents back to work." in page
    assert 'or <span id="idle-rounds">several</span> rounds in a row had ended by themselves since somebody last did' in page
    assert '"idlePauseSeconds": 3600' in page and '"idleRounds": 3' in page  # the desk fills in the numbers


@pytest.fixture
def three_rounds(settings):
    settings.CONVENE = {**settings.CONVENE, "WORKSPACE_IDLE_PAUSE": 3600, "WORKSPACE_IDLE_ROUNDS": 3}


def _rounds_ended_by_themselves(room):
    return list(Turn.objects.filter(room=room, ended_by=Turn.EndedBy.POLICY).order_by("number").values_list("number", flat=True))


def test_a_tiny_max_events_stops_after_the_idle_number_of_rounds_that_ended_by_themselves(manager, three_rounds, client):
    # Two agents publish two observations each: every round ends as soon as they have published.
    with inline():
        room = make_workspace(manager, agents=2, turn_policy={"maxEvents": 2, "maxSeconds": 300})
        do_start_workspace(room, manager)
        run_round_work(room)  # without the limit: round after round, as long as the loop lets it
    room.refresh_from_db()
    assert (room.status, room.pause_reason, room.round) == ("paused", "idle", 4)
    assert _rounds_ended_by_themselves(room) == [1, 2, 3]
    assert list(Narrative.objects.filter(room=room).order_by("round").values_list("round", flat=True)) == [1, 2, 3]
    assert _agent_observations(room, 4) == 0
    pause = Invocation.objects.get(room=room, component="room.idle_pause", user__isnull=True)
    assert pause.input == {"from": "active", "to": "paused", "triggers": ["rounds"], "idleRounds": 3}
    assert last_idle_pause(room) == {"id": pause.pk, "triggers": ["rounds"], "idleRounds": 3}
    client.force_login(manager)
    answer = client.get(f"/api/discussions/{room.pk}").json()["data"]
    assert (answer["pauseReason"], answer["idlePause"]) == ("idle", {"triggers": ["rounds"], "idleSeconds": None, "idleRounds": 3})
    # Resume (a person acting): the agents work again, for three more rounds at most.
    with inline():
        do_resume_workspace(room, manager)
        run_round_work(room)
    room.refresh_from_db()
    assert (room.status, room.pause_reason, room.round) == ("paused", "idle", 7)
    assert _agent_observations(room, 4) > 0 and _agent_observations(room, 7) == 0
    assert Invocation.objects.filter(room=room, component="room.idle_pause").count() == 2
    assert last_idle_pause(room)["id"] == Invocation.objects.filter(room=room, component="room.idle_pause").last().pk


def test_a_person_acting_between_rounds_starts_the_count_again(manager, three_rounds):
    with inline():
        room = make_workspace(manager, agents=2, turn_policy={"maxEvents": 50, "maxSeconds": 60})
        do_start_workspace(room, manager)
        run_round_work(room)
        for _ in range(2):
            _clock_runs_out(room)
            run_round_work(room)
        do_post_observation(room, manager, event_type="question", content="Which queue do we pick?")
        for _ in range(2):
            _clock_runs_out(room)
            run_round_work(room)
        room.refresh_from_db()
        assert (room.status, room.round) == ("active", 5)  # four automatic rounds, but never three in a row
        _clock_runs_out(room)
        run_round_work(room)
    room.refresh_from_db()
    assert (room.status, room.pause_reason, room.round) == ("paused", "idle", 6)


def test_an_idle_rounds_setting_of_zero_leaves_the_rounds_running(manager, settings):
    settings.CONVENE = {**settings.CONVENE, "WORKSPACE_IDLE_PAUSE": 3600, "WORKSPACE_IDLE_ROUNDS": 0}
    with inline():
        room = make_workspace(manager, agents=2, turn_policy={"maxEvents": 2, "maxSeconds": 300})
        do_start_workspace(room, manager)
        run_round_work(room)
    room.refresh_from_db()
    assert room.status == "active" and room.round > 4


def test_both_triggers_are_named_when_both_fired(manager, three_rounds, client):
    with inline():
        room = _started(manager, turn_policy={"maxEvents": 50, "maxSeconds": 60})
    # Three rounds ended by themselves (no person since), and the last person acted two hours ago.
    for number in (1, 2, 3):
        Invocation.objects.create(room=room, component="round.end", correlation_id=f"end-{number}", input={"round": number})
    _nobody_acted_for(room, 7200)
    with transaction.atomic():
        assert pause_if_idle(locked(room.pk), "both-check")
    pause = Invocation.objects.get(room=room, component="room.idle_pause")
    assert pause.input == {"from": "active", "to": "paused", "triggers": ["time", "rounds"], "idleSeconds": 3600, "idleRounds": 3}
    # The room says it while it is paused for it, to everyone who may view it (the desk names it, a viewer's
    # too); once resumed, nothing (the next pause brings its own).
    viewer = make_user("idleviewer")
    RoomMember.objects.create(room=room, user=viewer, access=RoomMember.Access.VIEWER)
    for person in (manager, viewer):
        client.force_login(person)
        assert client.get(f"/api/discussions/{room.pk}").json()["data"]["idlePause"] == {
            "triggers": ["time", "rounds"], "idleSeconds": 3600, "idleRounds": 3}
    with inline():
        do_resume_workspace(room, manager)
    assert client.get(f"/api/discussions/{room.pk}").json()["data"]["idlePause"] is None
    # Paused by a person, or for its budget: no idle cause is named.
    with inline():
        do_pause_workspace(room, manager)
    assert client.get(f"/api/discussions/{room.pk}").json()["data"]["idlePause"] is None


def test_an_idle_pause_logged_before_its_triggers_were_kept_names_none(manager):
    room = make_workspace(manager)
    row = Invocation.objects.create(room=room, component="room.idle_pause", correlation_id="old", input={"from": "active", "to": "paused"})
    assert last_idle_pause(room) == {"id": row.pk, "triggers": []}
