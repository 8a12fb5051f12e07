"""Searching the desk: each hit leads to where it is (the observation, the task, the round's narrative); nothing
found is said.

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import pytest

from rooms.models import Narrative, Observation
from tests.browser.conftest import api
from tests.browser.test_workspace_desk_feedback import desk_with_a_narrative

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def focused(page, attribute):
    return page.evaluate(f"document.activeElement.dataset.{attribute} || document.activeElement.id")


def test_a_search_hit_leads_to_what_it_found(make_page):
    page, manager = make_page("sven")
    room_id, narrative = desk_with_a_narrative(page)
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Measure the zebrafish queue"})
    assert status == 201, body
    task_id = body["data"]["id"]
    question = Observation.objects.filter(room_id=room_id, event_type="question").order_by("seq").first()
    word = question.content.split()[-1].strip("?.,")
    # The list is filtered so that the observation is not shown.
    page.locator("#filter-type").select_option("solution")
    assert page.locator(f"#observations [data-observation-id='{question.pk}']").count() == 0

    search = page.get_by_label("Search the workspace")
    search.fill(question.content)
    search.press("Enter")
    hit = page.locator(f"#search-results a[data-goto=observation][data-id='{question.pk}']")
    hit.wait_for()
    assert f"question by {question.seat.agent.name}, round {question.round}: {question.content}" == hit.inner_text()
    hit.focus()
    page.keyboard.press("Enter")  # by the keyboard
    page.wait_for_function("(id) => document.activeElement.dataset.observationId === String(id)", arg=question.pk)
    assert page.locator("#filter-type").input_value() == ""

    search.fill("zebrafish")
    search.press("Enter")
    # The board shows the task once its event reached the desk (a hit for a task not on the board says so instead).
    page.locator(f"#board [data-task-id='{task_id}']").wait_for(state="attached")
    page.locator("#search-results a[data-goto=task]").click()
    page.wait_for_function("(id) => document.activeElement.dataset.taskId === String(id)", arg=task_id)

    Narrative.objects.filter(pk=narrative.pk).update(next_steps=["Ask the okapi team"])
    search.fill("okapi")
    search.press("Enter")
    link = page.locator(f"#search-results a[data-goto=narrative][data-id='{narrative.pk}']")
    link.click()
    page.wait_for_function("() => document.activeElement.id === 'narrative-round'")
    assert page.locator("#narrative-round").input_value() == str(narrative.pk)

    search.fill("quetzalcoatl")
    search.press("Enter")
    page.wait_for_function("() => document.querySelector('#search-results').textContent"
                           ".includes('Nothing in this workspace matches “quetzalcoatl”.')")
    search.fill("   ")
    search.press("Enter")
    page.wait_for_function("() => document.querySelector('#search-results').textContent.includes('Type what to look for first.')")
    assert page.errors == []
