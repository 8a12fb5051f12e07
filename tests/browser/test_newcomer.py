"""What a newcomer expects of the pages: clear rounds, a confirmed Stop with something to do
afterwards, an honest connection state, sharing on the page, a searchable list, editable
facilitators, accessible pages (axe-core) and screenshots of each page at two widths."""
import re
from pathlib import Path

import pytest
from django.conf import settings

from facilitation.actions.lifecycle import do_start_discussion
from rooms.actions.rooms import do_create_room
from rooms.models import Agent, Invocation, Observation, Room, RoomMember
from tests.browser.conftest import shot
from tests.factories import make_facilitator, make_participant
from tests.workspace.helpers import make_workspace
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker]

WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


def new_room(owner, name="Catalogue cache", topic="Should we cache the product catalogue?", rounds=10, people=("Ada", "Bob"),
             start=False):
    key = f"{owner.username}-{Room.objects.count()}"
    chair = make_facilitator(f"Chair {key}", key=f"chair-{key}")
    agents = [make_participant(f"{p}", alias=f"{p.lower()}-{key}") for p in people]
    room = do_create_room(owner, name=name, topic=topic, format="deliberation", moderator_id=chair.pk, max_rounds=rounds,
                          participants=[{"agent_id": a.pk, "role": "participant"} for a in agents])
    if start:
        do_start_discussion(room)
    return room


def status_of(page):
    return page.locator("#status-badge").get_attribute("data-status")


def test_rounds_are_explained_and_stop_asks_first_then_offers_conclude_and_copy(make_page):
    page, owner = make_page("stella")
    room = new_room(owner, rounds=12, start=True)
    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_selector("#timeline .tcard.turn")
    assert re.fullmatch(r"Round \d+ of 12", page.locator("#round-indicator").inner_text())
    assert page.locator("#round-hint").inner_text() == "· each round is one turn"

    # The totals under the airtime bars keep up with the bars.
    page.wait_for_function("() => document.querySelectorAll('#airtime li[data-turns]').length >= 1")
    bars = page.eval_on_selector_all("#airtime li[data-tokens]", "ns => ns.reduce((s, n) => s + Number(n.dataset.tokens), 0)")
    assert int(page.locator("#usage").get_attribute("data-tokens")) >= bars > 0
    assert int(page.locator("#usage").get_attribute("data-calls")) >= 1

    # Stop asks first; keeping it running changes nothing.
    page.get_by_role("button", name="Stop", exact=True).click()
    dialog = page.locator("#stop-dialog")
    assert dialog.is_visible() and "cannot be resumed" in dialog.inner_text()
    shot(page, "room-stop-confirm.png", full_page=False)
    page.get_by_role("button", name="Keep it running").click()
    assert not dialog.is_visible()
    page.wait_for_timeout(300)
    assert Room.objects.get(pk=room.pk).status == "active"
    page.get_by_role("button", name="Stop", exact=True).click()
    page.get_by_role("button", name="Stop discussion").click()
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'stopped'")
    assert Room.objects.get(pk=room.pk).status == "stopped"

    # A stopped discussion offers Conclude (from what exists) and Copy as new draft.
    panel = page.locator("#stopped-actions")
    assert panel.is_visible()
    shot(page, "room-stopped.png")
    page.get_by_role("button", name="Copy as new draft").click()
    page.wait_for_url(lambda url: re.search(r"/discussions/\d+/$", url) and f"/discussions/{room.pk}/" not in url)
    copy_id = int(re.search(r"/discussions/(\d+)/", page.url).group(1))
    assert copy_id != room.pk
    copy = Room.objects.get(pk=copy_id)
    assert copy.status == "draft" and copy.topic == room.topic and copy.owner == owner and copy.name.endswith("(copy)")
    assert Invocation.objects.filter(room=copy, component="room.copy").exists()
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'draft'")

    page.goto(f"/discussions/{room.pk}/")
    page.get_by_role("button", name="Conclude from what exists").click()
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'concluded'", timeout=30000)
    page.wait_for_selector("#conclusion:not([hidden]) .markdown")
    assert page.locator("#stopped-actions").is_hidden()
    assert not page.errors, page.errors


def test_without_live_updates_the_transcript_loads_and_updates_by_polling(make_page):
    page, owner = make_page("pauline")
    room = new_room(owner, rounds=12, start=True)
    wait_for(lambda: Observation.objects.filter(room=room, kind="contribution").count() >= 1, timeout=30)
    # Live updates cannot connect: every Socket.IO request and WebSocket is refused.
    page.route("**/socket.io/**", lambda route: route.abort())
    page.route_web_socket(re.compile(r".*/socket\.io/.*"), lambda ws: ws.close())
    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_selector("#timeline .tcard.turn")  # the transcript, over REST
    connection = page.locator("#connection")
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'polling'", timeout=15000)
    assert re.search(r"Live updates unavailable, retrying · last update \d", connection.inner_text())
    shot(page, "room-polling.png", full_page=False)
    first = page.eval_on_selector_all("#timeline [data-turn-id]", "ns => ns.map(n => Number(n.dataset.seq))")
    # New turns arrive by polling ?afterSeq=.
    page.wait_for_function(f"() => document.querySelectorAll('#timeline [data-turn-id]').length > {len(first)}", timeout=30000)
    page.get_by_role("button", name="Stop", exact=True).click()
    page.get_by_role("button", name="Stop discussion").click()  # controls fall back to REST
    page.wait_for_function("() => document.querySelector('#status-badge').dataset.status === 'stopped'")
    turns = page.request.get(f"/api/discussions/{room.pk}/turns?limit=1000").json()["data"]
    page.wait_for_function(f"() => document.querySelectorAll('#timeline [data-turn-id]').length >= {len(turns)}", timeout=15000)
    seqs = page.eval_on_selector_all("#timeline [data-turn-id]", "ns => ns.map(n => Number(n.dataset.seq))")
    assert seqs == [t["seq"] for t in turns]
    assert not [e for e in page.errors if "socket.io" not in e.lower() and "websocket" not in e.lower()], page.errors


def test_sharing_from_the_page_and_the_shared_list(make_page):
    owner_page, owner = make_page("sam")
    viewer_page, viewer = make_page("vera")
    room = new_room(owner, name="Roadmap review", topic="What goes into the next quarter?", rounds=3)
    owner_page.goto(f"/discussions/{room.pk}/")
    sharing = owner_page.locator("#sharing")
    sharing.wait_for()
    sharing.get_by_label("Username").fill("nobody-here")
    sharing.get_by_role("button", name="Share").click()
    owner_page.locator("#share-error:not([hidden])").wait_for()
    assert not RoomMember.objects.filter(room=room).exists()

    sharing.get_by_label("Username").fill("vera")
    sharing.get_by_label("Access", exact=True).select_option("viewer")
    sharing.get_by_role("button", name="Share").click()
    owner_page.locator("#members li[data-username=vera]").wait_for()
    assert RoomMember.objects.get(room=room, user=viewer).access == "viewer"
    shot(owner_page, "room-sharing.png")

    # The viewer's list marks the discussion as shared, with its owner; the room has no controls.
    viewer_page.goto("/")
    row = viewer_page.locator(f"#discussion-rows tr[data-id='{room.pk}']")
    row.wait_for()
    assert "Shared with you · sam" in row.inner_text()
    assert row.locator("[data-delete]").count() == 0
    shot(viewer_page, "discussion-list-shared.png")
    viewer_page.goto(f"/discussions/{room.pk}/")
    viewer_page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    assert viewer_page.locator("#sharing").count() == 0 and viewer_page.locator("#btn-stop").count() == 0

    # Change the access, then remove it: the viewer's live connection is cut.
    owner_page.get_by_label("Access of vera").select_option("participant")
    wait_for(lambda: RoomMember.objects.get(room=room, user=viewer).access == "participant", timeout=10)
    owner_page.once("dialog", lambda d: d.accept())
    owner_page.get_by_role("button", name="Remove vera").click()
    owner_page.locator("#members li[data-username=vera]").wait_for(state="detached")
    assert not RoomMember.objects.filter(room=room, user=viewer).exists()
    viewer_page.wait_for_function("() => document.querySelector('#room-error').textContent.includes('no longer have access')")
    assert not owner_page.errors, owner_page.errors


def test_list_search_filter_rename_and_delete(make_page):
    page, owner = make_page("lena")
    new_room(owner, name="Pricing page", topic="Which plans do we show on the pricing page?", rounds=3)
    running = new_room(owner, name="Cache review", topic="Redis in front of Postgres?", rounds=20, start=True)
    new_room(owner, name="Hiring loop", topic="How many interviews per candidate?", rounds=3)
    page.goto("/")
    page.wait_for_selector("#discussion-rows tr")
    assert page.locator("#discussion-rows tr").count() == 3
    shot(page, "discussion-list-filters.png")

    page.get_by_label("Search").fill("postgres")
    page.wait_for_function("() => document.querySelectorAll('#discussion-rows tr').length === 1")
    assert "Cache review" in page.locator("#discussion-rows").inner_text()
    page.get_by_label("Search").fill("")
    page.get_by_label("Status").select_option("draft")
    page.wait_for_function("() => document.querySelectorAll('#discussion-rows tr').length === 2")
    # The search and filters are in the address: a reload (or Back, or a shared link) shows the same list.
    page.get_by_label("Search").fill("pricing")
    page.wait_for_function("() => document.querySelectorAll('#discussion-rows tr').length === 1")
    assert page.url.endswith("/?q=pricing&status=draft")
    page.reload()
    page.wait_for_function("() => document.querySelectorAll('#discussion-rows tr').length === 1")
    assert page.get_by_label("Search").input_value() == "pricing" and page.get_by_label("Status").input_value() == "draft"
    page.goto("/?status=no-such-status&page=7")  # nothing it cannot show: the filter falls back, the page too
    page.wait_for_function("() => document.querySelectorAll('#discussion-rows tr').length === 3")
    assert page.get_by_label("Status").input_value() == ""
    page.get_by_label("Status").select_option("draft")
    page.get_by_label("Kind").select_option("workspace")
    page.wait_for_function("() => document.querySelector('#list-status').textContent === 'No discussion matches.'")
    page.get_by_label("Kind").select_option("")
    page.get_by_label("Status").select_option("")
    page.wait_for_function("() => document.querySelectorAll('#discussion-rows tr').length === 3")

    page.once("dialog", lambda d: d.accept("Pricing plans"))
    page.get_by_role("button", name="Rename Pricing page").click()
    page.locator("#discussion-rows a", has_text="Pricing plans").wait_for()
    assert Room.objects.filter(name="Pricing plans").exists()

    # Deleting a running discussion stops it first, after a confirmation that says so.
    messages = []
    page.once("dialog", lambda d: (messages.append(d.message), d.accept()))
    page.get_by_role("button", name="Delete Cache review").click()
    page.locator(f"#discussion-rows tr[data-id='{running.pk}']").wait_for(state="detached")
    assert "is running" in messages[0]
    assert not Room.objects.filter(pk=running.pk).exists()
    assert not page.errors, page.errors


def test_wizard_explains_rounds_estimates_from_measured_latency_and_back_works(make_page):
    page, owner = make_page("wendy")
    # Recent model calls of the scripted provider: the estimate uses their median.
    for ms in (1200, 1500, 1800):
        Invocation.objects.create(component="participant.turn", provider="scripted", latency_ms=ms, success=True)
    topic = "Should we move the nightly batch jobs to an event-driven pipeline before the holiday season starts?"
    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill(topic)
    page.get_by_role("button", name="Next").click()
    page.locator("fieldset.step[data-step='2']").wait_for()
    page.go_back()  # the browser's Back returns to step 1, still in the wizard
    page.locator("fieldset.step[data-step='1']").wait_for()
    assert page.url.endswith("/discussions/new/") and page.get_by_label("Topic").input_value() == topic
    page.go_forward()
    page.locator("fieldset.step[data-step='2']").wait_for()
    page.wait_for_selector("#moderator optgroup option", state="attached")
    page.get_by_label("Facilitator", exact=True).select_option(label="The Closer")
    page.locator(".prow").filter(has=page.locator(".name", has_text=re.compile("^Architect$"))).locator(".p-check").check()
    page.get_by_role("button", name="Next").click()
    assert "A round is one speaker's turn" in page.locator("#rounds-help").inner_text()
    assert "Auto" in page.locator("label.choice", has=page.locator("input[value=auto]")).inner_text()
    basis = page.locator("#estimate-basis").inner_text()
    assert "scripted participant: measured, about 1.5 s per call (median of 3 recent calls)" in basis
    assert "scripted facilitator: not measured yet" in basis
    shot(page, "wizard-3-estimate.png")
    page.get_by_role("button", name="Save as draft").click()
    page.wait_for_url(re.compile(r".*/discussions/\d+/$"))
    room = Room.objects.get(pk=int(re.search(r"/discussions/(\d+)/", page.url).group(1)))
    assert room.name == "Should we move the nightly batch jobs to an…" and room.topic == topic
    page.goto("/")
    cell = page.locator(f"#discussion-rows tr[data-id='{room.pk}'] td").first
    cell.wait_for()
    # The name was cut from the topic, which says more: it shows under the name.
    assert cell.locator(".topic-line").inner_text() == topic
    assert not page.errors, page.errors


def test_edit_your_own_facilitator_and_a_copied_prompt_takes_its_new_name(make_page):
    page, user = make_page("edna")
    page.goto("/facilitators/")
    page.wait_for_selector("#builtin-list [data-builtin=true]")
    assert page.locator("#builtin-list [data-edit]").count() == 0  # built-ins are read-only
    page.get_by_role("button", name="Use as template: The Closer").click()
    page.get_by_label("Name").fill("Deal Maker")
    page.get_by_role("button", name="Save facilitator").click()
    card = page.locator("#custom-list [data-builtin=false]", has_text="Deal Maker")
    card.wait_for()
    mine = Agent.objects.get(name="Deal Maker")
    assert "The Closer" not in mine.persona.prompt and mine.persona.prompt.startswith("You are Deal Maker")
    gist = card.locator(".persona-gist").inner_text()
    assert gist.startswith("You are Deal Maker") and gist != mine.name

    card.get_by_role("button", name="Edit Deal Maker").click()
    assert page.get_by_label("Name").input_value() == "Deal Maker"
    page.get_by_label("Description").fill("Gets the room to a decision with an owner.")
    page.get_by_label("Persona (moderator prompt)").fill("You are Deal Maker. Close every discussion with one decision and its owner.")
    shot(page, "facilitator-edit.png")
    page.get_by_role("button", name="Save changes").click()
    page.locator("#custom-list .persona-gist", has_text="Close every discussion").wait_for()
    mine.refresh_from_db()
    mine.persona.refresh_from_db()
    assert mine.description == "Gets the room to a decision with an owner."
    assert mine.persona.prompt == "You are Deal Maker. Close every discussion with one decision and its owner."
    builtin = Agent.objects.get(name="The Closer")
    status = page.evaluate("""async (id) => (await fetch(`/api/agents/${id}`, {method: "PATCH", credentials: "same-origin",
        headers: {"Content-Type": "application/json", "X-CSRFToken": document.querySelector('meta[name="csrf-token"]').content},
        body: JSON.stringify({name: "Mine now"})})).status""", builtin.pk)
    assert status == 403 and Agent.objects.get(pk=builtin.pk).name == "The Closer"
    assert not page.errors, page.errors


AXE = Path(settings.BASE_DIR) / "frontend" / "node_modules" / "axe-core" / "axe.min.js"


def serious_violations(page) -> list[str]:
    page.evaluate(AXE.read_text())
    found = page.evaluate("""async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
        .filter(v => v.impact === "serious" || v.impact === "critical")
        .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")}`)""")
    return found


def test_main_pages_are_accessible_and_shot_at_two_widths(make_page, browser_stack):
    assert AXE.exists(), "axe-core is missing: run `npm --prefix frontend ci`"
    _, owner = make_page("ally", sign_in=False)
    from django.contrib.auth.models import Permission

    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))  # the run form is checked too
    long_name = "Extraordinarily Thorough Infrastructure Reviewer"
    room = new_room(owner, name="Accessibility check", topic="Is every page usable with a keyboard and a screen reader?",
                    rounds=2, people=(long_name, "Bob"), start=True)
    wait_for(lambda: Room.objects.get(pk=room.pk).is_terminal, timeout=60)
    workspace = make_workspace(owner, name="Accessibility desk")
    pages = {
        "discussion-list": "/",
        "wizard": "/discussions/new/",
        "room": f"/discussions/{room.pk}/",
        "facilitators": "/facilitators/",
        "agents": "/agents/",
        "tokens": "/account/tokens/",
        "chat-accounts": "/account/chats/",
        "facilitation-run-form": "/facilitation/new/",
        "workspace-desk": f"/workspaces/{workspace.pk}/",
    }
    problems = {}
    for width, viewport in WIDTHS.items():
        page, _ = make_page("ally", viewport=viewport, sign_in=False)
        page.goto("/login/")
        # The demo's sign-in page says where its password is.
        assert "printed in the terminal" in page.locator("#demo-tell").inner_text()
        shot(page, f"{width}-login.png")
        problems[f"{width} login"] = serious_violations(page)
        page.get_by_label("Username").fill("ally")
        page.get_by_label("Password").fill("browser-pass-123")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/")
        for name, url in pages.items():
            page.goto(url)
            page.wait_for_load_state("networkidle")
            if name == "room":
                page.wait_for_selector("#timeline .tcard.synthesis")
            shot(page, f"{width}-{name}.png")
            problems[f"{width} {name}"] = serious_violations(page)
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), f"{name} scrolls sideways at {width}"
        # Wizard steps 2 and 3 too.
        page.goto("/discussions/new/")
        page.get_by_label("Topic").fill("Which release train do we keep?")
        page.get_by_role("button", name="Next").click()
        page.wait_for_selector("#moderator optgroup option", state="attached")
        shot(page, f"{width}-wizard-2.png")
        problems[f"{width} wizard step 2"] = serious_violations(page)
        page.get_by_label("Facilitator", exact=True).select_option(label="The Closer")
        page.locator(".prow .p-check").first.check()
        page.get_by_role("button", name="Next").click()
        shot(page, f"{width}-wizard-3.png")
        problems[f"{width} wizard step 3"] = serious_violations(page)
        if width == "phone":
            # Long names wrap between words in the sidebar, never inside one.
            page.goto(f"/discussions/{room.pk}/")
            page.wait_for_selector("#people .person")
            breaks = page.evaluate("""(name) => {
                const node = [...document.querySelectorAll('#people .name, #airtime .who')].find(n => n.textContent.includes(name));
                const text = node.firstChild && node.firstChild.nodeType === 3 ? node.firstChild : [...node.childNodes].find(c => c.nodeType === 3);
                const tops = [];
                for (let i = 0; i < text.length; i += 1) {
                    const r = document.createRange(); r.setStart(text, i); r.setEnd(text, i + 1);
                    tops.push(Math.round(r.getBoundingClientRect().top));
                }
                const bad = [];
                for (let i = 1; i < tops.length; i += 1) {
                    if (tops[i] !== tops[i - 1] && text.data[i - 1] !== " " && text.data[i] !== " ") bad.push(text.data.slice(0, i));
                }
                return bad;
            }""", long_name)
            assert breaks == [], f"a name breaks inside a word: {breaks}"
        assert not page.errors, page.errors
    # Inactive wizard step numbers have enough contrast (part of axe's color-contrast rule, checked above).
    assert {k: v for k, v in problems.items() if v} == {}
