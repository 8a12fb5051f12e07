"""The Facilitators page: a facilitator's persona written on the form is one row however often the save is refused."""
import json
import re

import pytest
from playwright.sync_api import expect

from rooms.models import Agent, Persona

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REFUSAL = {"error": {"code": "validation_error", "message": "The agent is not valid.",
                     "details": {"model": ["Unknown model."]}}}


def refuse_once(page, pattern, method):
    """The first `method` request to `pattern` is refused with REFUSAL; the rest reach the server."""
    refused = []

    def handle(route):
        if route.request.method == method and not refused:
            refused.append(route.request.url)
            route.fulfill(status=400, body=json.dumps(REFUSAL), content_type="application/json")
        else:
            route.continue_()

    page.route(re.compile(pattern), handle)
    return refused


def test_a_new_facilitators_persona_is_written_once_when_the_agent_is_refused(make_page):
    """As on the Agents page: the persona made before the refused agent is the one saved again (with the text
    as it reads now), not a second row."""
    page, owner = make_page("fern")
    page.goto("/facilitators/")
    page.wait_for_selector("#builtin-list [data-builtin=true]")
    page.locator("#create-toggle").click()
    page.locator("#f-name").fill("Weekly chair")
    page.locator("#f-persona").fill("You keep the room short.")
    refused = refuse_once(page, r".*/api/agents$", "POST")
    page.locator("#create-save").click()
    expect(page.locator("#f-model-error")).to_have_text("Unknown model.")
    assert refused
    assert Persona.objects.filter(created_by=owner).count() == 1  # made before the agent was refused

    page.locator("#f-persona").fill("You keep the room short and name who decides.")
    page.locator("#create-save").click()
    page.locator("#custom-list [data-builtin=false]", has_text="Weekly chair").wait_for()
    agent = Agent.objects.get(name="Weekly chair", created_by=owner)
    assert Persona.objects.filter(created_by=owner).count() == 1  # the refused save did not write it twice
    assert agent.is_facilitator and agent.persona.prompt == "You keep the room short and name who decides."
    assert not page.errors, page.errors


def test_an_edited_facilitators_new_persona_is_written_once_when_the_agent_is_refused(make_page):
    """A facilitator on the shared generic persona gets a persona of its own when its prompt is edited: one row,
    even when the agent's save is refused after it was made."""
    page, owner = make_page("fenna")
    page.goto("/facilitators/")
    page.wait_for_selector("#builtin-list [data-builtin=true]")
    page.locator("#create-toggle").click()
    page.locator("#f-name").fill("Plain chair")
    page.locator("#f-persona").fill("")
    page.locator("#create-save").click()
    page.locator("#custom-list [data-builtin=false]", has_text="Plain chair").wait_for()
    agent = Agent.objects.get(name="Plain chair", created_by=owner)
    assert agent.persona is None or agent.persona.is_builtin

    page.get_by_role("button", name="Edit Plain chair").click()
    page.locator("#f-persona").fill("You ask each person once.")
    refused = refuse_once(page, rf".*/api/agents/{agent.pk}$", "PATCH")
    page.locator("#create-save").click()
    expect(page.locator("#f-model-error")).to_have_text("Unknown model.")
    assert refused
    page.locator("#create-save").click()
    expect(page.locator("#create-form")).to_be_hidden()
    agent.refresh_from_db()
    assert Persona.objects.filter(created_by=owner).count() == 1
    assert agent.persona.prompt == "You ask each person once." and agent.persona.created_by == owner
    assert not page.errors, page.errors
