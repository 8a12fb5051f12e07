"""The owner links a chat group from the room page, sees it appear live, and unlinks it."""
import pytest

from rooms.actions.chat import ChatRef, do_link_chat, see_chat
from rooms.models import ChatLink
from tests.browser.conftest import shot
from tests.factories import make_discussion

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_link_a_chat_group_from_the_room_page(make_page):
    page, owner = make_page("olga")
    room = make_discussion(owner)
    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_selector("#chat-links li.muted")
    assert page.locator("#chat-links").inner_text() == "No chat group is linked."

    page.get_by_role("button", name="Link a chat group").click()
    command = page.locator("#link-command")
    command.wait_for()
    text = command.inner_text()
    assert text.startswith("/facilitator start ")

    # The group sends the command (here: the action the bridge runs for it); the page shows the chat live.
    chat = see_chat(ChatRef("telegram", "-4001", kind="group", title="Launch team"))
    do_link_chat(chat, text.split()[-1], None)
    item = page.locator("#chat-links li.chat-link")
    item.wait_for()
    assert "Launch team" in item.inner_text() and "Telegram" in item.inner_text()
    page.wait_for_selector("#link-code", state="hidden")  # the code is used up
    shot(page, "room-chat-links.png")
    assert page.errors == []

    unlink = item.get_by_role("button", name="Unlink")
    unlink.click()
    assert item.get_by_role("button", name="Confirm unlink").is_visible()  # nothing happens on the first click
    assert ChatLink.objects.get(chat=chat).active
    item.get_by_role("button", name="Confirm unlink").click()
    page.wait_for_selector("#chat-links li.muted")
    assert not ChatLink.objects.get(chat=chat).active


def test_a_link_made_before_the_socket_joins_still_shows(make_page):
    """The link event reaches the page by replay (its socket joined after the chat was linked)."""
    page, owner = make_page("otto")
    room = make_discussion(owner)
    held = []
    page.route_web_socket("**/socket.io/**", lambda ws: held.append(ws))
    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_selector("#chat-links li.muted")
    page.get_by_role("button", name="Link a chat group").click()
    code = page.locator("#link-command").inner_text().split()[-1]
    for _ in range(200):  # the route's handler runs while Playwright is called
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the page opened no socket"

    do_link_chat(see_chat(ChatRef("teams", "19:team@thread.tacv2", kind="group", title="Ops")), code, None)
    assert page.locator("#chat-links li.chat-link").count() == 0  # nothing live: the socket is held back
    for ws in held:
        ws.connect_to_server()
    item = page.locator("#chat-links li.chat-link")
    item.wait_for()
    assert "Ops" in item.inner_text() and "Teams" in item.inner_text()
    page.wait_for_selector("#link-code", state="hidden")  # the code shown was used
    assert page.errors == []
