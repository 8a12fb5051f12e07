"""The desk shows the workspace as it is: agents of one name told apart, each seat's own persona and
role, the latest narrative as rounds end, why it paused itself, and the room without the socket too.

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import re
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from facilitation.workspace.actions.status import pause_if_idle
from facilitation.workspace.rules import locked
from rooms.models import Agent, Invocation, Narrative, Role, RoomMember, Seat, TaskAssignment
from tests.browser.conftest import api, shot
from tests.browser.test_workspace_desk import create_workspace, typed
from tests.browser.test_workspace_desk_feedback import open_desk, running_workspace
from tests.factories import make_facilitator, make_participant
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def options(page, selector):
    return page.locator(f"{selector} option").all_inner_texts()


def test_agents_of_one_name_are_told_apart_on_the_desk(make_page):
    page, manager = make_page("tara")
    builtin = Agent.objects.get(is_builtin=True, alias="architect")
    Agent.objects.filter(pk=builtin.pk).update(provider="rehearsal")  # the stack's default is the scripted model
    status, body = api(page, "POST", "agents", {"name": "Architect", "provider": "rehearsal"})
    assert status == 201, body
    mine = Agent.objects.get(pk=body["data"]["id"])
    assert mine.alias != builtin.alias
    narrator = make_facilitator("Narrator", key="twin-narrator", provider="rehearsal")
    status, body = api(page, "POST", "discussions", {
        "kind": "workspace", "name": "Twins", "topic": "Split the billing service", "moderatorId": narrator.pk,
        "turnPolicy": {"maxEvents": 1000, "maxSeconds": 3600},
        "participants": [{"agentId": builtin.pk, "role": "participant"}, {"agentId": mine.pk, "role": "participant"}]})
    assert status == 201, body
    room_id = body["data"]["id"]
    theirs_seat = Seat.objects.get(room_id=room_id, agent=builtin)
    my_seat = Seat.objects.get(room_id=room_id, agent=mine)
    theirs, ours = "Architect (@architect, built-in)", f"Architect (@{mine.alias}, yours)"

    open_desk(page, room_id)
    # Wherever a seat is chosen: the add-task form, the Agent filter, and the seats' persona and role.
    page.wait_for_function("() => document.querySelectorAll('#task-assignee option').length === 3")
    assert options(page, "#task-assignee") == ["nobody", theirs, ours]
    assert options(page, "#filter-seat") == ["all", theirs, ours]
    assert page.locator("#seats .name").all_inner_texts() == [theirs, ours]
    assert page.get_by_label(f"Persona of {ours}").count() == 1 and page.get_by_label(f"Role of {theirs}").count() == 1

    # The task goes to the twin chosen, and its card says which.
    page.get_by_label("Title").fill("Draw the service boundary")
    page.get_by_label("Assign to").select_option(label=ours)
    page.get_by_role("button", name="Add task").click()
    task = wait_for(lambda: TaskAssignment.objects.filter(room_id=room_id).first(), timeout=20)
    assert task.assignee_id == my_seat.pk
    card = page.locator(f"#board [data-task-id='{task.pk}']")
    card.wait_for()
    assert f"assigned to {ours}" in card.inner_text()
    card.get_by_role("button", name="Edit Draw the service boundary").click()
    assert options(page, "#task-edit select[name=assignee]") == ["nobody", theirs, ours]
    page.locator("#task-edit").get_by_role("button", name="Cancel").click()

    # Where a seat is shown by name: the observations' authors and the invocation log.
    assert api(page, "POST", f"discussions/{room_id}/start")[0] == 200
    wait_for(lambda: {o.seat_id for o in typed(room_id, 1)} >= {theirs_seat.pk, my_seat.pk} or None, timeout=60)
    for seat, label in ((theirs_seat, theirs), (my_seat, ours)):
        first = typed(room_id, 1).filter(seat=seat).first()
        author = page.locator(f"#observations [data-observation-id='{first.pk}'] > strong")
        author.wait_for()
        assert author.inner_text() == label
        work = Invocation.objects.filter(room_id=room_id, agent_id=seat.agent_id).last()
        who = page.locator(f"#invocations [data-invocation-id='{work.pk}'] .who")
        who.wait_for()
        assert label in who.inner_text()
    page.locator("#filter-seat").select_option(label=ours)
    assert set(page.eval_on_selector_all("#observations [data-observation-id]", "ns => ns.map(n => Number(n.dataset.observationId))")) == set(
        typed(room_id, 1).filter(seat=my_seat).values_list("pk", flat=True))
    shot(page, "workspace-desk-twins.png")
    assert page.errors == []


def drawn_at(page, seat, version):
    """Wait until the desk shows ``seat`` at ``version`` (its selects send the version they were drawn with)."""
    page.wait_for_function("([id, v]) => window.ConveneDesk.state.room.participants.find(p => p.seatId === id).version === v",
                           arg=[seat.pk, version])


def test_a_seat_without_a_persona_or_role_shows_none_and_takes_any_choice(make_page):
    page, manager = make_page("noor")
    narrator = make_facilitator("Narrator", key="plain-narrator", provider="rehearsal")
    plain = Agent.objects.create(name="Plain", alias="plain-agent", provider="rehearsal", created_by=manager)
    other = Agent.objects.create(name="Other", alias="other-agent", provider="rehearsal", created_by=manager)
    assert plain.persona_id is None and plain.role_id is None
    status, body = api(page, "POST", "discussions", {
        "kind": "workspace", "name": "Plain", "topic": "Plan the cut-over", "moderatorId": narrator.pk,
        "participants": [{"agentId": plain.pk, "role": "participant"}, {"agentId": other.pk, "role": "participant"}]})
    assert status == 201, body
    seat = Seat.objects.get(room_id=body["data"]["id"], agent=plain)
    open_desk(page, body["data"]["id"])
    persona, role = page.get_by_label("Persona of Plain"), page.get_by_label("Role of Plain")
    persona.wait_for()
    # What the seat has: nothing of its own, said as such (not the lists' first entries).
    for select in (persona, role):
        assert select.input_value() == ""
        assert select.evaluate("s => s.selectedOptions[0].textContent") == "none (the agent's own)"
    # The entry that used to show (the first) is a real choice: choosing it swaps.
    first_persona = persona.locator("option").nth(1)
    persona.select_option(first_persona.get_attribute("value"))
    wait_for(lambda: Seat.objects.get(pk=seat.pk).persona_id == int(first_persona.get_attribute("value")) or None, timeout=20)
    drawn_at(page, seat, 2)
    first_role = role.locator("option").nth(1)
    chosen_role = int(first_role.get_attribute("value"))
    role.select_option(str(chosen_role))
    wait_for(lambda: Seat.objects.get(pk=seat.pk).work_role_id == chosen_role or None, timeout=20)
    assert Role.objects.get(pk=chosen_role).key not in ("facilitator", "observer")
    # And back to none: the seat works as the agent itself again.
    drawn_at(page, seat, 3)
    assert page.get_by_label("Role of Plain").input_value() == str(chosen_role)
    page.get_by_label("Persona of Plain").select_option("")
    wait_for(lambda: Seat.objects.get(pk=seat.pk).persona_id is None or None, timeout=20)
    page.wait_for_function("() => document.querySelector('[aria-label=\"Persona of Plain\"]').value === ''")
    assert Invocation.objects.filter(room_id=seat.room_id, component="manager.swap_persona").count() == 2
    assert page.errors == []


def test_a_seat_s_selects_show_its_own_persona_and_role_not_its_agent_s(make_page):
    page, manager = make_page("ossi")
    narrator = make_facilitator("Narrator", key="own-narrator", provider="rehearsal")
    chosen, plain = (make_participant(name, alias=f"own-{name.lower()}", provider="rehearsal") for name in ("Chosen", "Plain"))
    other = make_participant("Other", alias="own-other")  # its persona and role are the ones chosen for a seat
    status, body = api(page, "POST", "discussions", {
        "kind": "workspace", "name": "Own", "topic": "Plan the cut-over", "moderatorId": narrator.pk,
        "participants": [{"agentId": chosen.pk, "role": "participant", "personaId": other.persona_id},
                         {"agentId": plain.pk, "role": "participant"}]})
    assert status == 201, body
    room_id = body["data"]["id"]
    seat = Seat.objects.get(room_id=room_id, agent=chosen)
    open_desk(page, room_id)
    persona, role = page.get_by_label("Persona of Chosen"), page.get_by_label("Role of Chosen")
    persona.wait_for()
    # The persona chosen for the seat shows, not its agent's; the role, none of its own, says so.
    assert persona.input_value() == str(other.persona_id) and persona.evaluate("s => s.selectedOptions[0].textContent") == "Other"
    assert role.input_value() == "" and role.evaluate("s => s.selectedOptions[0].textContent") == "none (the agent's own)"
    # A seat with nothing of its own says none, though its agent has a persona and a role (the lists offer them).
    for select in (page.get_by_label("Persona of Plain"), page.get_by_label("Role of Plain")):
        assert select.input_value() == "" and select.evaluate("s => s.selectedOptions[0].textContent") == "none (the agent's own)"
    assert page.get_by_label("Persona of Plain").locator(f"option[value='{plain.persona_id}']").count() == 1
    # Its role swapped: the role shows, and the persona chosen for it still does.
    role.select_option(str(other.role_id))
    wait_for(lambda: Seat.objects.get(pk=seat.pk).work_role_id == other.role_id or None, timeout=20)
    drawn_at(page, seat, 2)
    assert page.get_by_label("Role of Chosen").input_value() == str(other.role_id)
    assert page.get_by_label("Persona of Chosen").input_value() == str(other.persona_id)
    assert page.errors == []


def test_without_live_updates_the_desk_polls_and_says_so(make_page):
    page, manager = make_page("piet")
    room_id = running_workspace(page)
    # Live updates cannot connect: every Socket.IO request and WebSocket is refused.
    page.route("**/socket.io/**", lambda route: route.abort())
    page.route_web_socket(re.compile(r".*/socket\.io/.*"), lambda ws: ws.close())
    page.goto(f"/workspaces/{room_id}/")
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'polling'", timeout=15000)
    connection = page.locator("#connection")
    assert re.search(r"^Live updates unavailable, retrying · last update \d", connection.inner_text()), connection.inner_text()
    shot(page, "workspace-desk-polling.png", full_page=False)
    # What happens meanwhile arrives by polling: a task, an observation, a status change, a round's narrative.
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Check the invoice totals", "priority": 2})
    assert status == 201, body
    page.locator(f"#board [data-task-id='{body['data']['id']}']").wait_for(timeout=15000)
    status, body = api(page, "POST", f"discussions/{room_id}/observations", {"type": "question", "content": "Who owns the cut-over?"})
    assert status == 201, body
    page.locator(f"#observations [data-observation-id='{body['data']['id']}']").wait_for(timeout=15000)
    assert api(page, "POST", f"discussions/{room_id}/rounds/end")[0] == 200
    narrative = wait_for(lambda: Narrative.objects.filter(room_id=room_id, round=1).first(), timeout=60)
    page.wait_for_function("(text) => document.querySelector('#narrative-generated').textContent === text",
                           arg=narrative.generated_content, timeout=15000)
    assert api(page, "POST", f"discussions/{room_id}/pause")[0] == 200
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'paused'", timeout=15000)
    assert page.locator("#round-indicator").inner_text() == "Round 2"
    # The desk's own actions go on working on what it shows now.
    page.get_by_role("button", name="Resume").click()
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'active'", timeout=15000)
    assert connection.get_attribute("data-state") == "polling"
    assert not [e for e in page.errors if "socket.io" not in e.lower() and "websocket" not in e.lower()], page.errors


def test_the_narrative_follows_a_new_round_unless_an_edit_is_unsaved(make_page):
    page, manager = make_page("otis")
    room_id = running_workspace(page, narrative=True)
    open_desk(page, room_id)
    first = Narrative.objects.get(room_id=room_id, round=1)
    page.wait_for_function("(id) => document.querySelector('#narrative-round').value === String(id)", arg=first.pk)
    # On the latest when round 2 ends: the desk moves to round 2's narrative.
    page.get_by_role("button", name="End round").click()
    second = wait_for(lambda: Narrative.objects.filter(room_id=room_id, round=2).first(), timeout=60)
    page.wait_for_function("(id) => document.querySelector('#narrative-round').value === String(id)", arg=second.pk)
    page.wait_for_function("(text) => document.querySelector('#narrative-generated').textContent === text", arg=second.generated_content)
    assert page.locator("#narrative-content").input_value() == second.content
    assert page.locator("#narrative-new").is_hidden()
    # With changes not saved yet, the desk stays and says that round 3's arrived; the changes stay.
    page.locator("#narrative-content").fill("My notes on round 2.")
    page.get_by_role("button", name="End round").click()
    third = wait_for(lambda: Narrative.objects.filter(room_id=room_id, round=3).first(), timeout=60)
    note = page.locator("#narrative-new")
    note.wait_for()
    assert "Round 3's narrative has arrived" in note.inner_text() and "unsaved changes to round 2" in note.inner_text()
    assert page.locator("#narrative-round").input_value() == str(second.pk)
    assert page.locator("#narrative-content").input_value() == "My notes on round 2."
    page.get_by_role("button", name="Save narrative").click()
    wait_for(lambda: Narrative.objects.get(pk=second.pk).content == "My notes on round 2." or None, timeout=20)
    page.locator("#narrative-round").select_option(str(third.pk))
    assert note.is_hidden()
    assert page.locator("#narrative-content").input_value() == third.content
    # Someone reading an older round stays on it.
    page.locator("#narrative-round").select_option(str(first.pk))
    page.get_by_role("button", name="End round").click()
    wait_for(lambda: Narrative.objects.filter(room_id=room_id, round=4).first(), timeout=60)
    page.wait_for_function("() => document.querySelectorAll('#narrative-round option').length === 4")
    assert page.locator("#narrative-round").input_value() == str(first.pk) and note.is_hidden()
    assert page.errors == []


def test_the_idle_notice_names_what_made_the_workspace_pause(make_page):
    page, manager = make_page("ines")
    room_id = running_workspace(page)
    open_desk(page, room_id)
    # Three rounds ended by themselves since the manager last acted (who acted just now): the rounds fired, not the time.
    for number in (1, 2, 3):
        Invocation.objects.create(room_id=room_id, component="round.end", correlation_id=f"auto-{number}", input={"round": number})
    with transaction.atomic():
        assert pause_if_idle(locked(room_id), "idle-check")
    assert Invocation.objects.get(room_id=room_id, component="room.idle_pause").input["triggers"] == ["rounds"]
    notice = page.locator("#idle-notice")
    page.wait_for_function("() => !document.querySelector('#idle-why-known').hidden")
    said = " ".join(notice.inner_text().split())
    assert "paused itself: 3 rounds in a row had ended by themselves since somebody last did anything in it, and its agents" in said
    assert "nobody had done anything in it for" not in said
    # A viewer who opens the desk now reads the same.
    viewer_page, viewer = make_page("ivan")
    RoomMember.objects.create(room_id=room_id, user=viewer, access=RoomMember.Access.VIEWER)
    open_desk(viewer_page, room_id)
    viewer_page.locator("#idle-notice").wait_for()
    assert "3 rounds in a row had ended by themselves since somebody last did anything in it" in viewer_page.locator("#idle-notice").inner_text()
    # Resumed, then paused again for the time: both desks, open all along, name that one (the viewer's too).
    page.get_by_role("button", name="Resume").click()
    for desk in (page, viewer_page):
        desk.wait_for_function("() => document.querySelector('#idle-notice').hidden")
    with transaction.atomic():
        assert pause_if_idle(locked(room_id), "idle-check-2", now=timezone.now() + timedelta(hours=2))
    for desk in (page, viewer_page):
        desk.wait_for_function("() => !document.querySelector('#idle-notice').hidden"
                               " && document.querySelector('#idle-why-known').textContent === 'nobody had done anything in it for an hour'")
        assert desk.locator("#idle-why").is_hidden()
    assert page.errors == [] and viewer_page.errors == []


def test_the_add_task_error_goes_once_a_task_action_succeeds(make_page):
    page, manager = make_page("tess")
    room_id = create_workspace(page)
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Write the runbook", "priority": 2})
    assert status == 201, body
    open_desk(page, room_id)
    page.locator(f"#board [data-task-id='{body['data']['id']}']").wait_for()
    page.get_by_label("Title").fill("  ")
    page.get_by_role("button", name="Add task").click()
    error = page.locator("#task-form-error")
    error.wait_for()
    # Another task action goes through: the form's old message goes.
    page.get_by_role("button", name="Edit Write the runbook").click()
    page.locator("#task-edit").get_by_label("Title").fill("Write and test the runbook")
    page.locator("#task-edit").get_by_role("button", name="Save").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=body["data"]["id"]).title == "Write and test the runbook" or None, timeout=20)
    page.wait_for_function("() => document.querySelector('#task-form-error').hidden")
    assert error.inner_text() == ""
    assert page.errors == []


def test_a_saved_narrative_is_not_taken_for_unsaved_changes(make_page):
    """The server keeps the text and the lists trimmed (a blank line is no decision): once saved, the editor
    holds what was saved, so the next round's narrative is followed, not announced as waiting behind changes."""
    page, manager = make_page("noor")
    room_id = running_workspace(page, narrative=True)
    open_desk(page, room_id)
    first = Narrative.objects.get(room_id=room_id, round=1)
    page.wait_for_function("(id) => document.querySelector('#narrative-round').value === String(id)", arg=first.pk)
    page.locator("#narrative-content").fill("Round 1 went well.\n\n")
    page.get_by_label("Key decisions (one per line)").fill("Use Postgres 16\n\n   \n  Cut over on a weekend\n")
    page.get_by_role("button", name="Save narrative").click()
    wait_for(lambda: Narrative.objects.get(pk=first.pk).version == 2 or None, timeout=20)
    saved = Narrative.objects.get(pk=first.pk)
    assert (saved.content, saved.key_decisions) == ("Round 1 went well.", ["Use Postgres 16", "Cut over on a weekend"])
    page.wait_for_function("() => document.querySelector('#narrative-content').value === 'Round 1 went well.'")
    assert page.get_by_label("Key decisions (one per line)").input_value() == "Use Postgres 16\nCut over on a weekend"
    page.get_by_role("button", name="End round").click()
    second = wait_for(lambda: Narrative.objects.filter(room_id=room_id, round=2).first(), timeout=60)
    page.wait_for_function("(id) => document.querySelector('#narrative-round').value === String(id)", arg=second.pk)
    assert page.locator("#narrative-new").is_hidden()
    assert page.locator("#narrative-content").input_value() == second.content
    assert page.errors == []
