"""The manager deletes a task from the desk (one made by mistake); a viewer's board follows live.

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import pytest

from rooms.models import Invocation, RoomMember, TaskAssignment
from tests.browser.conftest import api
from tests.browser.test_workspace_desk_feedback import open_desk, running_workspace
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_the_manager_deletes_a_task_after_confirming_and_the_viewer_sees_it_go(make_page):
    page, manager = make_page("tess")
    room_id = running_workspace(page)
    ids = [api(page, "POST", f"discussions/{room_id}/tasks", {"title": title})[1]["data"]["id"]
           for title in ("Typo task", "Write the outbox")]
    viewer_page, viewer = make_page("vera")
    RoomMember.objects.create(room_id=room_id, user=viewer, access=RoomMember.Access.VIEWER)
    open_desk(page, room_id)
    open_desk(viewer_page, room_id)
    assert viewer_page.locator("#board [data-task-id]").count() == 2
    assert viewer_page.get_by_role("button", name="Delete task").count() == 0  # a viewer changes nothing

    page.get_by_role("button", name="Edit Typo task").click()
    delete = page.locator("#task-edit").get_by_role("button", name="Delete task")
    # Dismissed: nothing is deleted.
    page.once("dialog", lambda d: d.dismiss())
    delete.click()
    page.wait_for_timeout(300)
    assert TaskAssignment.objects.filter(pk=ids[0]).exists()
    # Confirmed (by the keyboard): the task goes from the board, the database and the viewer's board.
    dialogs = []
    page.once("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    delete.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#toast').textContent.includes('Task deleted: Typo task')")
    assert "Typo task" in dialogs[0] and "cannot be undone" in dialogs[0]
    wait_for(lambda: not TaskAssignment.objects.filter(pk=ids[0]).exists() or None)
    assert page.locator("#task-edit").is_hidden()
    assert page.evaluate("document.activeElement.id") == "task-title"
    for p in (page, viewer_page):
        p.wait_for_function("() => document.querySelectorAll('#board [data-task-id]').length === 1")
        assert p.locator("#board [data-task-id]").get_attribute("data-task-id") == str(ids[1])
    assert Invocation.objects.filter(room_id=room_id, component="manager.delete_task", user=manager).count() == 1
    assert page.errors == [] and viewer_page.errors == []


def test_a_task_being_written_or_edited_comes_back_after_a_reload(make_page):
    page, manager = make_page("toby")
    room_id = running_workspace(page)
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Write the runbook", "priority": 2})
    assert status == 201, body
    open_desk(page, room_id)
    # A new task half written, and an existing one being edited.
    page.locator("#task-title").fill("Measure the queue")
    page.locator("#task-description").fill("- p95 latency\n- **dead letters**")
    page.locator("#task-priority").select_option("5")
    page.get_by_role("button", name="Edit Write the runbook").click()
    editor = page.locator("#task-edit")
    editor.get_by_label("Title").fill("Write the runbook for on-call")
    page.reload()
    open_desk(page, room_id)
    page.wait_for_function("() => !document.querySelector('#task-edit').hidden")
    assert editor.get_by_label("Title").input_value() == "Write the runbook for on-call"
    assert page.locator("#task-title").input_value() == "Measure the queue"
    assert page.locator("#task-description").input_value() == "- p95 latency\n- **dead letters**"
    assert page.locator("#task-priority").input_value() == "5"
    assert TaskAssignment.objects.get(pk=body["data"]["id"]).title == "Write the runbook"  # nothing was sent

    # Saved and added, nothing comes back any more.
    editor.get_by_role("button", name="Save").click()
    page.wait_for_function("() => document.querySelector('#task-edit').hidden")
    page.get_by_role("button", name="Add task").click()
    page.wait_for_function("() => document.querySelectorAll('#board [data-task-id]').length === 2")
    assert TaskAssignment.objects.get(pk=body["data"]["id"]).title == "Write the runbook for on-call"
    page.reload()
    open_desk(page, room_id)
    page.wait_for_timeout(300)
    assert page.locator("#task-edit").is_hidden() and page.locator("#task-title").input_value() == ""
    assert page.locator("#task-priority").input_value() == "3"
    assert page.errors == []
