"""The Agents page, on a phone-sized screen: an agent made, refused on a taken alias next to the field, edited,
picked in the New discussion page that opened the page, refused deletion while it is seated, and deleted."""
import pytest
from playwright.sync_api import expect

from rooms.models import Agent, Persona, Room
from tests.browser.conftest import shot
from tests.browser.test_newcomer import serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def test_make_an_agent_edit_it_pick_it_and_delete_one(make_page):
    wizard, owner = make_page("agnes", viewport=PHONE)
    wizard.goto("/discussions/new/")
    wizard.get_by_label("Topic").fill("Should we cache the product catalogue?")
    wizard.get_by_role("button", name="Next").click()
    wizard.locator("#participants .prow").first.wait_for()
    with wizard.context.expect_page() as opened:
        wizard.get_by_role("link", name="Make a new agent").click()
    page = opened.value
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.wait_for_selector("#builtin-list [data-builtin=true]")
    assert page.locator("#builtin-list [data-delete], #builtin-list [data-edit]").count() == 0  # built-ins are read-only

    # Created: the alias follows the name; a taken one is refused next to the field, the new persona kept.
    page.get_by_role("button", name="Create agent").click()
    page.get_by_label("Name", exact=True).fill("Cache Skeptic")
    expect(page.get_by_label("Alias")).to_have_value("cache-skeptic")
    page.get_by_label("Alias").fill("architect")
    page.get_by_label("Role", exact=True).select_option(label="Devil's advocate")
    expect(page.locator("#a-role-help")).to_contain_text("Devil's advocate: ")  # what the chosen role does
    page.get_by_label("Persona", exact=True).select_option(label="Write a new persona…")
    page.get_by_label("Persona name").fill("Doubter")
    page.get_by_label("Persona prompt").fill("You doubt every cache until someone shows the hit rate.")
    page.get_by_label("Tokens").fill("5000")
    page.get_by_role("button", name="Save agent").click()
    expect(page.locator("#a-alias-error")).to_contain_text("The built-in agent 'Architect' uses the alias 'architect'")
    expect(page.get_by_label("Alias")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#new-persona")).to_be_hidden()  # the persona was made: it is now chosen from the catalogue
    shot(page, "agents-phone-refused.png")
    assert not serious_violations(page), serious_violations(page)
    page.get_by_label("Alias").fill("skeptic")
    page.get_by_role("button", name="Save agent").click()
    page.locator("#custom-list [data-builtin=false]", has_text="Cache Skeptic").wait_for()
    agent = Agent.objects.get(name="Cache Skeptic")
    assert (agent.alias, agent.is_facilitator, agent.created_by, agent.budget_tokens) == ("skeptic", False, owner, 5000)
    assert agent.role.key == "devil_advocate" and agent.persona.prompt.startswith("You doubt every cache")
    assert Persona.objects.filter(name="Doubter").count() == 1  # the failed save did not write it twice

    # Edited.
    page.get_by_role("button", name="Edit Cache Skeptic").click()
    expect(page.get_by_label("Persona", exact=True)).to_have_value(str(agent.persona_id))
    page.get_by_label("Name", exact=True).fill("Cache Doubter")
    page.get_by_role("button", name="Save changes").click()
    page.locator("#custom-list [data-builtin=false]", has_text="Cache Doubter").wait_for()
    agent.refresh_from_db()
    assert agent.name == "Cache Doubter" and agent.alias == "skeptic"
    shot(page, "agents-phone.png")

    # Picked in the wizard that opened the page, which read the agents again.
    wizard.bring_to_front()
    wizard.locator(".prow", has_text="Cache Doubter").locator(".p-check").check()
    wizard.get_by_label("Facilitator", exact=True).select_option(index=1)
    wizard.get_by_role("button", name="Next").click()
    wizard.get_by_role("button", name="Save as draft").click()
    wizard.wait_for_url("**/discussions/*/")
    room = Room.objects.get(topic="Should we cache the product catalogue?")
    assert room.seats.filter(agent=agent).exists()

    # Seated, it is not deleted, and the page says why; one never seated is.
    page.bring_to_front()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete Cache Doubter").click()
    expect(page.locator("#list-error")).to_contain_text("still in use")
    expect(page.locator("#list-error")).to_contain_text("seat in a discussion")
    assert Agent.objects.filter(pk=agent.pk).exists()
    page.get_by_role("button", name="Create agent").click()
    page.get_by_label("Name", exact=True).fill("Spare")
    page.get_by_role("button", name="Save agent").click()
    spare = page.locator("#custom-list [data-builtin=false]", has_text="Spare")
    spare.wait_for()
    page.once("dialog", lambda dialog: dialog.accept())
    spare.get_by_role("button", name="Delete Spare").click()
    spare.wait_for(state="detached")
    assert not Agent.objects.filter(name="Spare").exists()
    assert not page.errors and not wizard.errors, (page.errors, wizard.errors)
