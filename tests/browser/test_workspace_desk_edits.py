"""What the desk shows of the narratives and tasks it edits: the narrative's length against the server's limit,
who edited it and when; a task's description; a budget set below what was spent.

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import re

import pytest
from django.db.models import F
from playwright.sync_api import expect

from facilitation.workspace.inputs import COMMENT, NARRATIVE
from rooms.models import Invocation, Narrative, Room, RoomMember, TaskAssignment
from tests.browser.conftest import screenshots_dir
from tests.browser.test_workspace_desk import create_workspace
from tests.browser.test_workspace_desk_feedback import desk_with_a_narrative, open_desk, running_workspace, writes
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_narrative_over_the_limit_waits_in_the_editor_with_the_reason_under_it(make_page):
    page, manager = make_page("nadia")
    room_id, narrative = desk_with_a_narrative(page)
    counter, save = page.locator("#narrative-length"), page.get_by_role("button", name="Save narrative")
    assert counter.is_hidden()  # far from the limit, nothing is counted

    # Near the limit: how many characters of how many.
    page.locator("#narrative-content").fill("n" * (NARRATIVE - 10))
    counter.wait_for()
    assert counter.inner_text() == f"{NARRATIVE - 10:,} of {NARRATIVE:,} characters."
    assert save.is_enabled()

    # Over it (an emoji counts as one, as the server counts): by how much, and Save says why it waits; nothing is sent.
    sent = writes(page)
    text = "Round 1 ✅ " + "x" * (NARRATIVE - 8)
    page.locator("#narrative-content").fill(text)
    page.wait_for_function("() => document.querySelector('#btn-save-narrative').disabled")
    assert counter.inner_text() == (f"{NARRATIVE + 2:,} characters: 2 over the limit of {NARRATIVE:,}. "
                                    "Shorten the text to save it; what you wrote stays here.")
    assert "2 characters over the limit" in save.get_attribute("title")
    save.click(force=True)
    page.wait_for_timeout(300)
    assert sent == [] and Narrative.objects.get(pk=narrative.pk).version == narrative.version
    assert page.locator("#narrative-content").input_value() == text  # nothing the manager typed is lost

    # Shortened to the limit: it saves, the whole of it.
    page.locator("#narrative-content").press("End")
    page.locator("#narrative-content").press("Backspace")
    page.locator("#narrative-content").press("Backspace")
    page.wait_for_function("() => !document.querySelector('#btn-save-narrative').disabled")
    assert counter.inner_text() == f"{NARRATIVE:,} of {NARRATIVE:,} characters." and save.get_attribute("title") == ""
    save.click()
    page.wait_for_function("() => document.querySelector('#toast').textContent.includes('Narrative saved')")
    assert Narrative.objects.get(pk=narrative.pk).content == text[:-2]
    assert page.errors == []


def test_the_edited_narrative_says_by_whom_and_when_to_managers_and_viewers(make_page):
    """When, in each browser's language and clock: 12-hour in American English, 24-hour in German."""
    page, manager = make_page("edda", locale="en-US")
    room_id = running_workspace(page, narrative=True)
    narrative = Narrative.objects.get(room_id=room_id, round=1)
    viewer_page, viewer = make_page("vito", locale="de-DE")
    RoomMember.objects.create(room_id=room_id, user=viewer, access=RoomMember.Access.VIEWER)
    for p in (page, viewer_page):
        open_desk(p, room_id, narrative=True)
        assert p.locator("#narrative-edited").inner_text() == "not edited: the generated text"

    page.locator("#narrative-content").fill("Round 1: the outbox goes first.")
    page.get_by_role("button", name="Save narrative").click()
    page.wait_for_function("() => document.querySelector('#toast').textContent.includes('Narrative saved')")
    edited = Narrative.objects.get(pk=narrative.pk)
    assert edited.edited_by == manager
    for p, clock in ((page, r"\d{2}:\d{2}\s[AP]M"), (viewer_page, r"\d{2}:\d{2}")):  # the viewer's desk follows live
        hhmm = p.evaluate("(ts) => new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit' }).format(new Date(ts))",
                          edited.edited_at.isoformat())
        assert re.fullmatch(clock, hhmm), hhmm
        p.wait_for_function("() => document.querySelector('#narrative-edited').textContent.startsWith('edited')")
        assert p.locator("#narrative-edited").inner_text() == f"edited by edda, {hhmm}"
        stamp = p.locator("#narrative-edited time")
        assert p.evaluate("(ts) => new Date(ts).getTime()", stamp.get_attribute("datetime")) == int(edited.edited_at.timestamp() * 1000)
        assert f":{hhmm[3:5]}:" in stamp.get_attribute("title") and str(edited.edited_at.year) in stamp.get_attribute("title")
        assert p.errors == []
    # The full date and time in its title follows the browser too.
    assert re.search(r"\s[AP]M\b", page.locator("#narrative-edited time").get_attribute("title"))
    assert not re.search(r"\s[AP]M\b", viewer_page.locator("#narrative-edited time").get_attribute("title"))


HOSTILE_DESCRIPTION = "\n".join([
    "Move the **nightly** run to the queue: see [the runbook](https://example.com/runbook).",
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "[click me](javascript:window.__pwned='link')",
    "",
    "- " + "a-very-long-path/" * 30,
])


def test_a_task_s_description_is_written_by_the_manager_and_read_by_everyone(make_page):
    page, manager = make_page("tessa")
    room_id = create_workspace(page)
    viewer_page, viewer = make_page("tobi")
    RoomMember.objects.create(room_id=room_id, user=viewer, access=RoomMember.Access.VIEWER)
    open_desk(page, room_id)

    # Written with the task: Markdown, rendered as the desk renders what people write (nothing of it runs).
    page.get_by_label("Title").fill("Move the nightly run")
    page.get_by_label("Description (optional; Markdown)").fill(HOSTILE_DESCRIPTION)
    page.get_by_role("button", name="Add task").click()
    task = wait_for(lambda: TaskAssignment.objects.filter(room_id=room_id).first(), timeout=20)
    assert task.description == HOSTILE_DESCRIPTION
    # The form starts afresh once the page has the answer (the row can be read before the page has it).
    page.wait_for_function("() => document.querySelector('#task-description').value === ''")
    for p in (page, viewer_page):
        if p is viewer_page:
            open_desk(p, room_id)
        card = p.locator(f"#board [data-task-id='{task.pk}']")
        description = card.get_by_role("region", name="Description of Move the nightly run")
        description.wait_for()
        assert description.locator("strong").inner_text() == "nightly"
        assert description.locator("a").first.get_attribute("href") == "https://example.com/runbook"
        assert description.locator("script, img, a[href^='javascript']").count() == 0
        assert "window.__pwned = 'script'" in description.inner_text()  # raw HTML stays text
        # Long text wraps in its narrow column instead of widening the card.
        assert card.evaluate("n => n.scrollWidth <= n.clientWidth + 1")
        assert p.evaluate("() => window.__pwned === undefined")
    page.locator("section[aria-labelledby=tasks-title]").screenshot(path=str(screenshots_dir() / "desk-task-description.png"))
    assert viewer_page.locator("#task-edit, #task-form").count() == 0
    assert viewer_page.get_by_role("button", name="Edit Move the nightly run").count() == 0

    # Edited by the manager: what was there is in the editor; a new text replaces it, live on the viewer's desk.
    page.get_by_role("button", name="Edit Move the nightly run").click()
    editor = page.locator("#task-edit").get_by_label("Description (Markdown)")
    assert editor.input_value() == HOSTILE_DESCRIPTION
    editor.fill("Only the _invoices_ job.")
    page.locator("#task-edit").get_by_role("button", name="Save").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=task.pk).description == "Only the _invoices_ job." or None, timeout=20)
    viewer_page.wait_for_function("(id) => (document.querySelector(`#board [data-task-id='${id}'] .task-description em`) || {})"
                                  ".textContent === 'invoices'", arg=task.pk)
    # Emptied: the task has no description any more, and its card shows none.
    page.get_by_role("button", name="Edit Move the nightly run").click()
    page.locator("#task-edit").get_by_label("Description (Markdown)").fill("  ")
    page.locator("#task-edit").get_by_role("button", name="Save").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=task.pk).description == "" or None, timeout=20)
    page.wait_for_function("(id) => !document.querySelector(`#board [data-task-id='${id}'] .task-description`)", arg=task.pk)
    assert page.errors == [] and viewer_page.errors == []


def test_a_task_description_near_or_over_its_limit_is_counted_and_waits_in_the_form(make_page):
    """The task form and the task editor count a description against the server's limit as the narrative editor
    does: near it, how many of how many; over it, by how much, and the button waits; nothing is sent."""
    page, _manager = make_page("lina")
    room_id = create_workspace(page)
    open_desk(page, room_id)
    box, counter, add = page.locator("#task-description"), page.locator("#task-description-length"), page.locator("#task-add")
    expect(box).to_have_attribute("aria-describedby", "task-description-length")
    page.get_by_label("Title").fill("Move the nightly run")
    box.fill("d" * 100)
    expect(counter).to_be_hidden()  # far from the limit, nothing is counted
    box.fill("d" * (COMMENT - 10))
    expect(counter).to_have_text(f"{COMMENT - 10:,} of {COMMENT:,} characters.")
    expect(add).to_be_enabled()

    sent = writes(page)
    text = "Step ✅ " + "d" * (COMMENT - 5)  # the emoji counts as one, as the server counts
    box.fill(text)
    expect(counter).to_have_text(f"{COMMENT + 2:,} characters: 2 over the limit of {COMMENT:,}. "
                                 "Shorten the text to save it; what you wrote stays here.")
    expect(add).to_be_disabled()
    assert "2 characters over the limit" in add.get_attribute("title")
    page.get_by_label("Title").press("Enter")
    page.wait_for_timeout(300)
    assert sent == [] and not TaskAssignment.objects.filter(room_id=room_id).exists()
    assert box.input_value() == text

    box.press("End")
    box.press("Backspace")
    box.press("Backspace")
    expect(counter).to_have_text(f"{COMMENT:,} of {COMMENT:,} characters.")
    add.click()
    task = wait_for(lambda: TaskAssignment.objects.filter(room_id=room_id).first(), timeout=20)
    assert task.description == text[:-2]
    expect(counter).to_be_hidden()  # the form starts afresh

    # The editor of the task counts the same way, from the text it opens with.
    page.get_by_role("button", name="Edit Move the nightly run").click()
    editor = page.locator("#task-edit").get_by_label("Description (Markdown)")
    edit_counter, save = page.locator("#task-edit-length"), page.locator("#task-edit").get_by_role("button", name="Save")
    expect(edit_counter).to_have_text(f"{COMMENT:,} of {COMMENT:,} characters.")
    expect(editor).to_have_attribute("aria-describedby", "task-edit-length")
    editor.press("End")
    editor.type("!")
    expect(edit_counter).to_contain_text(f"1 over the limit of {COMMENT:,}")
    expect(save).to_be_disabled()
    editor.press("Backspace")
    expect(save).to_be_enabled()
    assert page.errors == []


def test_a_budget_already_spent_is_said_before_saving_and_pauses_the_workspace_at_once(make_page):
    page, manager = make_page("bea")
    room_id = running_workspace(page)
    Room.objects.filter(pk=room_id).update(tokens_used=F("tokens_used") + 5000)
    spent = Room.objects.get(pk=room_id).tokens_used
    open_desk(page, room_id)
    page.get_by_role("button", name="Change").click()
    warning = page.locator("#budget-warning")
    assert warning.is_hidden()

    # Below what was spent: said as it is typed, and Save says what it does; above it, nothing is said.
    page.get_by_label("Token budget").fill(str(spent - 1000))
    warning.wait_for()
    assert warning.inner_text() == (f"This budget is already spent ({spent:,} tokens so far). Saving it pauses the workspace at once: "
                                    "its agents make no more calls until you raise the budget and resume it.")
    assert page.locator("#btn-pacing-save").inner_text() == "Save and pause"
    page.get_by_label("Token budget").fill(str(spent + 100_000))
    warning.wait_for(state="hidden")
    assert page.locator("#btn-pacing-save").inner_text() == "Save"
    page.get_by_label("Token budget").fill(str(spent - 1000))
    page.get_by_role("button", name="Save and pause").click()

    # Saved and paused in one request, and the desk says so, then and for as long as it lasts.
    page.wait_for_function("() => document.querySelector('#toast').textContent.includes('already spent')")
    assert f"That is already spent ({spent:,} tokens): the workspace is paused now" in page.locator("#toast").inner_text()
    room = Room.objects.get(pk=room_id)
    assert room.budget_tokens == spent - 1000 and room.status == "paused" and room.pause_reason == ""
    assert Invocation.objects.get(room_id=room_id, component="room.update").input["after"]["budgetTokens"] == spent - 1000
    assert Invocation.objects.get(room_id=room_id, component="manager.pause_room").user == manager
    page.locator("#budget-spent-notice").wait_for()
    assert page.locator("#status-badge").inner_text() == "Paused"
    # Raised again: the notice goes; the manager resumes.
    page.get_by_role("button", name="Change").click()
    page.get_by_label("Token budget").fill(str(spent + 1_000_000))
    assert warning.is_hidden()
    page.get_by_role("button", name="Save", exact=True).click()
    page.locator("#budget-spent-notice").wait_for(state="hidden")
    assert page.errors == []
