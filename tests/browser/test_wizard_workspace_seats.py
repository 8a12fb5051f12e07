"""The wizard offers a workspace only agents that can work in one, and says what the server refuses in
words people understand (the agent's name, not ``participants[1].agentId``)."""
import pytest

from rooms.models import Agent, Role, Room, Seat
from tests.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _rows(page) -> set[int]:
    return {int(i) for i in page.eval_on_selector_all("#participants .prow", "ns => ns.map(n => n.dataset.agentId)")}


def _to_step_two(page, kind):
    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill("Which cache should the storefront use?")
    page.locator(f"input[name='kind'][value='{kind}']").check()
    page.get_by_role("button", name="Next").click()
    page.wait_for_selector("#participants .prow")


def test_a_workspace_is_offered_only_agents_that_work_and_a_refusal_names_the_agent(make_page):
    page, owner = make_page("wanda")
    watcher = Agent.objects.create(name="Quiet Watcher", alias="quiet-watcher", created_by=owner,
                                   role=Role.objects.get(key=Seat.Role.OBSERVER))
    spark = Agent.objects.get(is_builtin=True, name="The Spark")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    security = Agent.objects.get(is_builtin=True, alias="security")
    facilitators = set(Agent.objects.filter(is_facilitator=True).values_list("pk", flat=True))

    # A discussion may seat them all (a facilitator too, under "Facilitators as participants").
    _to_step_two(page, "discussion")
    assert {watcher.pk, spark.pk, architect.pk} <= _rows(page)
    assert page.locator("#participants details.more-agents").count() == 1

    # A workspace: no facilitator, no agent whose own role is observer or facilitator; the page says why.
    page.get_by_role("button", name="Back").click()
    page.locator("input[name='kind'][value='workspace']").check()
    page.get_by_role("button", name="Next").click()
    page.wait_for_selector("#not-working")
    offered = _rows(page)
    assert architect.pk in offered and security.pk in offered
    assert not offered & facilitators and watcher.pk not in offered, offered
    assert page.locator("#participants details.more-agents").count() == 0
    note = page.locator("#not-working").inner_text()
    assert "facilitators are not offered" in note and "Quiet Watcher (Observer)" in note, note
    shot(page, "wizard-workspace-seats.png")

    # What the server refuses all the same (here: an agent whose role changed since the page loaded) is
    # said on step 2, by the agent's name, without the API's field path.
    page.get_by_label("Facilitator", exact=True).select_option(label="The Impartial Chair")
    for agent in (architect, security):
        page.locator(f".prow[data-agent-id='{agent.pk}'] .p-check").check()
    Agent.objects.filter(pk=security.pk).update(role=Role.objects.get(key=Seat.Role.OBSERVER))
    page.get_by_role("button", name="Next").click()
    page.get_by_role("button", name="Start workspace").click()
    error = page.locator("#participants-error")
    error.wait_for()
    text = error.inner_text()
    assert "Security works as Observer" in text, text
    assert "participants[" not in text and "agentId" not in text, text
    assert page.locator("fieldset.step[data-step='2']").is_visible()
    assert Room.objects.count() == 0
    shot(page, "wizard-refusal-in-words.png")
    assert not page.errors, page.errors
