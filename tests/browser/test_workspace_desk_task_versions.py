"""Two tabs editing one task: the second is told, sees the task as it is now and keeps its changes; a Claim that
waits for an assignee is reached by the keyboard and says why.

Against the live stack, like ``test_workspace_desk``; the rooms here are drafts (no agent runs in them).
"""
import json

import pytest
from django.db.models import F

from rooms.models import Seat, TaskAssignment
from tests.browser.conftest import api
from tests.browser.test_workspace_desk import create_workspace
from tests.browser.test_workspace_desk_feedback import open_desk
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def task_edits(page):
    """The bodies of the task edits the page sends (filled as it sends them)."""
    sent = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data)) if r.method == "PATCH" and "/tasks/" in r.url else None)
    return sent


def open_settled(page, room_id):
    """The desk open, joined to its room and done with the reads its join set off (the events it replayed):
    a change made after this reaches the desk only through an event or a read of its own."""
    inflight = set()

    def sent(request):
        inflight.add(request)

    def ended(request):
        inflight.discard(request)

    listeners = (("request", sent), ("requestfinished", ended), ("requestfailed", ended))
    for event, listener in listeners:
        page.on(event, listener)
    try:
        open_desk(page, room_id)
        page.wait_for_function("() => window.ConveneDesk && window.ConveneDesk.live.joined")
        quiet = 0
        for _ in range(400):
            page.wait_for_timeout(50)  # lets the page's events reach the listeners
            quiet = 0 if inflight else quiet + 1
            if quiet >= 8:
                return
        raise AssertionError(f"the desk kept reading: {[r.url for r in inflight]}")
    finally:
        for event, listener in listeners:
            page.remove_listener(event, listener)


def test_a_task_changed_in_another_tab_is_said_at_once_with_what_it_holds_and_the_changes_stay(make_page):
    page, manager = make_page("tia")
    room_id = create_workspace(page)
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Write the runbook", "priority": 2})
    assert status == 201, body
    tid = body["data"]["id"]
    other = page.context.new_page()  # a second tab of the same manager
    other.set_default_timeout(20000)
    other.errors = []
    other.on("pageerror", lambda exc: other.errors.append(str(exc)))
    open_desk(page, room_id)
    open_desk(other, room_id)
    sent = task_edits(page)

    # Both tabs edit it: this one its description, the other its title, saved first.
    page.get_by_role("button", name="Edit Write the runbook").click()
    editor = page.locator("#task-edit")
    editor.get_by_label("Description (Markdown)").fill("Cover the nightly restore.")
    other.get_by_role("button", name="Edit Write the runbook").click()
    other.locator("#task-edit").get_by_label("Title").fill("Write the on-call runbook")
    other.locator("#task-edit").get_by_role("button", name="Save").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=tid).version == 2 or None, timeout=20)

    # This tab says so at once (the event came): the title it did not change follows, its description stays.
    conflict = page.locator("#task-conflict")
    conflict.wait_for()
    assert conflict.get_attribute("role") == "alert"
    said = conflict.inner_text()
    assert "changed in another tab" in said and "Title: Write the on-call runbook" in said and "Priority: 2" in said
    assert "Description: none" in said
    assert editor.get_by_label("Title").input_value() == "Write the on-call runbook"
    assert editor.get_by_label("Description (Markdown)").input_value() == "Cover the nightly restore."
    # Saved, it applies its change to the task as it is now, on the version it now knows.
    editor.get_by_role("button", name="Save").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=tid).version == 3 or None, timeout=20)
    task = TaskAssignment.objects.get(pk=tid)
    assert (task.title, task.description) == ("Write the on-call runbook", "Cover the nightly restore.")
    assert sent == [{"description": "Cover the nightly restore.", "version": 2}]
    page.wait_for_function("() => document.querySelector('#task-edit').hidden")
    assert page.errors == [] and other.errors == []


def test_a_stale_save_is_refused_and_the_desk_shows_the_task_as_it_is_without_losing_the_draft(make_page):
    page, manager = make_page("teo")
    room_id = create_workspace(page)
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Measure the queue", "priority": 2})
    assert status == 201, body
    tid = body["data"]["id"]
    open_settled(page, room_id)
    sent = task_edits(page)
    page.get_by_role("button", name="Edit Measure the queue").click()
    editor = page.locator("#task-edit")
    editor.get_by_label("Priority").select_option("5")
    editor.get_by_label("Description (Markdown)").fill("p95 and dead letters")
    # Changed meanwhile where no event tells this desk (as when its live connection lags): its save is on version 1.
    TaskAssignment.objects.filter(pk=tid).update(title="Measure the invoice queue", description="Only p99",
                                                  version=F("version") + 1)
    editor.get_by_role("button", name="Save").click()
    conflict = page.locator("#task-conflict")
    conflict.wait_for()
    assert sent == [{"description": "p95 and dead letters", "priority": 5, "version": 1}]
    said = conflict.inner_text()
    assert "changed in another tab" in said and "Title: Measure the invoice queue" in said and "Description: Only p99" in said
    assert page.locator("#task-edit-heading").inner_text() == "Edit “Measure the invoice queue”"
    # Nothing was lost: the manager's changes are in the editor, the field not changed shows the task as it is.
    assert editor.get_by_label("Priority").input_value() == "5"
    assert editor.get_by_label("Description (Markdown)").input_value() == "p95 and dead letters"
    assert editor.get_by_label("Title").input_value() == "Measure the invoice queue"
    task = TaskAssignment.objects.get(pk=tid)
    assert (task.priority, task.description, task.version) == (2, "Only p99", 2)
    assert page.locator("#task-edit-error").is_hidden()
    # Kept after a reload too (the draft is kept in the tab, made on the task as it is now).
    page.reload()
    open_settled(page, room_id)
    page.wait_for_function("() => !document.querySelector('#task-edit').hidden")
    assert editor.get_by_label("Priority").input_value() == "5"
    # Discarded: the editor holds the task as it is, nothing is said any more, and nothing was sent.
    editor.get_by_label("Priority").select_option("4")
    TaskAssignment.objects.filter(pk=tid).update(priority=1, version=F("version") + 1)
    editor.get_by_role("button", name="Save").click()
    conflict.wait_for()
    assert "Priority: 1" in conflict.inner_text()
    conflict.get_by_role("button", name="discard your changes").click()
    assert conflict.is_hidden()
    assert editor.get_by_label("Priority").input_value() == "1"
    assert editor.get_by_label("Description (Markdown)").input_value() == "Only p99"
    assert page.evaluate("document.activeElement.name") == "title"
    assert [b["version"] for b in sent] == [1, 2]
    assert TaskAssignment.objects.get(pk=tid).version == 3
    assert page.errors == []


def test_a_claim_waiting_for_an_assignee_is_reached_by_the_keyboard_and_says_why(make_page):
    page, manager = make_page("kai")
    room_id = create_workspace(page)
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Draw the boundary"})
    assert status == 201, body
    tid = body["data"]["id"]
    open_desk(page, room_id)
    posted = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    claim = page.get_by_role("button", name="Claim Draw the boundary")
    assert claim.get_attribute("aria-disabled") == "true" and claim.get_attribute("disabled") is None
    # Tab goes from Edit to it, and what it is described by says why it waits.
    page.get_by_role("button", name="Edit Draw the boundary").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Claim Draw the boundary"
    assert page.evaluate("document.getElementById(document.activeElement.getAttribute('aria-describedby')).textContent") == (
        "Assign it to an agent (Edit) to claim it.")
    # Pressed, it says it again and sends nothing.
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#toast').textContent === 'Assign it to an agent (Edit) to claim it.'")
    page.wait_for_timeout(300)
    assert posted == [] and TaskAssignment.objects.get(pk=tid).status == "pending"
    # Assigned, it claims.
    seat = Seat.objects.filter(room_id=room_id, role="participant").order_by("position").first()
    status, body = api(page, "PATCH", f"discussions/{room_id}/tasks/{tid}", {"assigneeId": seat.pk, "version": 1})
    assert status == 200, body
    page.wait_for_function("() => !document.querySelector('#board [data-action=claim]').hasAttribute('aria-disabled')")
    page.get_by_role("button", name="Claim Draw the boundary").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=tid).status == "claimed" or None, timeout=20)
    assert page.errors == []


def test_a_step_taken_here_on_the_task_being_edited_is_not_taken_for_another_tab(make_page):
    page, manager = make_page("uma")
    room_id = create_workspace(page)
    seat = Seat.objects.filter(room_id=room_id, role="participant").order_by("position").first()
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Check the totals", "assigneeId": seat.pk})
    assert status == 201, body
    tid = body["data"]["id"]
    open_desk(page, room_id)
    page.get_by_role("button", name="Edit Check the totals").click()
    editor = page.locator("#task-edit")
    editor.get_by_label("Title").fill("Check the invoice totals")
    page.get_by_role("button", name="Claim Check the totals").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=tid).status == "claimed" or None, timeout=20)
    page.wait_for_function("() => !document.querySelector('#task-edit select[name=assignee]')")  # drawn for a claimed task
    page.wait_for_timeout(500)
    assert page.locator("#task-conflict").is_hidden()
    assert editor.get_by_label("Title").input_value() == "Check the invoice totals"
    editor.get_by_role("button", name="Save").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=tid).title == "Check the invoice totals" or None, timeout=20)
    assert TaskAssignment.objects.get(pk=tid).version == 3
    assert page.errors == []
