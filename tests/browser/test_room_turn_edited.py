"""The room page shows a chat message edited by its author as it reads now, marked, without a reload."""
import pytest

from facilitation.actions.comments import do_delete_chat_message, do_edit_chat_message, do_record_chat_message
from rooms.actions.rooms import do_create_room
from rooms.models import Agent, Chat, ChatIdentity, ChatLink
from tests.browser.conftest import pause_quietly, shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_edited_chat_message_changes_its_card_live(make_page):
    page, owner = make_page("olga")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    room = do_create_room(owner, name="Edits", topic="Who leads?", moderator_id=chair.pk,
                          participants=[{"agent_id": architect.pk, "role": "participant"}])
    pause_quietly(room)  # people may speak; no step runs
    chat = Chat.objects.create(platform="telegram", external_id="-4001", kind="group", title="Roles", bot_present=True)
    ChatLink.objects.create(chat=chat, room=room)
    ben = ChatIdentity.objects.create(platform="telegram", external_id="502", name="Ben")
    turn = do_record_chat_message(chat, ben, "I'll take Lead", message_id="7")
    page.goto(f"/discussions/{room.pk}/")
    card = page.locator(f'[data-kind="turn"][data-turn-id="{turn.pk}"]')
    card.wait_for()
    page.wait_for_function("() => window.convene.live.joined")
    assert "I'll take Lead" in card.inner_text() and card.locator(".turn-changed").count() == 0

    assert do_edit_chat_message(chat, ben, "7", "I'll take Scribe") == "edited"
    card.locator(".turn-changed").wait_for()
    assert "I'll take Scribe" in card.inner_text() and "Lead" not in card.inner_text()
    assert card.get_attribute("data-changed") == "edited"
    assert page.locator('[data-kind="turn"]').count() == 1  # changed in place, not a second card

    page.reload()  # the transcript as the REST API gives it says so too
    card.locator(".turn-changed").wait_for()
    assert "I'll take Scribe" in card.inner_text()
    shot(page, "room-turn-edited.png")

    page.wait_for_function("() => window.convene.live.joined")
    assert do_delete_chat_message(chat, ben, "7") == "deleted"
    page.wait_for_function("id => document.querySelector(`[data-turn-id='${id}']`).dataset.changed === 'deleted'", arg=turn.pk)
    assert "(deleted by its author)" in card.inner_text() and "Scribe" not in card.inner_text()
    assert card.locator(".turn-changed").inner_text() == "deleted"
    assert not page.errors, page.errors
