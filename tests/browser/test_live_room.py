"""The browser, end to end: Debian's chromium (headless, via Playwright) against daphne,
Redis and a Celery worker on the test database.

Screenshots of the main pages are saved to test-artifacts/screenshots/.
"""
import re

import pytest

from rooms.models import Agent, Observation, Room, RoomEvent
from tests.browser.conftest import screenshots_dir, sign_in_as
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker]

TOPIC = "Should we add a Redis cache in front of Postgres for the product catalogue?"


def shot(page, name, full_page=True):
    page.screenshot(path=str(screenshots_dir() / name), full_page=full_page)


def dom_seqs(page, selector="#timeline [data-turn-id]"):
    return page.eval_on_selector_all(selector, "nodes => nodes.map(n => Number(n.dataset.seq))")


def rest_turns(page, room_id):
    response = page.request.get(f"/api/discussions/{room_id}/turns?limit=1000")
    assert response.ok, response.text()
    return response.json()["data"]


def badge(page):
    return page.locator("#status-badge")


def observations(room_id):
    return Observation.objects.filter(room_id=room_id).count()


def seat_row(page, name):
    return page.locator(".prow").filter(has=page.locator(".name", has_text=re.compile(f"^{name}$")))


def create_through_the_wizard(page):
    page.goto("/discussions/new/")
    # Step 1: topic and format.
    page.get_by_role("button", name="Next").click()
    assert page.locator("#topic-error").is_visible()  # the topic is required
    page.get_by_label("Topic").fill(TOPIC)
    page.get_by_label("Name (optional)").fill("Catalogue cache")
    page.locator("input[name=format][value=review]").check()
    page.locator("input[name=format][value=deliberation]").check()
    shot(page, "wizard-1-topic.png")
    page.get_by_role("button", name="Next").click()

    # Step 2: facilitator (built-in presets in their own group) and participants.
    page.wait_for_selector("#moderator optgroup[label='Built-in presets'] option", state="attached")
    groups = page.eval_on_selector_all("#moderator optgroup", "gs => gs.map(g => g.label)")
    assert groups[0] == "Built-in presets"
    page.get_by_role("button", name="Next").click()
    assert page.locator("#moderator-error").is_visible() and page.locator("#participants-error").is_visible()
    page.get_by_label("Facilitator", exact=True).select_option(label="The Socratic")
    seat_row(page, "Perfectionist").locator(".p-check").check()
    page.get_by_label("Role of Perfectionist").select_option("observer")
    page.get_by_role("button", name="Next").click()
    assert "At least one must speak" in page.locator("#participants-error").inner_text()
    seat_row(page, "Architect").locator(".p-check").check()
    seat_row(page, "Designer").locator(".p-check").check()
    page.get_by_label("Role of Designer").select_option("devil_advocate")
    # The facilitator cannot also be a participant: its row is disabled.
    page.locator("details.more-agents summary").click()
    socratic_row = page.locator(".prow.is-moderator")
    assert socratic_row.count() == 1 and socratic_row.locator(".p-check").is_disabled()
    shot(page, "wizard-2-people.png")
    page.get_by_role("button", name="Next").click()

    # Step 3: rounds and the estimate, then start.
    assert page.locator("#max-rounds").is_disabled()  # Auto: the server default applies
    page.locator("input[name=rounds-mode][value=fixed]").check()
    page.get_by_label("Maximum rounds (1–20)").fill("25")
    page.get_by_role("button", name="Start discussion").click()
    assert page.locator("#rounds-error").is_visible()
    page.get_by_label("Maximum rounds (1–20)").fill("12")
    assert page.locator("#estimate-cost").inner_text()
    assert re.search(r"\d", page.locator("#estimate-time").inner_text())
    shot(page, "wizard-3-rounds.png")
    page.get_by_role("button", name="Start discussion").click()
    page.wait_for_url(re.compile(r".*/discussions/\d+/$"))
    return int(re.search(r"/discussions/(\d+)/", page.url).group(1))


def test_create_watch_steer_reconnect_and_export(make_page):
    page, owner = make_page("olivia", sign_in=False)
    sign_in_as(page, "olivia", shot="login.png")
    shot(page, "discussion-list-empty.png")

    room_id = create_through_the_wizard(page)
    room = Room.objects.get(pk=room_id)
    assert room.owner == owner and room.max_rounds == 12 and room.format == "deliberation"
    assert sorted(room.seats.values_list("role", flat=True)) == ["devil_advocate", "facilitator", "observer", "participant"]

    # Turns and facilitator cards arrive live.
    page.wait_for_selector("#timeline .tcard.moderator .gavel")
    page.wait_for_selector("#timeline .tcard.turn")
    assert badge(page).inner_text() == "Active"
    assert page.locator("#connection").get_attribute("data-state") == "online"
    first = page.locator("#timeline .tcard.turn").first
    assert first.locator(".badge.role").inner_text() in ("Participant", "Devil's advocate")
    assert first.locator(".marker-decision").count() == 1 and first.locator(".marker-concern").count() == 1
    assert first.locator(".marker-vote .marker-key").inner_text() == "VOTE:"
    assert first.locator(".mention").inner_text() == "@architect"
    moderator = page.locator("#timeline .tcard.moderator").first
    assert moderator.locator("dd.question").inner_text() and moderator.locator("dd.reasoning").inner_text()
    assert re.fullmatch(r"Round \d+ of 12", page.locator("#round-indicator").inner_text())

    # Pause: the badge says so, and (after a step already in flight) nothing more is said.
    page.wait_for_function("() => document.querySelectorAll('#timeline .tcard.turn').length >= 2")
    page.get_by_role("button", name="Pause").click()
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'paused'")
    assert page.get_by_role("button", name="Resume").is_enabled() and page.get_by_role("button", name="Pause").is_disabled()
    page.wait_for_timeout(int(1000 * 1.5))
    settled = observations(room_id)
    page.wait_for_timeout(1500)
    assert observations(room_id) == settled, "the discussion went on while paused"
    shot(page, "room-paused.png")

    page.get_by_role("button", name="Resume").click()
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'active'")
    # Resume continues at once from the stored next step (not after a lease expires).
    wait_for(lambda: observations(room_id) > settled + 1, timeout=10)

    # A long answer is folded behind "Show more"; a fallback decision is marked.
    page.wait_for_selector("#timeline .tcard.turn .show-more")
    toggle = page.locator("#timeline .tcard.turn .show-more").first
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true" and toggle.inner_text() == "Show less"
    page.wait_for_selector("#timeline .tcard.moderator .badge.fallback")

    # Lose the connection mid-discussion; turns keep being committed meanwhile.
    context = page.context
    before = observations(room_id)
    context.set_offline(True)
    page.evaluate("window.convene.live.socket.io.engine.close()")
    page.wait_for_function("() => document.querySelector('#connection').dataset.state !== 'online'")
    wait_for(lambda: observations(room_id) >= before + 3, timeout=30)
    missed_while_offline = observations(room_id) - before
    shot(page, "room-offline.png")
    context.set_offline(False)
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'", timeout=20000)

    # Conclude: the facilitator synthesizes from what exists.
    page.get_by_role("button", name="Conclude").click()
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'concluded'", timeout=30000)
    page.wait_for_selector("#conclusion:not([hidden]) .markdown strong")
    assert "catalogue" in page.locator("#conclusion").inner_text()
    assert page.get_by_role("button", name="Pause").is_disabled() and page.get_by_role("button", name="Stop").is_disabled()

    # No turn is missing or doubled: the page's cards are exactly the transcript.
    turns = rest_turns(page, room_id)
    page.wait_for_function(f"() => document.querySelectorAll('#timeline [data-turn-id]').length >= {len(turns)}")
    seen = dom_seqs(page)
    assert seen == [t["seq"] for t in turns], f"DOM {seen} != REST {[t['seq'] for t in turns]}"
    # Every event applied once, in order (the transcript loaded over REST first, then live events).
    applied = page.evaluate("window.convene.live.applied")
    logged = set(RoomEvent.objects.filter(room_id=room_id).values_list("seq", flat=True))
    assert applied == sorted(set(applied)) and set(applied) <= logged and set(seen) <= set(applied)
    assert missed_while_offline >= 3
    kinds = page.eval_on_selector_all("#timeline [data-turn-id]", "ns => ns.map(n => n.dataset.kind)")
    assert kinds.count("synthesis") == 1 and "moderator" in kinds and "turn" in kinds
    airtime = page.eval_on_selector_all("#airtime li[data-turns]", "ns => ns.map(n => [n.dataset.speaker, Number(n.dataset.turns), Number(n.dataset.tokens)])")
    assert sorted(a[0] for a in airtime) == ["Architect", "Designer"]  # the observer never speaks
    contributions = [t for t in turns if t["kind"] == "contribution"]
    assert sum(a[1] for a in airtime) == len(contributions)
    assert sum(a[2] for a in airtime) == sum(t["tokens"] for t in contributions) > 0
    assert page.locator("#rehearsal-label").is_hidden()  # the scripted model is not the rehearsal
    shot(page, "room-concluded.png")

    # Both exports download.
    with page.expect_download() as md:
        page.get_by_role("link", name="Export discussion file").click()
    text = open(md.value.path(), encoding="utf-8").read()
    assert md.value.suggested_filename.endswith(".md") and TOPIC in text
    with page.expect_download() as docx:
        page.get_by_role("link", name="Export .docx").click()
    assert docx.value.suggested_filename.endswith(".docx") and open(docx.value.path(), "rb").read(2) == b"PK"

    # The list shows the discussion with its status and round.
    page.goto("/")
    row = page.locator(f"#discussion-rows tr[data-id='{room_id}']")
    row.wait_for()
    assert "Concluded" in row.inner_text() and "of 12" in row.inner_text()
    shot(page, "discussion-list.png")

    # Narrow screen.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/discussions/{room_id}/")
    page.wait_for_selector("#timeline .tcard.synthesis")
    shot(page, "room-narrow.png", full_page=False)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), "the page scrolls sideways"
    assert not page.errors, page.errors


def test_someone_without_access_is_refused_everywhere(make_page):
    from facilitation.actions.lifecycle import do_start_discussion
    from tests.factories import make_discussion

    page, owner = make_page("owen")
    room = make_discussion(owner, max_rounds=2)
    # This discussion's assistants run on the offline rehearsal model.
    Agent.objects.filter(seats__room=room).update(provider="rehearsal")
    do_start_discussion(room)
    wait_for(lambda: Room.objects.get(pk=room.pk).is_terminal)

    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_selector("#timeline .tcard.synthesis")
    assert page.locator("#rehearsal-label").is_visible()
    assert page.locator("#timeline .tcard .badge.rehearsal").count() >= 3
    shot(page, "room-rehearsal.png")

    stranger, _ = make_page("mallory")
    response = stranger.goto(f"/discussions/{room.pk}/")
    assert response.status == 404
    assert stranger.locator("[data-testid=not-found]").is_visible()
    assert room.topic not in stranger.content()
    shot(stranger, "room-refused.png")
    api = stranger.request.get(f"/api/discussions/{room.pk}")
    assert api.status in (403, 404) and api.json()["success"] is False
    turns = stranger.request.get(f"/api/discussions/{room.pk}/turns")
    assert turns.status in (403, 404)
    export = stranger.request.get(f"/api/discussions/{room.pk}/export?format=md")
    assert export.status in (403, 404)
    # The socket: the session cookie authenticates the connection, but the join is refused.
    stranger.add_script_tag(url="/static/vendor/socket.io.min.js")
    answer = stranger.evaluate("""(id) => new Promise((resolve) => {
        const events = [];
        const socket = io({ path: "/socket.io/", transports: ["websocket"] });
        for (const t of ["discussion:turn", "discussion:moderator", "discussion:concluded", "discussion:status"]) socket.on(t, (e) => events.push(e));
        socket.on("connect", () => socket.emit("discussion:join", { discussionId: id, lastSeq: 0 }, (ack) => {
            socket.emit("discussion:stop", { discussionId: id }, (stop) => {
                setTimeout(() => { socket.disconnect(); resolve({ ack, stop, events }); }, 300);
            });
        }));
        socket.on("connect_error", (err) => resolve({ error: err.message }));
    })""", room.pk)
    assert answer["ack"]["ok"] is False and "missed" not in answer["ack"]
    assert answer["stop"]["ok"] is False and answer["events"] == []
    assert Room.objects.get(pk=room.pk).status == "concluded"
    # Signed out, the socket refuses the connection itself.
    stranger.context.clear_cookies()
    refused = stranger.evaluate("""() => new Promise((resolve) => {
        const socket = io({ path: "/socket.io/", transports: ["websocket"], reconnection: false });
        socket.on("connect", () => resolve("connected"));
        socket.on("connect_error", (err) => resolve(err.message));
    })""")
    assert refused == "unauthenticated"


def test_facilitators_panel_templates_and_deletion(make_page):
    page, user = make_page("fiona")
    page.goto("/facilitators/")
    page.wait_for_selector("#builtin-list [data-builtin=true]")
    builtins = page.locator("#builtin-list [data-builtin=true]")
    assert builtins.count() == 8
    assert builtins.locator(".badge.builtin").count() == 8
    assert builtins.locator("[data-delete]").count() == 0  # built-ins cannot be deleted
    shot(page, "facilitators.png")

    # One click on a preset fills the form; the name is edited before saving.
    page.get_by_role("button", name="Use as template: The Contrarian").click()
    assert page.get_by_label("Persona (moderator prompt)").input_value().startswith("You are My Contrarian")
    assert page.get_by_label("Model").input_value()
    page.get_by_label("Name").fill("Our Contrarian")
    shot(page, "facilitator-create.png")
    page.get_by_role("button", name="Save facilitator").click()
    card = page.locator("#custom-list [data-builtin=false]", has_text="Our Contrarian")
    card.wait_for()
    mine = Agent.objects.get(name="Our Contrarian")
    assert mine.is_facilitator and not mine.is_builtin and mine.created_by == user
    assert mine.persona.prompt.startswith("You are Our Contrarian") and not mine.persona.is_builtin

    # From scratch.
    page.get_by_role("button", name="Create facilitator").click()
    page.get_by_label("Start from").select_option("")
    page.get_by_label("Name").fill("Scratch Chair")
    page.get_by_label("Persona (moderator prompt)").fill("You keep every turn short and pick whoever spoke least.")
    page.get_by_role("button", name="Save facilitator").click()
    page.locator("#custom-list li", has_text="Scratch Chair").wait_for()

    # Delete your own.
    page.once("dialog", lambda dialog: dialog.accept())
    card.get_by_role("button", name="Delete Our Contrarian").click()
    card.wait_for(state="detached")
    assert not Agent.objects.filter(name="Our Contrarian").exists()

    # The inline "New facilitator" in the wizard, chosen at once.
    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill("Which onboarding flow should we ship?")
    page.get_by_role("button", name="Next").click()
    page.get_by_role("button", name="New facilitator").click()
    page.locator("#nf-name").fill("Quick Chair")
    page.locator("#nf-description").fill("Keeps it short.")
    page.get_by_role("button", name="Create facilitator").click()
    page.wait_for_function("() => document.querySelector('#moderator').selectedOptions[0]?.textContent === 'Quick Chair'")
    groups = page.eval_on_selector_all("#moderator optgroup", "gs => gs.map(g => g.label)")
    assert groups == ["Built-in presets", "Your facilitators"]
    quick = Agent.objects.get(name="Quick Chair")
    assert quick.is_facilitator and quick.persona is not None and quick.persona.key == "generic-facilitator"
    assert not page.errors, page.errors
