"""Choices and boxes are named by their labels alone; their help is read as their description: the New discussion
page's kind, format and rounds choices, and a room's comment box (whose help is a visible line, not a placeholder)."""
import re

import pytest
from playwright.sync_api import expect

from rooms.actions.rooms import do_create_room
from rooms.models import Agent
from tests.browser.conftest import pause_quietly

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _radio(page, name, help_start):
    radio = page.get_by_role("radio", name=name, exact=True)
    expect(radio).to_have_accessible_name(name)
    expect(radio).to_have_accessible_description(re.compile("^" + re.escape(help_start)))
    return radio


def test_the_new_discussion_choices_are_named_by_their_label_and_described_by_their_help(make_page):
    page, _owner = make_page("nadia")
    page.goto("/discussions/new/")
    _radio(page, "Discussion", "The assistants debate;")
    _radio(page, "Brainstorm", "Open ideation:")
    _radio(page, "Review", "Structured critique:")
    _radio(page, "Deliberation", "Weigh the arguments")
    _radio(page, "Workspace", "The assistants publish observations").check()  # the label still picks it
    expect(page.locator("#format-choice")).to_be_hidden()
    page.get_by_role("radio", name="Discussion", exact=True).check()
    page.get_by_label("Topic").fill("Should we cache the product catalogue?")
    page.get_by_role("button", name="Next").click()
    page.wait_for_selector("#moderator optgroup option", state="attached")
    page.get_by_label("Facilitator", exact=True).select_option(index=1)
    page.locator(".prow").filter(has=page.locator(".name", has_text=re.compile("^Architect$"))).locator(".p-check").check()
    page.get_by_role("button", name="Next").click()
    _radio(page, "Auto (recommended)", "The facilitator ends the discussion as soon as it judges the question settled")
    page.locator("#rounds-fixed-label").click()  # clicking the label's words still chooses it
    expect(_radio(page, "Fixed limit", "You choose the most turns it may take")).to_be_checked()
    expect(page.get_by_label("Maximum rounds (1–20)")).to_be_enabled()
    assert not page.errors, page.errors


def test_the_comment_box_says_how_to_vote_and_mention_in_a_line_it_is_described_by(make_page):
    page, owner = make_page("cora")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    room = do_create_room(owner, name="Helpful", topic="Ship it?", moderator_id=chair.pk,
                          participants=[{"agent_id": architect.pk, "role": "participant"}])
    pause_quietly(room)  # people may speak; no step runs
    page.goto(f"/discussions/{room.pk}/")
    box = page.get_by_role("textbox", name="Your comment")
    help_line = page.locator("#comment-help")
    expect(help_line).to_be_visible()
    expect(help_line).to_contain_text("VOTE: READY")
    expect(box).to_have_accessible_description(help_line.inner_text())
    assert box.get_attribute("placeholder") is None
    assert not page.errors, page.errors
