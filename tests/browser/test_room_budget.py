"""A discussion's budget on its room page: everyone with access reads it, whoever controls the room sets it there."""
import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from rooms.actions.rooms import do_share_room
from rooms.events import EventType, build, record_event
from rooms.models import Invocation, Room
from tests.browser.conftest import shot
from tests.factories import make_discussion

pytestmark = [pytest.mark.browser, pytest.mark.worker]


def test_the_owner_sets_the_budget_on_the_page_and_a_viewer_only_reads_it(make_page):
    page, owner = make_page("bruna")
    room = make_discussion(owner, max_rounds=2)
    page.goto(f"/discussions/{room.pk}/")
    line = page.locator("#budget-line")
    expect(line).to_have_text("No budget caps this discussion.")

    page.get_by_role("button", name="Change budget").click()
    # Refused by the server (over the largest dollar budget): the reason shows, nothing changes.
    page.get_by_label("US dollars").fill("2000000")
    page.get_by_role("button", name="Save budget").click()
    expect(page.locator("#budget-error")).to_contain_text("budget")
    room.refresh_from_db()
    assert room.budget_usd is None and room.budget_tokens is None

    shot(page, "room-budget-form.png")
    page.get_by_label("Tokens").fill("20000")
    page.get_by_label("US dollars").fill("1.5")
    page.get_by_role("button", name="Save budget").click()
    expect(line).to_have_text("Budget: 20,000 tokens and $1.50 · 0 % used")
    expect(page.locator("#budget-form")).to_be_hidden()
    room.refresh_from_db()
    assert (room.budget_tokens, room.budget_usd) == (20000, Decimal("1.5"))
    assert Invocation.objects.filter(room_id=room.pk, component="room.update", input__after__budgetTokens=20000).exists()

    # An emptied field takes that budget away.
    page.get_by_role("button", name="Change budget").click()
    page.get_by_label("US dollars").fill("")
    page.get_by_role("button", name="Save budget").click()
    expect(line).to_have_text("Budget: 20,000 tokens · 0 % used")
    room.refresh_from_db()
    assert (room.budget_tokens, room.budget_usd) == (20000, None)
    Room.objects.filter(pk=room.pk).update(budget_usd=Decimal("1.5"))

    # Spending shows against it; the form is there only while the room can still spend.
    Room.objects.filter(pk=room.pk).update(tokens_used=5000)
    page.reload()
    expect(line).to_have_text("Budget: 20,000 tokens and $1.50 · 25 % used")
    Room.objects.filter(pk=room.pk).update(status="concluded")
    record_event(Room.objects.get(pk=room.pk), EventType.STATUS, build.status(Room.objects.get(pk=room.pk)))
    page.reload()
    expect(line).to_contain_text("25 % used")
    expect(page.get_by_role("button", name="Change budget")).to_be_hidden()
    # A concluded discussion can be run again from a copy.
    page.get_by_role("button", name="Copy as new draft").click()
    page.wait_for_url(re.compile(rf".*/discussions/(?!{room.pk}/)\d+/$"))
    copy = Room.objects.exclude(pk=room.pk).get(owner=owner)
    assert copy.status == "draft" and copy.topic == room.topic
    assert not page.errors, page.errors

    viewer_page, viewer = make_page("vito")
    do_share_room(room, username=viewer.username, access="viewer", actor=owner)
    viewer_page.goto(f"/discussions/{room.pk}/")
    expect(viewer_page.locator("#budget-line")).to_have_text("Budget: 20,000 tokens and $1.50 · 25 % used")
    assert viewer_page.locator("#btn-budget, #budget-form, #btn-copy-concluded, .toolbar-sep").count() == 0
