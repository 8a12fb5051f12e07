"""Observations arriving live are said in one line above the list (the list itself is drawn again whole, so it is not
a live region that would read every observation out again).

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import pytest

from rooms.models import Observation
from tests.browser.conftest import api
from tests.browser.test_workspace_desk import create_workspace, typed
from tests.browser.test_workspace_desk_feedback import open_desk
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
