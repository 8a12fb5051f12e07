"""The room page keeps what a person was typing when comments close under them (the discussion ends, or the
owner makes them a viewer): the text stays in the box, read-only, with why it was not posted."""
import pytest

from rooms.actions.rooms import do_create_room, do_share_room
from rooms.events import EventType, build, record_event
from rooms.models import Agent, Room
from tests.browser.conftest import shot, sign_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _set_status(room, status):
    Room.objects.filter(pk=room.pk).update(status=status)
    room.refresh_from_db()
    record_event(room, EventType.STATUS, build.status(room))


def test_a_comment_being_typed_survives_a_demotion_and_the_end_of_the_discussion(make_page):
    _, owner = make_page("olga", sign_in=False)
    page, member = make_page("pete", sign_in=False)
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    room = do_create_room(owner, name="Kept", topic="Ship it?", moderator_id=chair.pk,
                          participants=[{"agent_id": architect.pk, "role": "participant"}])
    do_share_room(room, username=member.username, access="participant")
    _set_status(room, "paused")  # people may speak; no step runs
    sign_in_as(page, member.username)
    page.goto(f"/discussions/{room.pk}/")
    page.locator("#comment-form:not([hidden])").wait_for()
    page.wait_for_function("() => window.convene.live.joined")
    box, send, closed = page.locator("#comment-text"), page.locator("#comment-send"), page.locator("#comment-closed")

    # Made a viewer mid-sentence: no reload, the text stays, and it cannot be sent.
    page.evaluate("() => { window.__samePage = true; }")
    box.fill("A careful thought about the rollout")
    do_share_room(room, username=member.username, access="viewer")
    closed.wait_for()
    assert "you may now only read this discussion" in closed.inner_text()
    assert page.evaluate("() => window.__samePage") is True
    assert box.input_value() == "A careful thought about the rollout" and box.is_visible()
    assert box.evaluate("b => b.readOnly") and send.is_disabled()

    # Made a participant again: the box opens, the text still in it.
    do_share_room(room, username=member.username, access="participant")
    page.wait_for_function("() => !document.querySelector('#comment-send').disabled")
    assert closed.is_hidden() and not box.evaluate("b => b.readOnly")

    # The discussion concludes while they type: the form stays with the text, and says why.
    _set_status(room, "concluded")
    closed.wait_for()
    assert "the discussion has concluded" in closed.inner_text()
    assert box.input_value() == "A careful thought about the rollout" and box.is_visible() and send.is_disabled()
    shot(page, "room-comment-kept.png")
    assert not page.errors, page.errors


def test_an_empty_comment_box_goes_away_when_the_discussion_ends(make_page):
    page, owner = make_page("quinn")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    room = do_create_room(owner, name="Gone", topic="Ship it?", moderator_id=chair.pk,
                          participants=[{"agent_id": architect.pk, "role": "participant"}])
    _set_status(room, "paused")
    page.goto(f"/discussions/{room.pk}/")
    page.locator("#comment-form:not([hidden])").wait_for()
    page.wait_for_function("() => window.convene.live.joined")
    _set_status(room, "stopped")
    page.locator("#comment-form").wait_for(state="hidden")
    assert not page.errors, page.errors
