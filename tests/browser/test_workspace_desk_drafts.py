"""A manager's unsaved narrative changes survive a reload of the desk, and never overwrite an edit made meanwhile.

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import pytest

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


def test_changes_brought_back_after_a_reload_do_not_overwrite_an_edit_made_meanwhile(make_page):
    page, manager = make_page("remy")
    room_id, narrative = desk_with_a_narrative(page)
    page.locator("#narrative-content").fill("My version of round 1.")
    page.wait_for_timeout(200)
    # Meanwhile another tab saves its own edit.
    status, body = api(page, "PATCH", f"discussions/{room_id}/narratives/{narrative.pk}",
                       {"content": "The other tab's version.", "version": narrative.version})
    assert status == 200, body
    page.reload()
    open_desk(page, room_id, narrative=True)
    assert page.locator("#narrative-content").input_value() == "My version of round 1."
    page.get_by_role("button", name="Save narrative").click()
    conflict = page.locator("#narrative-conflict")
    conflict.wait_for()
    assert "The other tab's version." in conflict.inner_text()
    assert Narrative.objects.get(pk=narrative.pk).content == "The other tab's version."
    assert page.locator("#narrative-content").input_value() == "My version of round 1."
    # Saved again on purpose, it replaces the other one.
    page.get_by_role("button", name="Save narrative").click()
    saved(page)
    assert Narrative.objects.get(pk=narrative.pk).content == "My version of round 1."
    assert page.errors == []
