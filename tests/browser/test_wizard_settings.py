"""The wizard sets what a room needs before it starts: a workspace's round pacing, any room's budget, and a
topic within bounds (told on its own step, not at the end)."""
import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from rooms.models import Room
from tests.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.worker]


def test_a_workspace_gets_its_pacing_and_budget_in_the_wizard(make_page):
    page, owner = make_page("wanda")
    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill("x" * 10_001)
    page.get_by_role("button", name="Next").click()
    expect(page.locator("#topic-error")).to_contain_text("at most 10,000")
    topic = "Should we adopt **trunk-based** development for _all_ services this quarter, or wait?"
    page.get_by_label("Topic").fill(topic)
    page.locator("input[name=kind][value=workspace]").check()
    expect(page.locator("#format-choice")).to_be_hidden()  # a workspace has no format
    expect(page.locator("#wizard-title")).to_have_text("New workspace")
    page.get_by_role("button", name="Next").click()

    page.wait_for_selector("#moderator optgroup option", state="attached")
    page.get_by_label("Facilitator", exact=True).select_option(label="The Socratic")
    for name in ("Architect", "Designer"):
        page.locator(".prow").filter(has=page.locator(".name", has_text=re.compile(f"^{name}$"))).locator(".p-check").check()
    page.get_by_role("button", name="Next").click()

    expect(page.get_by_label("Observations per round")).to_have_value("10")  # the server's default pacing
    page.get_by_label("Observations per round").fill("0")
    page.get_by_label("Tokens").fill("1.5")
    page.get_by_role("button", name="Save as draft").click()
    expect(page.locator("#ws-error")).to_contain_text("whole number from 1 to 1000")
    expect(page.locator("#budget-error")).to_contain_text("Tokens")
    assert not Room.objects.filter(owner=owner).exists()  # nothing was created

    page.get_by_label("Observations per round").fill("4")
    page.get_by_label("Minutes per round, at most").fill("2")
    page.get_by_label("Tokens").fill("50000")
    page.get_by_label("US dollars").fill("2")
    expect(page.locator("#review-budget")).to_have_text("50,000 tokens and $2.00")
    expect(page.locator("#review")).to_contain_text("end after 4 observations or 2 minutes")
    expect(page.locator("#review")).not_to_contain_text("Format")
    shot(page, "wizard-workspace-pacing.png")
    page.get_by_role("button", name="Save as draft").click()
    page.wait_for_url(re.compile(r".*/\d+/$"))
    room = Room.objects.get(owner=owner)
    assert room.kind == "workspace" and room.status == "draft" and room.topic == topic
    assert room.turn_policy == {"maxEvents": 4, "maxSeconds": 120}
    assert (room.budget_tokens, room.budget_usd) == (50000, Decimal("2"))
    assert "*" not in room.name and "_" not in room.name and room.name.startswith("Should we adopt trunk-based")
    assert not page.errors, page.errors


def _to_review(page):
    """Through the wizard's first two steps to its review: a discussion of the Socratic with the Architect."""
    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill("Which queue should the billing service use?")
    page.get_by_role("button", name="Next").click()
    page.wait_for_selector("#moderator optgroup option", state="attached")
    page.get_by_label("Facilitator", exact=True).select_option(label="The Socratic")
    page.locator(".prow").filter(has=page.locator(".name", has_text=re.compile("^Architect$"))).locator(".p-check").check()
    page.get_by_role("button", name="Next").click()


def test_a_discussion_takes_a_budget_from_the_wizard(make_page):
    page, owner = make_page("wilma")
    _to_review(page)
    expect(page.locator("#workspace-rounds")).to_be_hidden()
    page.get_by_label("US dollars").fill("0.75")
    expect(page.locator("#review-budget")).to_have_text("$0.75")
    page.get_by_role("button", name="Save as draft").click()
    page.wait_for_url(re.compile(r".*/discussions/\d+/$"))
    room = Room.objects.get(owner=owner)
    assert room.kind == "discussion" and room.budget_usd == Decimal("0.75") and room.budget_tokens is None
    assert room.turn_policy == {}
    expect(page.locator("#budget-line")).to_have_text("Budget: $0.75 · 0 % used")
    assert not page.errors, page.errors


def test_a_start_that_fails_after_saving_keeps_one_draft_and_tries_that_one_again(make_page):
    page, owner = make_page("wendy")
    _to_review(page)
    refusal = '{"error": {"code": "throttled", "message": "Too many requests; try again in a moment.", "details": {}}}'
    page.route(re.compile(r".*/api/discussions/\d+/start$"),
               lambda route: route.fulfill(status=429, body=refusal, content_type="application/json"))
    page.locator("#wizard-start").click()
    expect(page.locator("#wizard-error")).to_contain_text("Saved as a draft, but it could not start")
    expect(page.locator("#wizard-error")).to_contain_text("Too many requests")
    # The room cannot change a draft's topic or seats: the page does not send people there to do it.
    expect(page.locator("#wizard-error")).to_contain_text("Start tries again with the draft as it was saved")
    expect(page.locator("#wizard-error")).not_to_contain_text("change it there")
    assert Room.objects.filter(owner=owner).count() == 1
    page.unroute(re.compile(r".*/api/discussions/\d+/start$"))
    page.locator("#wizard-start").click()
    page.wait_for_url(re.compile(r".*/discussions/\d+/$"))
    room = Room.objects.get(owner=owner)  # still the one draft, now started
    assert room.status != "draft" and page.url.endswith(f"/discussions/{room.pk}/")
    assert not [e for e in page.errors if "429" not in e], page.errors
