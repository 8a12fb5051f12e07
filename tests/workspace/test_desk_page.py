"""The desk page: served to people who may view the workspace, with the controls their access allows."""
import json
import re
from pathlib import Path

import pytest
from django.conf import settings

from rooms.models import Agent, RoomMember, Seat
from tests.factories import make_discussion, make_user
from tests.workspace.helpers import make_workspace


@pytest.fixture
def setup(db, client):
    owner, viewer, stranger = make_user("boss"), make_user("watcher"), make_user("stranger")
    room = make_workspace(owner, viewer=viewer)
    return client, room, owner, viewer, stranger


def test_owner_gets_the_desk_with_controls(setup):
    client, room, owner, _, _ = setup
    client.force_login(owner)
    page = client.get(f"/workspaces/{room.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="btn-end-round"' in html and 'id="task-form"' in html and "convene/workspace.js" in html
    assert client.get(f"/discussions/{room.pk}/").url == f"/workspaces/{room.pk}/"


def test_viewer_sees_no_controls_and_strangers_nothing(setup):
    client, room, _, viewer, stranger = setup
    client.force_login(viewer)
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    assert 'id="btn-end-round"' not in html and 'id="task-form"' not in html and 'id="invocations"' not in html
    client.force_login(stranger)
    assert client.get(f"/workspaces/{room.pk}/").status_code == 404


def test_people_who_may_not_change_the_workspace_are_told_what_they_may_do_and_who_runs_it(setup):
    client, room, owner, viewer, _ = setup
    participant = make_user("helper")
    RoomMember.objects.create(room=room, user=participant, access=RoomMember.Access.PARTICIPANT)
    said = {}
    for user in (owner, viewer, participant):
        client.force_login(user)
        html = client.get(f"/workspaces/{room.pk}/").content.decode()
        note = re.search(r'<p id="access-note"[^>]*>(.*?)</p>', html, re.S)
        said[user.username] = " ".join(re.sub(r"<[^>]+>", "", note.group(1)).split()) if note else None
    assert said["boss"] is None  # the manager's desk has the controls instead
    assert said["watcher"].startswith("You may read this workspace. Its manager runs it: only the manager starts")
    assert said["helper"].startswith("You may read this workspace and publish observations in it. Its manager runs it")


def test_a_discussion_opened_as_a_workspace_goes_to_its_own_page(setup):
    client, room, owner, _, stranger = setup
    discussion = make_discussion(owner)
    client.force_login(owner)
    response = client.get(f"/workspaces/{discussion.pk}/")
    assert response.status_code == 302 and response.url == f"/discussions/{discussion.pk}/"
    # Nobody learns that a room they may not see exists: still the plain "not found".
    client.force_login(stranger)
    assert client.get(f"/workspaces/{discussion.pk}/").status_code == 404
    assert client.get("/workspaces/999999/").status_code == 404


def test_the_desk_reads_each_seat_s_alias_and_whose_agent_it_is_from_the_room(setup):
    """The desk labels agents of one name from the room's REST answer (as the room page does): each participant and
    the narrator carry the agent's alias, isBuiltin and owner, for a viewer too; the page brings no copy of them."""
    client, room, owner, viewer, _ = setup
    builtin = Seat.objects.filter(room=room, role="participant").select_related("agent").order_by("position").first()
    mine = Agent.objects.create(name=builtin.agent.name, alias="twin-of-mine", created_by=owner)
    twin = Seat.objects.create(room=room, agent=mine, role="participant", position=99)
    client.force_login(viewer)
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    data = json.loads(re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert not {"seats", "agentOwners", "idlePause"} & set(data)
    answer = client.get(f"/api/discussions/{room.pk}").json()["data"]
    seats = {s["seatId"]: s for s in answer["participants"]}
    assert {k: seats[twin.pk][k] for k in ("agentId", "name", "alias", "isBuiltin", "owner")} == {
        "agentId": mine.pk, "name": mine.name, "alias": "twin-of-mine", "isBuiltin": False, "owner": owner.username}
    assert {k: seats[builtin.pk][k] for k in ("alias", "isBuiltin", "owner")} == {
        "alias": builtin.agent.alias, "isBuiltin": True, "owner": None}
    assert {k: answer["moderator"][k] for k in ("id", "isBuiltin", "owner")} == {"id": room.moderator_id, "isBuiltin": True, "owner": None}
    assert answer["idlePause"] is None


def test_the_desk_says_before_it_happens_when_the_workspace_pauses_itself(setup, settings):
    """The pacing line names the idle pause up front (the limits the server keeps), and that reading the desk
    does not keep the workspace from it: a desk left open in a forgotten tab would keep the agents spending."""
    client, room, owner, viewer, _ = setup
    settings.CONVENE = {**settings.CONVENE, "WORKSPACE_IDLE_PAUSE": 3600, "WORKSPACE_IDLE_ROUNDS": 3}
    client.force_login(viewer)
    pacing = re.search(r'<span id="pacing-live">(.*?)</span>\s*<span id="pacing-closed"', client.get(f"/workspaces/{room.pk}/")
                       .content.decode(), re.S).group(1)
    text = " ".join(re.sub(r"<[^>]+>", "", pacing).split())
    assert "It pauses itself after an hour in which nobody acts in it, or once 3 rounds in a row have ended by themselves" in text
    assert "reading this page is not acting" in text
    settings.CONVENE = {**settings.CONVENE, "WORKSPACE_IDLE_PAUSE": 0, "WORKSPACE_IDLE_ROUNDS": 1}
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    text = " ".join(re.sub(r"<[^>]+>", "", html).split())
    assert "It pauses itself once a round has ended by itself since somebody last acted in it" in text and "an hour" not in text
    settings.CONVENE = {**settings.CONVENE, "WORKSPACE_IDLE_PAUSE": 0, "WORKSPACE_IDLE_ROUNDS": 0}
    assert "It pauses itself" not in client.get(f"/workspaces/{room.pk}/").content.decode()


def test_the_desk_takes_the_narrative_s_length_limit_from_the_server_s_check(setup):
    """The editor counts against the limit the server refuses a narrative over (one number: the page data carries
    ``facilitation.workspace.inputs.NARRATIVE``), not a copy of it in the page's code."""
    from facilitation.workspace import inputs

    client, room, owner, _, _ = setup
    client.force_login(owner)
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    data = json.loads(re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert data["narrativeLimit"] == inputs.NARRATIVE
    assert 'id="narrative-length"' in html
    # A task's description is counted against the limit do_create_task and do_edit_task check it by.
    assert data["taskDescriptionLimit"] == inputs.COMMENT
    assert 'id="task-description-length"' in html
    script = (Path(settings.BASE_DIR) / "frontend" / "static" / "convene" / "workspace.js").read_text()
    assert str(inputs.NARRATIVE) not in script and f"{inputs.NARRATIVE:_}" not in script


def test_the_desk_takes_the_budget_s_upper_limit_from_the_server_s_check(setup):
    """The USD budget field stops at the largest budget the server takes (page data: ``MAX_USD``), not a copy of it."""
    from facilitation.actions.inputs import MAX_USD

    client, room, owner, _, _ = setup
    client.force_login(owner)
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    data = json.loads(re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert data["budgetUsdLimit"] == float(MAX_USD)
    script = (Path(settings.BASE_DIR) / "frontend" / "static" / "convene" / "workspace.js").read_text()
    assert "page.budgetUsdLimit" in script and str(MAX_USD) not in script


def test_a_viewer_gets_the_narrative_to_read_and_the_manager_an_editor(setup):
    client, room, owner, viewer, _ = setup
    client.force_login(viewer)
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    assert 'id="narrative-read"' in html and 'id="narrative-content"' not in html and "<textarea" not in html
    client.force_login(owner)
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    assert re.search(r'<textarea id="narrative-content"[^>]*>', html) and 'id="narrative-read"' not in html


def test_the_desk_takes_the_token_budget_s_upper_limit_from_the_server_s_check(setup):
    """The token budget field stops at the largest budget the server takes (page data: ``MAX_BIG``), with a help
    line the field is described by."""
    from facilitation.actions.inputs import MAX_BIG

    client, room, owner, _, _ = setup
    client.force_login(owner)
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    data = json.loads(re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert data["budgetTokensLimit"] == MAX_BIG
    assert re.search(r'<input id="budget-tokens" type="number" min="1" step="1"[^>]*aria-describedby="budget-tokens-help"', html)
    assert 'id="budget-tokens-help"' in html
    script = (Path(settings.BASE_DIR) / "frontend" / "static" / "convene" / "workspace.js").read_text()
    assert "page.budgetTokensLimit" in script and str(MAX_BIG) not in script
