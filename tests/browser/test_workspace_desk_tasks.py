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
