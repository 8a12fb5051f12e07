"""A workspace keeps to its budgets: the room's (used up: no more calls, the room pauses itself and
says why) and each agent's (used up: that agent sits its rounds out); the manager raises them."""
import pytest

from facilitation.llm import rehearsal
from facilitation.runs.scheduling import inline
from facilitation.workspace import rounds
from facilitation.workspace.actions.lifecycle import do_start_workspace
from facilitation.workspace.actions.rounds import do_end_round
from rooms.models import Agent, Invocation, Narrative, Observation, Room, RoomEvent, Turn
from tests.factories import make_user
from tests.workspace.helpers import agent_seats, make_workspace, run_round_work


@pytest.fixture
def manager(db):
    return make_user("thrifty")


@pytest.fixture
def calls(monkeypatch):
    """The purpose of every model call the workspace makes (its agents and narrator run on the offline model)."""
    made = []

    class Counting(rehearsal.RehearsalProvider):
        def complete(self, request):
            made.append(request.purpose)
            return super().complete(request)

    monkeypatch.setattr(rounds, "provider_for", lambda name="": Counting())
    return made


def _paused_for_its_budget(manager):
    """A workspace whose 50-token budget its first round's first call would go over."""
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 600})
    Room.objects.filter(pk=room.pk).update(budget_tokens=50)
    with inline():
        do_start_workspace(room, manager)
        run_round_work(room)
    return room


def _agent_observations(room):
    return Observation.objects.filter(room=room, author_kind="agent").count()


def test_a_used_up_room_budget_makes_no_call_and_pauses_the_workspace(manager, calls, client):
    room = _paused_for_its_budget(manager)
    room.refresh_from_db()
    assert calls == [] and _agent_observations(room) == 0
    assert (room.status, room.pause_reason) == ("paused", "budget")
    refused = Invocation.objects.filter(room=room, component="agent.round_work")
    assert refused.count() == 1 and not refused[0].success
    assert "The next call would go over the workspace's budget: a call may use up to" in refused[0].error
    pause = Invocation.objects.get(room=room, component="room.budget_pause")
    assert pause.user_id is None and pause.input["need"]["tokens"] > 50
    assert RoomEvent.objects.filter(room=room, type="discussion:status").last().payload["status"] == "paused"
    client.force_login(manager)
    assert client.get(f"/api/discussions/{room.pk}").json()["data"]["pauseReason"] == "budget"
    # Resuming without raising the budget is refused: nothing could run.
    r = client.post(f"/api/discussions/{room.pk}/resume")
    assert r.status_code == 409 and r.json()["error"]["code"] == "budget_exceeded"
    assert r.json()["error"]["message"].startswith("Raise the budget to at least ")
    assert Room.objects.get(pk=room.pk).status == "paused"
    # The manager raises the budget and resumes: every agent works in round 1, the one that sat out too.
    r = client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": 1_000_000}, content_type="application/json")
    assert r.status_code == 200 and r.json()["data"]["budgetTokens"] == 1_000_000
    with inline():
        assert client.post(f"/api/discussions/{room.pk}/resume").status_code == 200
        run_round_work(room)
    room.refresh_from_db()
    assert room.status == "active" and room.round == 1
    assert calls == ["workspace.observations"] * 3
    assert all(Observation.objects.filter(room=room, seat=seat, round=1).exists() for seat in agent_seats(room))


def test_a_budget_raised_too_little_is_still_refused_and_a_pause_by_hand_resumes(manager, calls, client):
    room = _paused_for_its_budget(manager)
    need = Invocation.objects.get(room=room, component="room.budget_pause").input["need"]["tokens"]
    client.force_login(manager)
    client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": 3 * need - 1}, content_type="application/json")
    assert client.post(f"/api/discussions/{room.pk}/resume").status_code == 409
    client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": 3 * need}, content_type="application/json")
    assert client.post(f"/api/discussions/{room.pk}/resume").status_code == 200
    # A pause by hand is never refused for the budget.
    assert client.post(f"/api/discussions/{room.pk}/pause").status_code == 200
    assert client.post(f"/api/discussions/{room.pk}/resume").status_code == 200


def test_an_agent_over_its_own_budget_sits_the_round_out_and_the_others_work(manager, calls):
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 600})
    thrifty, *others = agent_seats(room)
    Agent.objects.filter(pk=thrifty.agent_id).update(budget_tokens=10)
    with inline():
        do_start_workspace(room, manager)
        run_round_work(room)
    room.refresh_from_db()
    assert room.status == "active"
    assert not Observation.objects.filter(room=room, seat=thrifty).exists()
    assert all(Observation.objects.filter(room=room, seat=seat).exists() for seat in others)
    skipped = Invocation.objects.get(room=room, component="agent.round_work", agent_id=thrifty.agent_id)
    assert not skipped.success and f"{thrifty.agent.name} has used up its budget" in skipped.error
    assert len(calls) == len(others)


def test_a_narrative_over_budget_is_the_offline_one_without_a_call(manager, calls):
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 600})
    with inline():
        do_start_workspace(room, manager)
        run_round_work(room)
        room.refresh_from_db()
        Room.objects.filter(pk=room.pk).update(budget_tokens=room.tokens_used + 1)
        made = len(calls)
        do_end_round(room, manager)
        run_round_work(room)
    narrative = Narrative.objects.get(room=room, round=1)
    assert narrative.provider == "rehearsal" and narrative.content
    generate = Invocation.objects.get(room=room, component="narrative.generate")
    assert not generate.success and generate.input["fallback"] is True and "would go over the workspace's budget" in generate.error
    # The close made no model call (the offline narrative is written from the round's text); round 2's
    # first agent found the budget used up and paused the room.
    assert "workspace.narrative" not in calls[made:] and Room.objects.get(pk=room.pk).pause_reason == "budget"


def test_a_resume_is_checked_against_every_call_the_round_still_has_to_make(manager, calls, client):
    """A budget that covers the refused call but not the round's other agents' calls would pause the workspace
    again right after the resume: the resume is refused and says how much budget the round needs."""
    room = _paused_for_its_budget(manager)
    need = Invocation.objects.get(room=room, component="room.budget_pause").input["need"]["tokens"]
    client.force_login(manager)
    client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": need}, content_type="application/json")
    r = client.post(f"/api/discussions/{room.pk}/resume")
    assert r.status_code == 409 and r.json()["error"]["code"] == "budget_exceeded"
    error = r.json()["error"]
    assert error["details"]["calls"] == 3 and error["details"]["neededTokens"] == 3 * need
    assert error["message"].startswith(f"Raise the budget to at least {3 * need:,} tokens first: 3 agents")
    assert Room.objects.get(pk=room.pk).status == "paused" and calls == []
    # The budget the message names lets the whole round run: every agent works, and the workspace stays active.
    client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": error["details"]["neededTokens"]}, content_type="application/json")
    with inline():
        assert client.post(f"/api/discussions/{room.pk}/resume").status_code == 200
        run_round_work(room)
    room.refresh_from_db()
    assert (room.status, room.round) == ("active", 1) and calls == ["workspace.observations"] * 3
    assert all(Observation.objects.filter(room=room, seat=seat, round=1).exists() for seat in agent_seats(room))


def test_a_budget_lowered_to_what_is_spent_pauses_an_active_workspace_at_once(manager, calls, client):
    """Over the API too: a budget at or below what is spent pauses the workspace for its budget in the same request,
    instead of at its agents' next call (perhaps a round later); the resume waits for a budget above what is spent."""
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 600})
    with inline():
        do_start_workspace(room, manager)
        run_round_work(room)
    room.refresh_from_db()
    spent = room.tokens_used
    assert room.status == "active" and spent > 0
    client.force_login(manager)
    raised = client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": spent + 10_000}, content_type="application/json")
    assert raised.status_code == 200 and raised.json()["data"]["status"] == "active"  # room left: nothing changes
    r = client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": spent}, content_type="application/json")
    assert r.status_code == 200
    assert (r.json()["data"]["status"], r.json()["data"]["pauseReason"]) == ("paused", "budget")
    pause = Invocation.objects.get(room=room, component="room.budget_pause")
    assert pause.input["cause"] == "budget lowered"
    assert RoomEvent.objects.filter(room=room, type="discussion:status", payload__status="paused").exists()
    refused = client.post(f"/api/discussions/{room.pk}/resume")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "budget_exceeded"
    # No call was refused, so none said what it may use: the refusal does not claim one may use 1 token.
    message = refused.json()["error"]["message"]
    assert "each call needs the budget above what is spent" in message and "up to 1 tokens" not in message, message
    assert message.startswith("Raise the budget to at least ")
    client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": spent + 10_000}, content_type="application/json")
    assert client.post(f"/api/discussions/{room.pk}/resume").status_code == 200


def test_a_budget_saved_with_a_pause_in_one_request_leaves_its_audit_rows_in_one_correlation(manager, calls, client):
    """One PATCH that saves a budget and pauses the workspace (asked for, or because the budget is used up) leaves
    the budget's row and the pause's row under one correlation id: the round's chain."""
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 600})
    with inline():
        do_start_workspace(room, manager)
        run_round_work(room)
    room.refresh_from_db()
    chain = Turn.objects.get(room=room, number=1).correlation_id
    client.force_login(manager)
    r = client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": room.tokens_used + 10_000, "status": "paused"},
                     content_type="application/json")
    assert r.status_code == 200 and r.json()["data"]["status"] == "paused"
    update = Invocation.objects.filter(room=room, component="room.update").latest("id")
    pause = Invocation.objects.get(room=room, component="manager.pause_room")
    assert update.input["after"]["budgetTokens"] == room.tokens_used + 10_000
    assert update.correlation_id == pause.correlation_id == chain
    assert client.post(f"/api/discussions/{room.pk}/resume").status_code == 200
    # A budget lowered to what is spent pauses the workspace in the same request: one correlation too.
    r = client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": room.tokens_used}, content_type="application/json")
    assert r.json()["data"]["pauseReason"] == "budget"
    update = Invocation.objects.filter(room=room, component="room.update").latest("id")
    pause = Invocation.objects.get(room=room, component="room.budget_pause")
    assert update.input["after"]["budgetTokens"] == room.tokens_used
    assert update.correlation_id == pause.correlation_id == chain


def test_a_budget_saved_with_the_start_in_one_request_shares_the_start_s_correlation(manager, calls, client):
    """Before its first round a workspace has no round chain: the budget's row and the start's row of one PATCH still
    share the request's one correlation id (round 1 then opens its own chain)."""
    room = make_workspace(manager, turn_policy={"maxEvents": 50, "maxSeconds": 600})
    client.force_login(manager)
    with inline():
        r = client.patch(f"/api/discussions/{room.pk}", {"budgetTokens": 1_000_000, "status": "active"},
                         content_type="application/json")
    assert r.status_code == 200 and r.json()["data"]["status"] == "active"
    update = Invocation.objects.get(room=room, component="room.update")
    start = Invocation.objects.get(room=room, component="manager.start_room")
    assert update.input["after"]["budgetTokens"] == 1_000_000 and update.correlation_id == start.correlation_id
