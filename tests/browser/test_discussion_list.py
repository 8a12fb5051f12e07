"""The discussion list: a topic shows under a name made from it, a read-only workspace offers no Rename,
and the page fits a phone."""
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from rooms.actions.rooms import do_create_room, do_share_room
from rooms.models import Agent, Room
from tests.browser.conftest import api, shot
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _room(owner, name, topic, **extra):
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    return do_create_room(owner, name=name, topic=topic, moderator_id=chair.pk,
                          participants=[{"agent_id": architect.pk, "role": "participant"}], **extra)


def _row(page, room):
    return page.locator(f"#discussion-rows tr[data-id='{room.pk}']")


def test_a_topic_shows_unless_it_says_no_more_than_the_name(make_page):
    page, owner = make_page("lena")
    # Named by the wizard from the topic's first words: the topic says more, so it shows.
    auto = _room(owner, "Should we cache the catalogue", "Should we cache the catalogue? Reads outnumber writes ten to one.")
    cut = _room(owner, "Should we move the nightly billing export to a…",
                "Should we move the nightly billing export to a queue that retries on its own")
    marked = _room(owner, "Which cache", "## Which **cache**\nRedis or Memcached, for the sessions.")
    # A topic that is the name again (its punctuation and case aside) says nothing more.
    same = _room(owner, "Which queue", "Which queue?")
    page.goto("/")
    _row(page, same).wait_for()
    for room in (auto, cut, marked):
        assert _row(page, room).locator(".topic-line").count() == 1, room.name
    assert "Reads outnumber writes" in _row(page, auto).locator(".topic-line").inner_text()
    assert "Redis or Memcached" in _row(page, marked).locator(".topic-line").inner_text()
    assert _row(page, same).locator(".topic-line").count() == 0
    assert not page.errors, page.errors


def test_a_read_only_workspace_offers_no_rename(make_page):
    page, owner = make_page("kim")
    open_room = _room(owner, "Open discussion", "Open?")
    concluded = _room(owner, "Concluded discussion", "Done?")
    done = _room(owner, "Done workspace", "Scope?", kind="workspace")
    shelved = _room(owner, "Shelved workspace", "Scope?", kind="workspace")
    Room.objects.filter(pk=concluded.pk).update(status="concluded")
    Room.objects.filter(pk=done.pk).update(status="completed")
    Room.objects.filter(pk=shelved.pk).update(status="archived")
    page.goto("/")
    _row(page, shelved).wait_for()
    for room in (open_room, concluded):  # a concluded discussion may still be renamed
        assert _row(page, room).locator("[data-rename]").count() == 1, room.name
    for room in (done, shelved):
        assert _row(page, room).locator("[data-rename]").count() == 0, room.name
        assert _row(page, room).locator("[data-delete]").count() == 1, room.name
    # The server refuses it all the same.
    status, body = api(page, "PATCH", f"discussions/{done.pk}", {"name": "Renamed"})
    assert status == 409, body
    assert not page.errors, page.errors


def test_the_list_fits_a_phone(make_page):
    page, owner = make_page("pia", viewport={"width": 390, "height": 844})
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    other = make_user("margarethe-longname")
    shared = _room(other, "Should we cache the catalogue reads for the storefront", "Should we cache the catalogue reads? " * 3)
    do_share_room(shared, username=owner.username, access="viewer")
    paused = _room(owner, "Workspace of the quarter", "Scope", kind="workspace")
    Room.objects.filter(pk=paused.pk).update(status="paused", pause_reason="budget")
    _room(owner, "Releases", "Which release train do we keep?")
    page.goto("/")
    status, body = api(page, "POST", "discussions", {
        "kind": "facilitation", "name": "Roles for the quarterly planning offsite", "topic": "Who does what",
        "pattern": "list", "slots": {"min": 2}, "deadline": (timezone.now() + timedelta(hours=2)).isoformat()})
    assert status == 201, body
    page.reload()
    page.locator("#discussion-rows tr").nth(2).wait_for()
    page.locator("#my-runs:not([hidden])").wait_for()
    shot(page, "list-phone.png")
    # Nothing sideways: not the page, and not the table inside its card (its buttons are on screen).
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    wrap = page.evaluate("(() => { const w = document.querySelector('.table-wrap'); return [w.scrollWidth, w.clientWidth]; })()")
    assert wrap[0] <= wrap[1], wrap
    for button in page.locator("#discussion-rows [data-rename], #discussion-rows [data-delete]").all():
        box = button.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    assert not page.errors, page.errors


def test_a_running_discussion_s_row_follows_its_status_and_round_without_a_reload(make_page):
    page, owner = make_page("rafa")
    running = _room(owner, "Running discussion", "Cache?")
    Room.objects.filter(pk=running.pk).update(status="active", round=1)
    page.clock.install()
    page.goto("/")
    row = _row(page, running)
    row.wait_for()
    assert row.get_attribute("data-status") == "active" and "1 of" in row.inner_text()
    Room.objects.filter(pk=running.pk).update(status="concluded", round=3)
    page.clock.run_for(21_000)  # the list asks again while a listed discussion runs
    page.wait_for_function("(id) => document.querySelector(`#discussion-rows tr[data-id='${id}']`).dataset.status === 'concluded'",
                           arg=running.pk)
    assert "3 of" in _row(page, running).inner_text()
    # Nothing runs any more: the list stops asking.
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/api/discussions?" in r.url else None)
    page.clock.run_for(41_000)
    assert asked == [] and not page.errors, page.errors
