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
