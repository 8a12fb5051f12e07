"""Structured deliberation in the browser: a person comments and votes in a running discussion,
and everyone watching sees the tally, the consensus state and the phase change live."""
import pytest

from facilitation.actions.lifecycle import do_start_discussion
from facilitation.actions.phases import deliberation_settings
from rooms.actions.rooms import do_create_room
from rooms.models import Observation, Room, RoomMember
from tests.browser.conftest import shot
from tests.browser.test_newcomer import serious_violations
from tests.factories import make_facilitator, make_participant

pytestmark = [pytest.mark.browser, pytest.mark.worker]


def count(page, value):
    """The tally's count for READY, CHANGES or REJECT as the chart shows it."""
    return page.locator(f"#tally .row[data-value={value}]").get_attribute("data-count")


def wait_count(page, value, expected):
    page.wait_for_function("([value, expected]) => { const row = document.querySelector(`#tally .row[data-value=${value}]`);"
                           " return row && row.dataset.count === expected; }", arg=[value, expected], timeout=60000)


def comment(page, text):
    page.locator("#comment-text").fill(text)
    page.get_by_role("button", name="Post comment").click()
    page.wait_for_function("() => document.querySelector('#comment-text').value === ''")


def test_a_person_comments_and_votes_and_the_tally_changes_live(make_page):
    page, owner = make_page("dora")
    watcher, viewer = make_page("victor")
    chair = make_facilitator(key="deliberation-chair")
    agents = [make_participant(name, alias=f"{name.lower()}-votes") for name in ("Ada", "Bea", "Cyd")]
    room = do_create_room(owner, name="Cache decision", topic="Cache the catalogue?", format="deliberation",
                          moderator_id=chair.pk, max_rounds=20,
                          participants=[{"agent_id": a.pk, "role": "participant"} for a in agents],
                          deliberation=deliberation_settings("feature", {"threshold": 1.0, "humanRequired": True}))
    RoomMember.objects.create(room=room, user=viewer, access="viewer")
    page.goto(f"/discussions/{room.pk}/")
    watcher.goto(f"/discussions/{room.pk}/")
    for p in (page, watcher):
        p.wait_for_selector("#deliberation:not([hidden]) #phase-name[data-phase=explore]")
        assert "Phase 1 of 3: Explore the problem" in p.locator("#phase-name").inner_text()
    assert watcher.locator("#comment-form").count() == 0 and watcher.locator("#btn-advance").count() == 0
    do_start_discussion(room)

    # The owner moves to the phase that takes votes; both pages follow.
    page.wait_for_selector("#btn-advance:not([disabled])")
    page.get_by_role("button", name="Next phase").click()
    for p in (page, watcher):
        p.wait_for_selector("#phase-name[data-phase=shape]")
        p.locator("#timeline .status-line[data-kind=phase]", has_text="Phase: Shape a proposal").wait_for()
    assert "open vote" in watcher.locator("#phase-name").inner_text()

    # The owner asks for changes: the watcher's chart shows it at once; no consensus.
    page.wait_for_selector("#comment-form:not([hidden])")
    comment(page, "Add a TTL before we commit.\nVOTE: CHANGES")
    wait_count(watcher, "changes", "1")
    assert watcher.locator("#consensus").get_attribute("data-reached") == "false"
    said = Observation.objects.filter(room=room, author_kind="human").latest("seq")
    assert said.markers[0]["value"] == "CHANGES" and said.author_name == "dora"
    watcher.locator("#timeline .tcard.turn", has_text="Add a TTL before we commit.").wait_for()

    # The participants vote READY as they speak; the person's CHANGES still stands in the way.
    wait_count(watcher, "ready", "3")
    assert count(watcher, "changes") == "1"
    consensus = watcher.locator("#consensus")
    assert consensus.get_attribute("data-reached") == "false" and "3 of 4 voters are READY" in consensus.inner_text()
    assert Room.objects.get(pk=room.pk).phase == "shape"
    shot(watcher, "room-votes-tally.png")
    assert serious_violations(page) == []  # the votes card and the comment box, as the owner sees them

    # The person's READY is the vote that reaches consensus: the phase moves on, live.
    comment(page, "Fine, the TTL is in.\nVOTE: READY")
    for p in (page, watcher):
        p.locator("#timeline .status-line[data-kind=phase]", has_text="Phase: Commit or not").wait_for(timeout=30000)
    assert Room.objects.get(pk=room.pk).phase == "commit"

    # After a reload the transcript comes over REST: both phase lines are back, once each and in place,
    # even when the votes document (which brings them) arrives before the transcript does.
    held = []
    watcher.route("**/api/discussions/*/turns?**", lambda route: held.append(route))
    watcher.reload()
    watcher.locator("#timeline .status-line[data-kind=phase]", has_text="Phase: Commit or not").wait_for(timeout=30000)
    assert watcher.locator("#timeline .tcard.turn").count() == 0 and held
    for route in held:
        route.continue_()
    watcher.unroute("**/api/discussions/*/turns?**")
    watcher.locator("#timeline .tcard.turn", has_text="Fine, the TTL is in.").wait_for()
    kinds = watcher.eval_on_selector_all("#timeline > li", "nodes => nodes.map(n => [n.dataset.kind || '', Number(n.dataset.seq)])")
    phases = [seq for kind, seq in kinds if kind == "phase"]
    assert len(phases) == 2 and [seq for _, seq in kinds] == sorted(seq for _, seq in kinds)
    assert page.errors == [] and watcher.errors == []
