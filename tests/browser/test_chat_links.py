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

    unlink = item.get_by_role("button", name="Unlink")
    unlink.click()
    assert item.get_by_role("button", name="Confirm unlink").is_visible()  # nothing happens on the first click
    assert ChatLink.objects.get(chat=chat).active
    item.get_by_role("button", name="Confirm unlink").click()
    page.wait_for_selector("#chat-links li.muted")
    assert not ChatLink.objects.get(chat=chat).active
