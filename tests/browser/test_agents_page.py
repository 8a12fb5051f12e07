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


def test_an_agents_expertise_and_concerns_are_written_a_line_each_and_refused_next_to_their_field(make_page):
    page, owner = make_page("erika")
    page.goto("/agents/")
    page.wait_for_selector("#builtin-list [data-builtin=true]")
    page.get_by_role("button", name="Create agent").click()
    page.get_by_label("Name", exact=True).fill("Cache Expert")
    expertise = page.get_by_label("Expertise")
    expertise.fill("Caching\n\n" + "x" * 301 + "\n")
    page.get_by_label("Concerns").fill("  Stale prices  \nWhat happens at ten times the load?")
    page.get_by_role("button", name="Save agent").click()
    # The server refuses the long item: said next to the field, by the line it is on (the empty one counted).
    error = page.locator("#a-expertise-error")
    expect(error).to_have_text("Line 3: Ensure this field has no more than 300 characters.")
    expect(expertise).to_have_attribute("aria-invalid", "true")
    expect(expertise).to_be_focused()
    expect(page.locator("#form-error")).not_to_contain_text("300 characters")
    assert not Agent.objects.filter(name="Cache Expert").exists()
    assert not serious_violations(page), serious_violations(page)
    expertise.fill("Caching\n\nDatabase tuning\n")
    expect(error).to_be_hidden()
    expect(expertise).not_to_have_attribute("aria-invalid", "true")
    page.get_by_role("button", name="Save agent").click()
    card = page.locator("#custom-list [data-builtin=false]", has_text="Cache Expert")
    expect(card).to_contain_text("Caching, Database tuning")
    agent = Agent.objects.get(name="Cache Expert", created_by=owner)
    assert agent.expertise == ["Caching", "Database tuning"]
    assert agent.concerns == ["Stale prices", "What happens at ten times the load?"]

    # Edited: the form shows them a line each; what is changed is saved, an emptied field empties the list.
    page.get_by_role("button", name="Edit Cache Expert").click()
    expect(expertise).to_have_value("Caching\nDatabase tuning")
    expect(page.get_by_label("Concerns")).to_have_value("Stale prices\nWhat happens at ten times the load?")
    expertise.fill("Caching\nInvalidation")
    page.get_by_label("Concerns").fill("")
    page.get_by_role("button", name="Save changes").click()
    expect(card).to_contain_text("Caching, Invalidation")
    agent.refresh_from_db()
    assert (agent.expertise, agent.concerns) == (["Caching", "Invalidation"], [])
    assert not page.errors, page.errors
