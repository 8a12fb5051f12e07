"""A manager's unsaved narrative changes survive a reload of the desk, and never overwrite an edit made meanwhile.

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import pytest
from django.db.models import F

from rooms.models import Narrative
from tests.browser.conftest import api
from tests.browser.test_workspace_desk_feedback import desk_with_a_narrative, open_desk

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def saved(page):
    page.wait_for_function("() => document.querySelector('#toast').textContent.includes('Narrative saved')")


def test_unsaved_narrative_changes_come_back_after_a_reload_and_can_be_saved_or_discarded(make_page):
    page, manager = make_page("rhea")
    room_id, narrative = desk_with_a_narrative(page)
    restored = page.locator("#narrative-restored")
    assert restored.is_hidden()

    page.locator("#narrative-content").fill("Round 1: the outbox goes first, then the queue.")
    page.locator("#narrative-decisions-edit").fill("Outbox first\nQueue second")
    page.reload()
    open_desk(page, room_id, narrative=True)
    assert page.locator("#narrative-content").input_value() == "Round 1: the outbox goes first, then the queue."
    assert page.locator("#narrative-decisions-edit").input_value() == "Outbox first\nQueue second"
    restored.wait_for()
    assert "unsaved changes to round 1's narrative are back" in restored.inner_text()
    assert Narrative.objects.get(pk=narrative.pk).version == narrative.version  # nothing was sent

    page.get_by_role("button", name="Save narrative").click()
    saved(page)
    edited = Narrative.objects.get(pk=narrative.pk)
    assert edited.content == "Round 1: the outbox goes first, then the queue."
    assert edited.key_decisions == ["Outbox first", "Queue second"]
    page.wait_for_function("() => document.querySelector('#narrative-restored').hidden")

    # Saved: a reload shows the saved narrative, with nothing said about changes.
    page.reload()
    open_desk(page, room_id, narrative=True)
    page.wait_for_timeout(300)
    assert page.locator("#narrative-content").input_value() == edited.content and restored.is_hidden()

    # Changes brought back can be dropped: the editor goes back to what is saved, and stays so after a reload.
    page.locator("#narrative-content").fill("A thought not worth keeping.")
    page.reload()
    open_desk(page, room_id, narrative=True)
    restored.wait_for()
    page.get_by_role("button", name="Discard them").click()
    assert page.locator("#narrative-content").input_value() == edited.content and restored.is_hidden()
    page.reload()
    open_desk(page, room_id, narrative=True)
    page.wait_for_timeout(300)
    assert page.locator("#narrative-content").input_value() == edited.content and restored.is_hidden()
    assert page.errors == []


def test_changes_brought_back_after_a_reload_are_told_of_an_edit_made_meanwhile_and_keep_its_other_fields(make_page):
    page, manager = make_page("remy")
    room_id, narrative = desk_with_a_narrative(page)
    page.locator("#narrative-content").fill("My version of round 1.")
    page.wait_for_timeout(200)
    # Meanwhile another tab saves its own text and next steps.
    status, body = api(page, "PATCH", f"discussions/{room_id}/narratives/{narrative.pk}",
                       {"content": "The other tab's version.", "nextSteps": ["Call the bank"], "version": narrative.version})
    assert status == 200, body
    page.reload()
    open_desk(page, room_id, narrative=True)
    assert page.locator("#narrative-content").input_value() == "My version of round 1."
    # Said at once, with what it now holds; the next steps the manager did not touch are the other tab's.
    conflict = page.locator("#narrative-conflict")
    conflict.wait_for()
    assert "changed meanwhile by remy" in conflict.inner_text()
    assert page.locator("#narrative-current").text_content() == "The other tab's version."
    assert "Next steps: Call the bank." in page.locator("#narrative-current-lists").inner_text()
    assert page.locator("#narrative-steps-edit").input_value() == "Call the bank"
    assert Narrative.objects.get(pk=narrative.pk).content == "The other tab's version."
    page.get_by_role("button", name="Save narrative").click()
    saved(page)
    edited = Narrative.objects.get(pk=narrative.pk)
    assert edited.content == "My version of round 1." and edited.next_steps == ["Call the bank"]
    page.wait_for_function("() => document.querySelector('#narrative-conflict').hidden")
    assert page.errors == []


def test_an_edit_the_desk_had_not_heard_of_is_said_when_saving_and_the_current_one_can_be_kept(make_page):
    page, manager = make_page("rory")
    room_id, narrative = desk_with_a_narrative(page)
    page.locator("#narrative-content").fill("Mine.")
    # Changed without an event reaching this desk: the save meets the stale version.
    Narrative.objects.filter(pk=narrative.pk).update(content="Written elsewhere.", key_decisions=["Elsewhere"],
                                                     version=F("version") + 1)
    page.get_by_role("button", name="Save narrative").click()
    conflict = page.locator("#narrative-conflict")
    conflict.wait_for()
    assert page.locator("#narrative-current").text_content() == "Written elsewhere."
    assert "Key decisions: Elsewhere." in page.locator("#narrative-current-lists").inner_text()
    assert page.locator("#narrative-decisions-edit").input_value() == "Elsewhere"  # untouched here: follows it
    assert page.locator("#narrative-content").input_value() == "Mine."
    # The manager keeps the current one: the editor shows it, nothing is sent, and nothing comes back after a reload.
    page.get_by_role("button", name="discard your changes").click()
    assert page.locator("#narrative-content").input_value() == "Written elsewhere." and conflict.is_hidden()
    page.reload()
    open_desk(page, room_id, narrative=True)
    page.wait_for_timeout(300)
    assert page.locator("#narrative-content").input_value() == "Written elsewhere."
    assert conflict.is_hidden() and page.locator("#narrative-restored").is_hidden()
    assert Narrative.objects.get(pk=narrative.pk).content == "Written elsewhere."
    assert page.errors == []


def test_closing_the_scope_warns_of_unsaved_narrative_changes_and_keeps_them_when_kept_open(make_page):
    page, manager = make_page("cleo")
    room_id, narrative = desk_with_a_narrative(page)
    page.get_by_role("button", name="Complete", exact=True).click()
    dialog = page.locator("#close-dialog")
    dialog.wait_for()
    assert "which nobody can edit afterwards: to edit it, end the round first" in dialog.inner_text()
    assert page.locator("#close-unsaved").is_hidden()  # nothing unsaved: nothing more said
    page.get_by_role("button", name="Keep it open").click()

    page.locator("#narrative-content").fill("Round 1, as I see it.")
    page.get_by_role("button", name="Complete", exact=True).click()
    dialog.wait_for()
    assert page.locator("#close-unsaved").inner_text() == (
        "Your changes to round 1's narrative are not saved, and once it is closed nobody can save them: "
        "keep it open, save them, then complete it.")
    assert page.evaluate("document.activeElement.id") == "close-cancel"  # the safe choice has the focus
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.querySelector('#close-dialog').open")
    assert page.locator("#narrative-content").input_value() == "Round 1, as I see it."
    assert page.locator("#desk").get_attribute("data-status") == "active"
    assert page.errors == []
