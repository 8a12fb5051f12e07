"""The New facilitation run form as a person starting a run meets it: the deadline says which time zone it is typed in
and how the group reads it, each problem is said next to its field (marked invalid, the first one focused), and a
refused form keeps everything that was typed."""
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from playwright.sync_api import expect

from rooms.models import FacilitationRun
from tests.browser.conftest import PASSWORD, sign_in_as
from tests.factories import make_facilitator, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def zoned_page(browser, browser_stack):
    """``zoned_page(zone)``: a signed-in page of Runa, who may start runs, in a browser whose clock is in `zone`."""
    contexts = []

    def open_page(zone):
        user = make_user("runa")
        user.set_password(PASSWORD)
        user.save()
        user.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
        context = browser.new_context(base_url=browser_stack.base_url, timezone_id=zone, locale="en-GB")
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20000)
        page.errors = []
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        sign_in_as(page, "runa")
        return page

    yield open_page
    for context in contexts:
        context.close()


def _local(moment: datetime) -> str:
    """A datetime-local value for `moment` in Berlin."""
    return moment.astimezone(BERLIN).strftime("%Y-%m-%dT%H:%M")


def test_the_deadline_says_its_time_zone_and_errors_are_said_by_their_fields(zoned_page):
    page = zoned_page("Europe/Berlin")
    make_facilitator("Convener", key="convener-fields")
    page.goto("/facilitation/new/")
    deadline = page.get_by_label("Deadline")
    when = (datetime.now(BERLIN) + timedelta(days=2)).replace(hour=17, minute=30, second=0, microsecond=0)
    deadline.fill(_local(when))
    said_utc = when.astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%d %H:%M UTC")
    help_line = page.locator("#run-deadline-help")
    longest = settings.CONVENE["FACILITATION_MAX_TTL_HOURS"]
    expect(help_line).to_have_text(f"In your time zone, Europe/Berlin. The group is told it in UTC: {said_utc}. "
                                   f"At most {longest} hours from now.")
    expect(deadline).to_have_accessible_description(help_line.inner_text())

    # What the form can tell itself: each problem by its field, the first one focused, nothing asked of the server.
    deadline.fill(_local(datetime.now(BERLIN) - timedelta(hours=1)))
    page.get_by_role("button", name="Create the run").click()
    expect(page.locator("#run-topic-error")).to_have_text("Say what the group should achieve.")
    expect(page.locator("#run-roles-error")).to_have_text("Name at least one role to fill.")
    expect(page.locator("#run-deadline-error")).to_have_text("That moment has passed: choose one in the future.")
    for box in ("#run-topic", "#run-roles", "#run-deadline"):
        expect(page.locator(box)).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Goal")).to_be_focused()
    expect(page.get_by_label("Goal")).to_have_accessible_description(
        "What the group should end up with, in a sentence the facilitator announces to it. Say what the group should achieve.")
    expect(page.locator("#run-error")).to_be_hidden()

    page.get_by_label("Goal").fill("Every launch role has one name")
    expect(page.locator("#run-topic-error")).to_be_hidden()  # typing clears the field's error
    expect(page.locator("#run-topic")).not_to_have_attribute("aria-invalid", "true")
    deadline.fill(_local(datetime.now(BERLIN) + timedelta(hours=longest + 24)))
    page.get_by_label("Roles", exact=True).fill("Lead, Scribe")
    page.get_by_role("button", name="Create the run").click()
    expect(page.locator("#run-deadline-error")).to_contain_text("No later than ")
    expect(page.locator("#run-deadline-error")).to_contain_text(f"a run lasts at most {longest} hours.")
    expect(deadline).to_be_focused()

    # What the server refuses: a report target it cannot reach, said by the name as typed, in the form's words.
    deadline.fill(_local(when))
    page.get_by_label("Name (optional)").fill("Launch roles")
    page.get_by_label("Send the result to").fill("runa, nobody-here")
    page.get_by_role("button", name="Create the run").click()
    report_error = page.locator("#run-report-error")
    expect(report_error).to_contain_text('"nobody-here": no active user by that name can receive the report')
    expect(page.get_by_label("Send the result to")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Send the result to")).to_be_focused()
    summary = page.locator("#run-error")
    expect(summary).to_have_text("The run was not created: what to change is said next to the field.")
    assert "reportTo" not in page.locator("main").inner_text()
    assert not FacilitationRun.objects.exists()
    # ... and everything typed is still there.
    expect(page.get_by_label("Goal")).to_have_value("Every launch role has one name")
    expect(page.get_by_label("Name (optional)")).to_have_value("Launch roles")
    expect(page.get_by_label("Roles", exact=True)).to_have_value("Lead, Scribe")
    expect(deadline).to_have_value(_local(when))
    expect(page.get_by_label("Send the result to")).to_have_value("runa, nobody-here")

    page.get_by_label("Send the result to").fill("runa")
    expect(report_error).to_be_hidden()
    page.get_by_role("button", name="Create the run").click()
    page.wait_for_url("**/discussions/*/")
    run = FacilitationRun.objects.get()
    assert run.deadline == when  # the moment typed in Berlin
    assert run.report_to == ["user:runa"] and run.room.name == "Launch roles"
    assert not page.errors, page.errors


def test_a_deadline_typed_in_utc_says_so_once(zoned_page):
    page = zoned_page("UTC")
    page.goto("/facilitation/new/")
    longest = settings.CONVENE["FACILITATION_MAX_TTL_HOURS"]
    expect(page.locator("#run-deadline-help")).to_have_text(
        f"In UTC (your browser's time zone), as the group is told it. At most {longest} hours from now.")
    assert not page.errors, page.errors
