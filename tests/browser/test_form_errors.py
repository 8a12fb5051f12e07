"""Forms say what the server refused in the page's words: a field by its label, never the API's field path."""
import json
import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REFUSAL = {"error": {"code": "validation_error", "message": "The agent is not valid.",
                     "details": {"name": ["Ensure this field has no more than 120 characters."],
                                 "budgetUsd": ["Must be zero or more."]}}}


def test_the_facilitators_page_names_fields_by_their_labels(make_page):
    page, _owner = make_page("fiona")
    page.goto("/facilitators/")
    page.locator("#create-toggle").click()
    page.locator("#f-name").fill("Chair of the week")
    page.route(re.compile(r".*/api/agents$"), lambda route: route.fulfill(
        status=400, body=json.dumps(REFUSAL), content_type="application/json") if route.request.method == "POST"
        else route.continue_())
    page.locator("#create-save").click()
    error = page.locator("#create-error")
    expect(error).to_contain_text("The agent is not valid. Name: Ensure this field has no more than 120 characters.")
    expect(error).to_contain_text("Must be zero or more.")
    assert "name:" not in error.inner_text() and "budgetUsd" not in error.inner_text()
