"""A facilitation run in the browser room, live, and staff's view of the ephemeral runs."""
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from rooms.models import FacilitationRun, RoomMember
from tests.browser.conftest import api, shot
from tests.factories import make_facilitator

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_run_lives_in_the_browser_room_and_staff_see_it(make_page):
    from django.conf import settings

    make_facilitator("Convener", key="convener-run")
    page, owner = make_page("olga")
    owner.is_staff = owner.is_superuser = True
    owner.save()
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    status, body = api(page, "POST", "discussions", {
        "kind": "facilitation", "name": "Launch roles", "topic": "Every role carries exactly one name",
        "pattern": "role_assignment", "slots": {"roles": ["Lead", "Scribe"]}, "reportTo": ["role:management"],
        "deadline": (timezone.now() + timedelta(hours=2)).isoformat(), "ttlHours": 24})
    assert status == 201, body
    room_id = body["data"]["id"]

    page.goto(f"/discussions/{room_id}")
    page.wait_for_function("() => document.querySelector('#run-state').textContent === 'Waiting for the group'")
    assert page.locator("#artifact dd").all_inner_texts() == ["open", "open"]
    page.wait_for_function("() => document.querySelector('#room-format').textContent === 'Facilitation run'")
    # The run as it was set up, and for its owner the command that brings the facilitator into a group.
    page.wait_for_function("() => document.querySelectorAll('#run-facts dt').length === 3")
    facts = dict(zip(page.locator("#run-facts dt").all_inner_texts(), page.locator("#run-facts dd").all_inner_texts()))
    assert facts["Done when"].startswith("every role (Lead, Scribe) has exactly one person")
    assert facts["Result to"] == "everyone in management" and facts["Deadline"]
    join_code = FacilitationRun.objects.get(room_id=room_id).join_code
    assert page.locator("#run-join").is_visible()
    assert page.locator("#run-join-command").text_content() == f"/facilitator start {join_code}"
    assert page.locator("#run-join-telegram").is_hidden()  # no Telegram bot met yet: no t.me link
    page.wait_for_selector("#analytics")
    assert "open: 0 questions, 0 concerns" in page.locator("#analytics").text_content()
    assert not page.get_by_role("button", name="Pause").is_visible() and not page.locator(".round").is_visible()
    page.get_by_role("button", name="Start").click()
    # The handshake arrives live, before anything else is said.
    handshake = page.locator("#timeline .tcard").filter(has_text="your facilitator for this run")
    handshake.wait_for()
    assert "everyone in management" in handshake.inner_text()
    page.wait_for_function("() => document.querySelector('#run-state').textContent === 'In progress'")
    assert page.locator("#run-join").is_hidden()  # started: the command has done its work

    # Ana, a participant in another browser, takes a role: the outcome panel changes live in the owner's page.
    ana_page, ana = make_page("ana")
    RoomMember.objects.create(room_id=room_id, user=ana, access=RoomMember.Access.PARTICIPANT)
    status, body = api(ana_page, "POST", f"discussions/{room_id}/comments", {"content": "I'll take Lead"})
    assert status == 201, body
    page.wait_for_function("() => document.querySelector('#artifact dd').textContent === 'ana'")
    ana_page.goto(f"/discussions/{room_id}")  # a participant sees the run, never its join code
    ana_page.wait_for_function("() => document.querySelectorAll('#run-facts dt').length === 3")
    assert ana_page.locator("#run-join").is_hidden() and join_code not in ana_page.content()
    assert "Scribe" in page.locator("#run-missing").inner_text()
    shot(page, "facilitation-run-room.png")

    status, body = api(page, "GET", "ephemeral-runs")
    assert status == 200 and [r["discussionId"] for r in body["data"]] == [room_id]
    # Staff: the run is listed with its owner, state and TTL left, and links back to the room.
    page.goto(f"/{settings.ADMIN_PATH}rooms/facilitationrun/")
    row = page.locator("#result_list tbody tr").first
    text = row.inner_text()
    assert "Launch roles" in text and "olga" in text and "Active" in text and " h " in text
    shot(page, "facilitation-runs-admin.png")
    row.get_by_role("link", name="open the room").click()
    page.wait_for_url(f"**/discussions/{room_id}/")
    assert FacilitationRun.objects.get(room_id=room_id).artifact["roles"]["Lead"] == "ana"


def test_a_run_is_set_up_in_the_browser_form(make_page):
    make_facilitator("Convener", key="convener-form")
    page, owner = make_page("rita")
    page.goto("/facilitation/new/")
    assert "needs the permission" in page.locator("main").inner_text()  # not granted yet: no form
    page.goto("/")
    assert page.get_by_role("link", name="New facilitation run").count() == 0
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    page.reload()
    page.get_by_role("link", name="New facilitation run").click()
    page.wait_for_url("**/facilitation/new/")
    page.get_by_label("Goal").fill("Every on-call role for December has one name")
    page.get_by_label("Send the result to").fill("rita, role:management")
    page.get_by_role("button", name="Create the run").click()  # no roles yet: the form says so, nothing is made
    page.locator("#run-roles-error").wait_for()
    assert not FacilitationRun.objects.exists()
    page.get_by_label("Roles", exact=True).fill("Primary, Secondary")
    page.get_by_role("button", name="Create the run").click()
    page.wait_for_url("**/discussions/*/")
    run = FacilitationRun.objects.get()
    assert run.pattern == "role_assignment" and run.slots["roles"] == ["Primary", "Secondary"]
    assert run.report_to == ["user:rita", "role:management"] and run.room.owner == owner
    assert timedelta(hours=23) < run.deadline - timezone.now() < timedelta(hours=25)
    page.locator("#run-join").wait_for()  # the room shows the command that brings the facilitator into a group
    assert page.locator("#run-join-command").text_content() == f"/facilitator start {run.join_code}"
    deadline = page.locator("#run-facts dd").nth(1).inner_text()  # "Nov 27, 2026, 6:00 PM"
    # Back on the list, the run is under "Your facilitation runs" (ephemeral runs are not in the table),
    # its deadline written as the room writes it (not "11/27/2026, 6:00:00 PM").
    page.goto("/")
    card = page.locator("#my-runs")
    card.wait_for()
    assert card.locator("a").inner_text() == run.room.name and "waiting for the group" in card.inner_text()
    assert f"deadline {deadline}" in card.inner_text()
    page.wait_for_selector("#list-status")
    assert page.locator(f"#discussion-rows [data-id='{run.room_id}']").count() == 0


def _create_run(make_page, key: str, goal: str, roles: str):
    """Rhea, who may start runs, fills the run form's goal and roles and asks to create the run."""
    make_facilitator("Convener", key=key)
    page, owner = make_page("rhea")
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    page.goto("/facilitation/new/")
    page.get_by_label("Goal").fill(goal)
    page.get_by_label("Roles", exact=True).fill(roles)
    page.get_by_role("button", name="Create the run").click()
    return page


def test_a_run_left_unnamed_is_named_after_its_goals_first_words_without_markdown(make_page):
    page = _create_run(make_page, "convener-name", "Who leads the **launch**? Everyone else helps.", "Lead, Scribe")
    page.wait_for_url("**/discussions/*/")
    run = FacilitationRun.objects.get()
    assert run.room.name == "Who leads the launch"  # was the goal's first 60 characters, "**" and all
    assert run.room.topic == "Who leads the **launch**? Everyone else helps."
    page.wait_for_function("() => document.querySelector('#room-name').textContent !== 'Loading…'")
    assert page.locator("#room-name").inner_text() == "Who leads the launch"
    assert not page.errors, page.errors


def test_the_run_form_names_what_is_wrong_with_the_outcome_in_its_own_words(make_page):
    page = _create_run(make_page, "convener-words", "Who leads the launch?", "Lead, Scribe, Lead")
    page.locator("#run-roles-error").wait_for()
    # the role that is wrong, as typed, beside the roles; no API path ("slots.roles[2]") anywhere
    assert page.locator("#run-roles-error").inner_text() == '"Lead": listed twice.'
    assert page.locator("#run-error").inner_text() == "Role 3 is not valid."  # the server's message, as it says it
    assert "slots" not in page.locator("main").inner_text()
    assert not FacilitationRun.objects.exists()
    shot(page, "facilitation-run-form-errors.png")
    page.get_by_role("radio", name="Make a decision").check()
    page.locator("#run-options").fill("Friday, " + "M" * 81)
    page.get_by_role("button", name="Create the run").click()
    page.wait_for_function("() => document.querySelector('#run-options-error').textContent.startsWith('\"MMM')")
    assert page.locator("#run-options-error").inner_text().startswith(f'"{"M" * 81}": a name of 1 to 80 characters.')
    assert page.locator("#run-error").inner_text() == "The options are not valid."  # one option is left: too few
    assert not FacilitationRun.objects.exists()
    assert not page.errors, page.errors
