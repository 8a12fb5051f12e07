"""A form's help is a visible line its box is described by, not a placeholder that goes away as one types: the New
facilitation run form and the New discussion page's new-facilitator description."""
import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _described(page, box, help_id, start):
    """`box` is described by its visible help line `help_id`, which starts with `start`; its placeholder, if any, is an
    example."""
    help_line = page.locator(f"#{help_id}")
    expect(help_line).to_be_visible()
    expect(help_line).to_contain_text(start)
    expect(box).to_have_accessible_description(help_line.inner_text())
    placeholder = box.get_attribute("placeholder")
    assert placeholder is None or placeholder.startswith("e.g. "), placeholder


def test_the_run_forms_boxes_say_how_to_fill_them_in_lines_they_are_described_by(make_page):
    page, owner = make_page("hana")
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    page.goto("/facilitation/new/")
    _described(page, page.get_by_role("textbox", name="Goal"), "run-topic-help", "What the group should end up with")
    _described(page, page.get_by_role("textbox", name="Name (optional)"), "run-name-help", "How the run is listed")
    _described(page, page.get_by_role("textbox", name="Roles"), "run-roles-help", "separated by commas")
    page.get_by_role("radio", name="Make a decision").check()
    _described(page, page.get_by_role("textbox", name="Options (optional)"), "run-options-help", "separated by commas")
    _described(page, page.get_by_role("textbox", name="Send the result to"), "run-report-help", "Usernames, and groups as role:NAME")
    assert not page.errors, page.errors


def test_the_new_facilitators_description_says_what_it_is_for_in_a_line_it_is_described_by(make_page):
    page, _owner = make_page("hugo")
    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill("Should we cache the product catalogue?")
    page.get_by_role("button", name="Next").click()
    page.get_by_role("button", name="New facilitator").click()
    _described(page, page.get_by_role("textbox", name="Description"), "nf-description-help", "A line that tells this facilitator apart")
    expect(page.locator("#nf-description-help").get_by_role("link", name="Facilitators page")).to_have_attribute("href", "/facilitators/")
    assert not page.errors, page.errors
