"""What is on its way is said: observations arriving live, in one line above the list (the list itself is drawn again
whole, so it is not a live region that would read every observation out again); a round's narrative being written.

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import pytest
from django.db import transaction

from facilitation.workspace.payloads import narrative_payload
from rooms.events import EventType, record_event
from rooms.models import Narrative, Observation, Room
from tests.browser.conftest import api
from tests.browser.test_workspace_desk import create_workspace, typed
from tests.browser.test_workspace_desk_feedback import open_desk, running_workspace
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_new_observations_are_counted_and_the_latest_named_above_the_list(make_page):
    page, manager = make_page("otto")
    room_id = create_workspace(page)
    assert api(page, "PATCH", f"discussions/{room_id}", {"turnPolicy": {"maxEvents": 1000, "maxSeconds": 3600}})[0] == 200
    open_desk(page, room_id)
    line = page.locator("#observations-new")
    assert line.inner_text() == "" and page.locator("#observations").get_attribute("aria-live") is None
    assert line.get_attribute("role") == "status"

    page.get_by_role("button", name="Start").click()
    wait_for(lambda: typed(room_id, 1).count() >= 3 or None, timeout=60)
    page.wait_for_function("(n) => document.querySelectorAll('#observations [data-observation-id]').length >= n",
                           arg=typed(room_id, 1).count())
    page.locator("#obs-type").select_option("question")
    page.locator("#obs-content").fill("Who owns the invoices table?")
    page.get_by_role("button", name="Publish").click()
    wait_for(lambda: Observation.objects.filter(room_id=room_id, content="Who owns the invoices table?").first())
    total = typed(room_id).count()
    page.wait_for_function("(n) => document.querySelector('#observations-new').textContent.startsWith(`${n} new observations`)",
                           arg=total)
    assert line.inner_text().endswith("the latest: question by otto, round 1.")
    assert page.errors == []


def anchor_top(page, obs_id):
    return page.eval_on_selector(f"#observations [data-observation-id='{obs_id}']", "n => n.getBoundingClientRect().top")


def test_new_observations_out_of_sight_are_counted_on_a_button_that_brings_them_into_view(make_page):
    page, manager = make_page("orla")
    room_id = running_workspace(page)
    assert api(page, "POST", f"discussions/{room_id}/pause")[0] == 200
    page.wait_for_timeout(500)  # an agent's call under way when it paused has landed
    ids = [api(page, "POST", f"discussions/{room_id}/observations", {"type": "observation", "content": f"Finding {n} of the audit."})[1]
           ["data"]["id"] for n in range(1, 31)]
    open_desk(page, room_id)
    page.wait_for_selector(f"#observations [data-observation-id='{ids[-1]}']")
    button = page.locator("#btn-new-observations")
    assert button.is_hidden()
    # The reader is in the middle of the long list.
    page.eval_on_selector(f"#observations [data-observation-id='{ids[10]}']", "n => n.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(200)
    top = anchor_top(page, ids[10])  # where the reader reads, on the screen (the line above the list may grow)

    # One arrives at the end of the list, out of sight: counted on the button, said on the line, the page stays.
    status, body = api(page, "POST", f"discussions/{room_id}/observations", {"type": "blocker", "content": "The backups overlap."})
    assert status == 201, body
    last = body["data"]["id"]
    button.wait_for()
    assert button.inner_text().startswith("1 new observation") and page.get_by_role("button", name="1 new observation").count() == 1
    line = page.locator("#observations-new")
    assert line.get_attribute("role") == "status" and line.get_attribute("aria-live") == "polite"
    assert "1 new observation is out of view: the “1 new observation” button brings it into view." in line.inner_text()
    assert abs(anchor_top(page, ids[10]) - top) < 1

    # A reply to the first, far above: the list grows above what the reader reads, which does not move.
    status, body = api(page, "POST", f"discussions/{room_id}/observations",
                       {"type": "clarification", "content": "Audited by the finance team.", "respondingToId": ids[0]})
    assert status == 201, body
    reply = body["data"]["id"]
    page.wait_for_function("() => document.querySelector('#btn-new-observations').textContent.startsWith('2 new observations')")
    assert abs(anchor_top(page, ids[10]) - top) < 1
    assert "2 new observations are out of view" in line.inner_text()

    # The button brings the first of them into view, and the focus to it; pressed again, the next.
    button.click()
    page.wait_for_function("(id) => document.activeElement.dataset.observationId === String(id)", arg=reply)
    assert page.eval_on_selector(f"#observations [data-observation-id='{reply}']", "n => n.getBoundingClientRect().top") >= -1
    assert button.inner_text().startswith("1 new observation")
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("(id) => document.activeElement.dataset.observationId === String(id)", arg=last)
    page.wait_for_function("() => document.querySelector('#btn-new-observations').hidden")
    assert "out of view" not in line.inner_text()

    # One that arrives where the reader is looking needs no button.
    status, body = api(page, "POST", f"discussions/{room_id}/observations", {"type": "solution", "content": "Move the backups."})
    assert status == 201, body
    page.wait_for_selector(f"#observations [data-observation-id='{body['data']['id']}']")
    page.wait_for_timeout(300)
    assert button.is_hidden() and "3 new observations since you opened the desk" in line.inner_text()
    assert page.errors == []


def test_a_round_whose_narrative_is_still_being_written_is_said_until_it_arrives(make_page):
    page, manager = make_page("nell")
    room_id = running_workspace(page, narrative=True)
    narrative = Narrative.objects.get(room_id=room_id, round=1)

    # The desk opens while the narrator is still writing round 1's narrative: the API has none for it yet.
    def rounds_without_it(route):
        body = route.fetch().json()
        for r in body["data"]:
            r["narrative"] = None
        route.fulfill(json=body)

    page.route(f"**/api/discussions/{room_id}/rounds", rounds_without_it)
    page.route(f"**/api/discussions/{room_id}/narratives", lambda route: route.fulfill(json={"success": True, "data": [], "meta": {}}))
    open_desk(page, room_id)
    pending = page.locator("#narrative-pending")
    pending.wait_for()
    assert pending.inner_text() == "Round 1 has ended: its narrative is being written and appears here once it is ready."
    assert page.locator("#narrative-empty").is_hidden()

    # It arrives (pushed as the narrator's is): the line goes and the narrative shows.
    page.unroute_all()
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        record_event(room, EventType.NARRATIVE, {"narrative": narrative_payload(narrative)})
    page.wait_for_function("() => !document.querySelector('#narrative-body').hidden")
    page.wait_for_function("() => document.querySelector('#narrative-pending').hidden")
    assert page.errors == []
