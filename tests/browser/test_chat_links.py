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


def test_a_person_links_and_unlinks_their_chat_account_on_the_page(make_page):
    from rooms.models import ChatCode, ChatIdentity

    page, user = make_page("petra")
    page.goto("/")
    page.get_by_role("link", name="Chat accounts").click()
    page.wait_for_url("**/account/chats/")
    page.locator("#chats-empty").wait_for()
    page.get_by_role("button", name="Get a code").click()
    page.locator("#chats-code-box").wait_for()
    code = ChatCode.objects.get(purpose="identity", user=user)
    assert page.locator("#chats-command").text_content() == f"/start {code.code}"
    identity = ChatIdentity.objects.create(platform="telegram", external_id="9001", name="Petra", username="petra_k", user=user)
    page.reload()
    row = page.locator(f"#chats-list [data-identity-id='{identity.pk}']")
    row.wait_for()
    assert "Telegram" in row.inner_text() and "@petra_k" in row.inner_text() and page.locator("#chats-empty").is_hidden()
    row.get_by_role("button", name="Unlink").click()
    page.locator("#chats-empty").wait_for()
    identity.refresh_from_db()
    assert identity.user is None


def test_a_group_moved_to_another_room_leaves_the_old_room_s_list_live(make_page):
    """Whoever linked a group sends another room's code there: the room the group left shows, live, that it is no
    longer linked (its link event), without a reload."""
    from rooms.actions.chat import do_create_room_code
    from rooms.models import ChatIdentity

    page, owner = make_page("greta")
    room = make_discussion(owner)
    chat = see_chat(ChatRef("telegram", "-4101", kind="group", title="Moving team"))
    linker = ChatIdentity.objects.create(platform="telegram", external_id="4102", name="Lin")
    do_link_chat(chat, do_create_room_code(room, owner).code, linker)
    page.goto(f"/discussions/{room.pk}/")
    item = page.locator("#chat-links li.chat-link")
    item.wait_for()
    assert "Moving team" in item.inner_text()

    do_link_chat(chat, do_create_room_code(make_discussion(owner), owner).code, linker)
    page.wait_for_selector("#chat-links li.muted")
    assert page.locator("#chat-links").inner_text() == "No chat group is linked."
    assert ChatLink.objects.get(chat=chat, room=room).active is False
    assert page.errors == []
