"""Forms say what the server refused in the page's words: a field by its label, never the API's field path."""
import json
import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_newcomer import serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REFUSAL = {"error": {"code": "validation_error", "message": "The agent is not valid.",
                     "details": {"name": ["Ensure this field has no more than 120 characters."],
                                 "budgetUsd": ["Must be zero or more."]}}}


def test_the_facilitators_page_says_each_refused_field_next_to_it(make_page):
    """As on the Agents page: a field the server refuses is said next to its input (and marked invalid), what has no
    input stays above the buttons in the page's words; a refused persona's prompt is said under the prompt."""
    page, _owner = make_page("fiona")
    page.goto("/facilitators/")
    page.locator("#create-toggle").click()
    page.locator("#create-save").click()  # no name: said next to it, before asking the server
    expect(page.locator("#f-name-error")).to_have_text("Give the facilitator a name.")
    expect(page.locator("#f-name")).to_be_focused()
    expect(page.locator("#create-error")).to_be_hidden()

    page.locator("#f-name").fill("Chair of the week")
    expect(page.locator("#f-name-error")).to_be_hidden()
    page.route(re.compile(r".*/api/agents$"), lambda route: route.fulfill(
        status=400, body=json.dumps(REFUSAL), content_type="application/json") if route.request.method == "POST"
        else route.continue_())
    page.locator("#create-save").click()
    expect(page.locator("#f-name-error")).to_have_text("Ensure this field has no more than 120 characters.")
    expect(page.locator("#f-name")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#f-name")).to_be_focused()
    error = page.locator("#create-error")
    expect(error).to_have_text("The agent is not valid. Must be zero or more.")
    assert "budgetUsd" not in error.inner_text()
    assert not serious_violations(page), serious_violations(page)

    page.route(re.compile(r".*/api/personas$"), lambda route: route.fulfill(status=400, content_type="application/json", body=json.dumps(
        {"error": {"code": "validation_error", "message": "The request is not valid.",
                   "details": {"prompt": ["The prompt needs more than spaces."]}}})))
    page.locator("#f-persona").fill("   x")
    page.locator("#create-save").click()
    expect(page.locator("#f-persona-error")).to_have_text("The prompt needs more than spaces.")
    expect(page.locator("#f-name-error")).to_be_hidden()  # the earlier refusal is gone
    expect(page.locator("#f-persona")).to_be_focused()
    assert not page.errors, page.errors


def test_the_desk_names_fields_in_its_words_a_line_each(make_page):
    """The workspace desk says what the server refused as every page does (api.js errorText): each field by the
    desk's label for it, never the API's field path, one line each; a field it has no word for, its text alone."""
    from tests.workspace.helpers import make_workspace

    page, manager = make_page("wanda")
    room = make_workspace(manager)
    refusal = {"error": {"code": "validation_error", "message": "The budget is not valid.", "details": {
        "turnPolicy.maxEvents": ["Must be a whole number from 1 to 1000."],
        "budgetTokens": ["Must be a positive whole number."],
        "pacing[0].unknownThing": ["Something else is off."],
        "budgetUsd": ["The budget is not valid."]}}}  # only repeats the message: left out
    page.goto(f"/workspaces/{room.pk}/")
    page.wait_for_function("() => 'source' in document.querySelector('#room-topic').dataset")  # the room is read
    page.locator("#btn-pacing").click()
    page.route(re.compile(rf".*/api/discussions/{room.pk}$"), lambda route: route.fulfill(
        status=400, body=json.dumps(refusal), content_type="application/json") if route.request.method == "PATCH"
        else route.continue_())
    page.locator("#pacing-form").get_by_role("button", name="Save").click()
    said = page.locator("#pacing-error")  # under the form it refused
    expect(said).to_contain_text("Observations per round")
    assert said.inner_text().split("\n") == [
        "The budget is not valid.", "Observations per round: Must be a whole number from 1 to 1000.",
        "Token budget: Must be a positive whole number.", "Something else is off."]
    assert not page.errors, page.errors


def test_every_alias_an_agent_can_have_is_highlighted_as_the_server_reads_it(make_page):
    """The pages mark the same @mentions as the engine reads (facilitation.deliberation.markers): aliases that
    start with a digit, "-" or "_", never an e-mail address or a lone "@-"."""
    from facilitation.deliberation.markers import mention_targets

    page, _owner = make_page("milo")
    page.goto("/")
    line = "Ask @42 and @3d-artist, then @_bot; mail a@b.com or @team.example.org, not @- or @architect"
    shown = page.evaluate("""line => [...window.ConveneMarkdown.markdownNode(line).querySelectorAll('.mention')]
        .map(n => n.textContent)""", line)
    assert shown == ["@42", "@3d-artist", "@_bot", "@architect"]
    assert shown == [f"@{alias}" for alias in mention_targets(line)]
