"""The manager's desk of a workspace, in the browser, against the live stack (daphne, Redis, a Celery
worker on the test database). The agents and the narrator run on the offline rehearsal model.

A manager starts the room and watches round 1's observations arrive live, ends the round and sees
its narrative arrive, edits it (and meets the "changed meanwhile" message), assigns a task to an
agent and watches the agent claim it live, swaps an agent's persona, searches, completes the scope
and finds the room read-only. A viewer's desk shows the same room without controls.
"""
import io
from datetime import timedelta

import pytest
from docx import Document
from django.db import transaction
from django.utils import timezone

from facilitation.workspace.actions.status import BUDGET, pause_if_idle, pause_itself
from facilitation.workspace.rules import locked
from rooms.models import Invocation, Narrative, Observation, Persona, PersonaAdaptation, Role, Room, RoomMember, Seat, TaskAssignment, Turn
from tests.browser.conftest import api, shot
from tests.factories import make_facilitator, make_participant
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

TOPIC = "Move the billing service from cron jobs to an event queue without losing invoices"


def create_workspace(page):
    narrator = make_facilitator("Narrator", key="desk-narrator", provider="rehearsal")
    agents = [make_participant(name, alias=f"desk-{name.lower()}", provider="rehearsal")
              for name in ("Planner", "Builder", "Tester")]
    status, body = api(page, "POST", "discussions", {
        "kind": "workspace", "name": "Billing migration", "topic": TOPIC, "format": "brainstorm", "moderatorId": narrator.pk,
        "participants": [{"agentId": a.pk, "role": "participant"} for a in agents]})
    assert status == 201, body
    return body["data"]["id"]


def typed(room_id, number=None):
    qs = Observation.objects.filter(room_id=room_id).exclude(event_type="")
    return qs.filter(round=number) if number is not None else qs


def dom_observations(page):
    return page.eval_on_selector_all("#observations [data-observation-id]", "ns => ns.map(n => Number(n.dataset.observationId))")


def task_column(page, task_id):
    return page.eval_on_selector(f"#board [data-task-id='{task_id}']", "n => n.closest('.column').dataset.status")


def test_the_manager_runs_a_workspace_from_the_desk(make_page):
    page, manager = make_page("mira")
    room_id = create_workspace(page)
    seats = list(Seat.objects.filter(room_id=room_id, role="participant").select_related("agent").order_by("position"))

    page.goto(f"/discussions/{room_id}")
    page.wait_for_url(f"**/workspaces/{room_id}/")
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    assert page.locator("#room-name").text_content() == "Billing migration"
    # Only the agents are people the manager assigns work to; the narrator is not among them.
    assert page.locator("#task-assignee option").all_inner_texts() == ["nobody", "Planner", "Builder", "Tester"]
    assert page.locator("#seats li").count() == 3
    # Before anything happened, each part of the desk says what will fill it.
    page.wait_for_selector("#observations-empty:not([hidden])")
    assert page.locator("#observations-empty").text_content().startswith("No observations yet")
    assert page.locator("#narrative-empty").is_visible() and page.locator("#narrative-body").is_hidden()
    assert page.locator("#tasks-empty").is_visible()
    assert page.get_by_role("button", name="Publish").is_disabled() and page.locator("#observation-hint").is_visible()
    page.evaluate("window.__sameDocument = true")  # everything below arrives without a reload

    # The round pacing reads in words; the manager changes it in a small form.
    assert "after 10 observations or 5 minutes, whichever comes first" in " ".join(page.locator("#round-pacing").inner_text().split())
    page.get_by_role("button", name="Change").click()
    assert page.get_by_label("Observations per round").input_value() == "10"
    assert page.get_by_label("Minutes per round").input_value() == "5"
    page.get_by_label("Observations per round").fill("30")
    page.get_by_label("Minutes per round").fill("20")
    assert page.locator("#budget-text").text_content() == "Spent 0 tokens ($0.00); no budget caps it."
    assert page.get_by_label("Token budget").input_value() == ""
    page.get_by_label("Token budget").fill("2000000")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_function("() => document.querySelector('#pacing-text').textContent === '30 observations or 20 minutes'")
    assert page.locator("#pacing-form").is_hidden()
    assert page.locator("#budget-text").text_content() == "Spent 0 tokens ($0.00) of a budget of 2,000,000 tokens."
    saved = Room.objects.get(pk=room_id)
    assert (saved.turn_policy, saved.budget_tokens, saved.budget_usd) == ({"maxEvents": 30, "maxSeconds": 1200}, 2_000_000, None)

    # Start: the agents' observations arrive live, threaded, filterable.
    page.get_by_role("button", name="Start").click()
    wait_for(lambda: typed(room_id, 1).count() >= 6 or None, timeout=60)
    page.wait_for_function("() => document.querySelectorAll('#observations [data-observation-id]').length >= 6")
    assert sorted(dom_observations(page)) == sorted(typed(room_id, 1).values_list("pk", flat=True))
    assert page.locator("#observations-empty").is_hidden()
    assert page.get_by_role("button", name="Publish").is_enabled() and page.locator("#observation-hint").is_hidden()
    assert page.locator("#round-indicator").text_content() == "Round 1"
    assert page.locator("#seats li .spent").first.text_content().endswith(" tokens")
    assert page.locator("#status-badge").text_content().strip().lower() == "active"
    replies = typed(room_id, 1).filter(responding_to__isnull=False)
    for reply in replies:  # a reply sits under the observation it answers
        assert page.locator(f"[data-observation-id='{reply.responding_to_id}'] .replies "
                            f"[data-observation-id='{reply.pk}']").count() == 1
    page.locator("#filter-type").select_option("question")
    shown = page.eval_on_selector_all("#observations [data-observation-id]", "ns => ns.map(n => n.dataset.type)")
    assert shown and set(shown) == {"question"}
    absent = next(t for t in ("clarification", "disagreement", "agreement", "decision", "analysis", "observation")
                  if not typed(room_id).filter(event_type=t).exists())
    page.locator("#filter-type").select_option(absent)
    assert dom_observations(page) == []
    assert page.locator("#observations-empty").text_content() == "No observation matches these filters."
    page.locator("#filter-type").select_option("")
    page.locator("#filter-seat").select_option(str(seats[0].pk))
    assert set(dom_observations(page)) == set(typed(room_id, 1).filter(seat=seats[0]).values_list("pk", flat=True))
    page.locator("#filter-seat").select_option("")
    shot(page, "workspace-desk-round-1.png")

    # A blocker nobody has answered when the round ends (the agents' own may be answered within the round,
    # depending on which of them worked first): the narrative lists it as open.
    status, body = api(page, "POST", f"discussions/{room_id}/observations",
                       {"type": "blocker", "content": "Nobody has tested rolling the invoice queue back."})
    assert status == 201, body
    page.wait_for_selector(f"#observations [data-observation-id='{body['data']['id']}']")

    # End round 1: the narrative arrives live, generated and editable side by side.
    page.get_by_role("button", name="End round").click()
    narrative = wait_for(lambda: Narrative.objects.filter(room_id=room_id, round=1).first(), timeout=60)
    page.wait_for_function("(text) => document.querySelector('#narrative-generated').textContent === text",
                           arg=narrative.generated_content)
    assert page.locator("#narrative-content").input_value() == narrative.content
    assert page.locator("#narrative-empty").is_hidden()
    page.wait_for_function("() => document.querySelector('#round-indicator').textContent === 'Round 2'")

    # The manager edits it, its decisions and next steps too; the edit is logged with before and after.
    assert page.get_by_label("Key decisions (one per line)").input_value() == "\n".join(narrative.key_decisions)
    edited = narrative.content + "\nManager: the outbox ships first; cron stays until invoices match for a week."
    page.locator("#narrative-content").fill(edited)
    page.get_by_label("Key decisions (one per line)").fill("Ship the outbox first\n\n  Keep cron for a week  ")
    page.get_by_role("button", name="Save narrative").click()
    wait_for(lambda: Narrative.objects.get(pk=narrative.pk).version == 2 or None, timeout=20)
    saved = Narrative.objects.get(pk=narrative.pk)
    assert saved.content == edited and saved.key_decisions == ["Ship the outbox first", "Keep cron for a week"]
    assert saved.next_steps == narrative.next_steps
    # Its blockers read with their text, not only their ids.
    shown = page.locator("#narrative-blockers").inner_text()
    assert narrative.blockers and all(f"#{b} {Observation.objects.get(pk=b).content}" in shown for b in narrative.blockers), shown
    log = Invocation.objects.get(room_id=room_id, component="manager.edit_narrative")
    assert log.input["before"]["content"] == narrative.content and log.input["after"]["content"] == edited
    page.wait_for_function("() => window.ConveneDesk.state.narratives[0].version === 2")

    # While the manager types, someone else changes it: the editor keeps the manager's text, and the
    # desk says at once that it changed meanwhile, showing what it now reads; saving replaces it.
    page.locator("#narrative-content").fill("My own wording of round 1.")
    status, body = api(page, "PATCH", f"discussions/{room_id}/narratives/{narrative.pk}",
                       {"content": "Changed in another tab.", "version": 2})
    assert status == 200, body
    wait_for(lambda: page.evaluate("window.ConveneDesk.state.narratives[0].version") == 3 or None, timeout=20)
    assert page.locator("#narrative-content").input_value() == "My own wording of round 1."
    conflict = page.locator("#narrative-conflict")
    conflict.wait_for()
    assert "changed meanwhile" in conflict.inner_text()
    assert page.locator("#narrative-current").text_content() == "Changed in another tab."
    assert page.locator("#narrative-content").input_value() == "My own wording of round 1."
    assert Narrative.objects.get(pk=narrative.pk).content == "Changed in another tab."
    page.get_by_role("button", name="Save narrative").click()  # saving replaces it
    wait_for(lambda: Narrative.objects.get(pk=narrative.pk).content == "My own wording of round 1." or None, timeout=20)
    page.wait_for_function("() => document.querySelector('#narrative-conflict').hidden")

    # Assign a task to the Builder: it shows as pending, and the agent claims it live in the next round.
    builder = seats[1]
    page.get_by_label("Title").fill("Draft the outbox schema")
    page.get_by_label("Priority").select_option("5")
    page.get_by_label("Assign to").select_option(str(builder.pk))
    page.get_by_role("button", name="Add task").click()
    task = wait_for(lambda: TaskAssignment.objects.filter(room_id=room_id).first(), timeout=20)
    page.wait_for_selector(f"#board [data-task-id='{task.pk}']")
    assert task_column(page, task.pk) == "pending"
    assert page.locator("#tasks-empty").is_hidden()
    card = page.locator(f"#board [data-task-id='{task.pk}']")
    assert "P5" in card.inner_text() and "assigned to Builder" in card.inner_text()
    wait_for(lambda: typed(room_id, 2).count() >= 3 or None, timeout=60)  # round 2's agents finished their work
    page.get_by_role("button", name="End round").click()  # round 3's agents see the task
    wait_for(lambda: TaskAssignment.objects.get(pk=task.pk).status != "pending" or None, timeout=60)
    page.wait_for_function(f"() => document.querySelector(\"#board [data-task-id='{task.pk}']\").dataset.status !== 'pending'")
    task.refresh_from_db()
    assert task.claimed_by_id == builder.pk
    assert task_column(page, task.pk) == task.status
    assert "claimed by Builder" in card.inner_text()
    shot(page, "workspace-desk-tasks.png")
    # The manager edits the task on the board and moves it on to done.
    card = page.locator(f"#board [data-task-id='{task.pk}']")
    card.get_by_role("button", name="Edit Draft the outbox schema").click()
    editor = page.locator("#task-edit")
    assert editor.locator("h3").inner_text() == "Edit “Draft the outbox schema”"
    editor.get_by_label("Title").fill("Draft and review the outbox schema")
    editor.get_by_label("Priority").select_option("4")
    assert editor.get_by_label("Assign to").count() == 0  # claimed: it stays with the seat that claimed it
    editor.get_by_role("button", name="Save").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=task.pk).title == "Draft and review the outbox schema" or None, timeout=20)
    assert TaskAssignment.objects.get(pk=task.pk).priority == 4
    card = page.locator(f"#board [data-task-id='{task.pk}']")
    card.locator(".task-title", has_text="Draft and review the outbox schema").wait_for()
    assert editor.is_hidden()
    status_now = TaskAssignment.objects.get(pk=task.pk).status
    if status_now == "claimed":
        card.get_by_role("button", name="Start Draft and review the outbox schema").click()
        wait_for(lambda: TaskAssignment.objects.get(pk=task.pk).status == "in_progress" or None, timeout=20)
    page.locator(f"#board [data-task-id='{task.pk}']").get_by_role("button", name="Complete Draft and review the outbox schema").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=task.pk).status == "completed" or None, timeout=20)
    page.wait_for_function(f"() => document.querySelector(\"#board [data-task-id='{task.pk}']\").closest('.column').dataset.status === 'completed'")
    assert page.locator(f"#board [data-task-id='{task.pk}'] button").count() == 0
    assert Invocation.objects.filter(room_id=room_id, component="manager.edit_task").count() == 1
    # An unassigned task cannot be claimed until the manager assigns it; then it is claimed for that agent.
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Check the invoice totals", "priority": 2})
    assert status == 201, body
    loose = page.locator(f"#board [data-task-id='{body['data']['id']}']")
    loose.wait_for()
    assert loose.get_by_role("button", name="Claim Check the invoice totals").is_disabled()
    assert "Assign it to an agent (Edit) to claim it." in loose.inner_text()  # why, in words, not on hover only
    loose.get_by_role("button", name="Edit Check the invoice totals").click()
    editor.get_by_label("Assign to").select_option(label="Planner")
    editor.get_by_role("button", name="Save").click()
    page.wait_for_function(f"() => !document.querySelector(\"#board [data-task-id='{body['data']['id']}'] [data-action=claim]\").hasAttribute('aria-disabled')")
    assert "to claim it" not in loose.inner_text()
    loose.get_by_role("button", name="Claim Check the invoice totals").click()
    wait_for(lambda: TaskAssignment.objects.get(pk=body["data"]["id"]).claimed_by_id == seats[0].pk or None, timeout=20)

    # Swap the Tester's persona: the seat works with the new one, and that pair has its own adaptation.
    tester = seats[2]
    other = Persona.objects.create(key="desk-sceptic", name="Sceptic", prompt="You doubt every plan until it is tested.",
                                   created_by=manager)
    assert page.evaluate("window.__sameDocument === true")  # everything so far arrived live
    page.reload()  # the persona list is read when the page opens
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    page.evaluate("window.__sameDocument = true")
    page.get_by_label("Persona of Tester").select_option(label="Sceptic")
    wait_for(lambda: Seat.objects.get(pk=tester.pk).persona_id == other.pk or None, timeout=20)
    page.wait_for_function("(id) => document.querySelector('[aria-label=\"Persona of Tester\"]').value === String(id)",
                           arg=other.pk)
    assert PersonaAdaptation.objects.filter(room_id=room_id, agent_id=tester.agent_id, persona=other).exists()
    assert Invocation.objects.filter(room_id=room_id, component="manager.swap_persona").count() == 1
    # And the role it works in.
    reviewer = Role.objects.create(key="desk-reviewer", name="Release reviewer", function="Checks a plan can ship", created_by=manager)
    page.reload()
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    page.evaluate("window.__sameDocument = true")
    page.get_by_label("Role of Tester").select_option(label="Release reviewer")
    wait_for(lambda: Seat.objects.get(pk=tester.pk).work_role_id == reviewer.pk or None, timeout=20)
    page.wait_for_function("(id) => document.querySelector('[aria-label=\"Role of Tester\"]').value === String(id)", arg=reviewer.pk)
    assert Seat.objects.get(pk=tester.pk).persona_id == other.pk  # the persona stays

    # Nobody acts for longer than the idle limit: at a round's end the room pauses itself, and the desk
    # says why, live; resuming takes the notice away.
    assert page.locator("#idle-notice").is_hidden()
    with transaction.atomic():
        assert pause_if_idle(locked(room_id), "idle-check", now=timezone.now() + timedelta(hours=2))
    page.locator("#idle-notice").wait_for()
    # It names what fired (the hour; the manager acted a moment ago, so no round ended by itself since), once the
    # manager's desk has read the pause's audit row (the notice shows at once, in general words, until then).
    page.wait_for_function("(words) => document.querySelector('#idle-notice').innerText.replace(/\\s+/g, ' ').includes(words)",
                           arg="paused itself: nobody had done anything in it for an hour, and its agents would have gone on working")
    assert page.get_by_role("button", name="Resume").is_enabled()
    page.get_by_role("button", name="Resume").click()
    page.wait_for_function("() => document.querySelector('#idle-notice').hidden")
    wait_for(lambda: Room.objects.get(pk=room_id).status == "active" or None, timeout=20)
    # The same for a used-up budget (a seat's call found it so), with its own words.
    with transaction.atomic():
        assert pause_itself(locked(room_id), BUDGET, "budget-check")
    page.locator("#budget-notice").wait_for()
    assert "its agents' next calls would go over its budget" in page.locator("#budget-notice").inner_text()
    assert page.locator("#idle-notice").is_hidden()
    page.get_by_role("button", name="Resume").click()
    page.wait_for_function("() => document.querySelector('#budget-notice').hidden")
    wait_for(lambda: Room.objects.get(pk=room_id).status == "active" or None, timeout=20)

    # Search over observations, tasks and narratives.
    page.get_by_label("Search the workspace").fill("outbox")
    page.get_by_role("button", name="Search").click()
    page.wait_for_selector("#search-results .search-hit")
    results = page.locator("#search-results").inner_text()
    assert "Tasks (1)" in results and "Draft and review the outbox schema" in results

    # The invocation log shows the newest rows, however long the log grows (the API pages from the oldest).
    Invocation.objects.bulk_create([Invocation(room_id=room_id, component="agent.round_work", correlation_id="long-chain",
                                               input={"n": i}) for i in range(250)])
    newest = Invocation.objects.filter(room_id=room_id, correlation_id="long-chain").order_by("-id").first().pk
    page.get_by_label("Correlation id").fill("long-chain")
    page.get_by_label("Correlation id").press("Enter")
    page.wait_for_function("(id) => { const rows = document.querySelectorAll('#invocations li');"
                           " return rows.length === 200 && rows[rows.length - 1].dataset.invocationId === String(id); }",
                           arg=newest)

    # The invocation log, filtered by a round's correlation id.
    chain = Invocation.objects.filter(room_id=room_id, component="manager.edit_narrative").first().correlation_id
    page.get_by_label("Correlation id").fill(chain)
    page.get_by_label("Correlation id").press("Enter")
    page.wait_for_function("(c) => [...document.querySelectorAll('#invocations a.correlation')].every(a => a.dataset.correlation === c)"
                           " && document.querySelectorAll('#invocations li').length > 0", arg=chain)
    components = set(page.eval_on_selector_all("#invocations li", "ns => ns.map(n => n.dataset.component)"))
    assert {"round.start", "agent.round_work", "narrative.generate", "manager.edit_narrative"} <= components

    # Complete asks first (it cannot be undone); keeping it open changes nothing.
    page.get_by_role("button", name="Complete", exact=True).click()
    dialog = page.get_by_role("dialog", name="Complete this workspace?")
    dialog.wait_for()
    assert "cannot be undone" in dialog.inner_text()
    dialog.get_by_role("button", name="Keep it open").click()
    assert dialog.is_hidden() and Room.objects.get(pk=room_id).status == "active"
    # Complete the scope: read-only everywhere, controls gone, writes refused.
    page.get_by_role("button", name="Complete", exact=True).click()
    dialog.get_by_role("button", name="Complete workspace").click()
    page.locator("#read-only").wait_for()
    wait_for(lambda: Room.objects.get(pk=room_id).status == "completed" or None, timeout=20)
    for control in ("#btn-end-round", "#task-form", "#btn-save-narrative", "#btn-start", "#btn-pause"):
        assert not page.locator(control).is_visible(), control
    assert page.locator("#seats select").count() == 0
    assert page.locator("#narrative-content").get_attribute("readonly") is not None
    # Read-only throughout: the decisions and next steps too, and the pacing no longer reads as live.
    for box in ("Key decisions (one per line)", "Next steps (one per line)"):
        assert not page.get_by_label(box).is_editable(), box
    pacing = " ".join(page.locator("#round-pacing").inner_text().split())
    assert "No round runs any more: the scope is closed." in pacing and "A round ends by itself" not in pacing
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Too late", "priority": 1})
    assert status == 409 and body["error"]["code"], body
    assert TaskAssignment.objects.filter(room_id=room_id).count() == 2  # the two made before it closed
    shot(page, "workspace-desk-completed.png")
    # The report of the finished scope downloads from the desk.
    with page.expect_download() as download:
        page.locator("#export-report-docx").click()
    report = Document(io.BytesIO(open(download.value.path(), "rb").read()))
    headings = [p.text for p in report.paragraphs if p.style.name.startswith(("Title", "Heading"))]
    assert headings[0] == "Workspace report: Billing migration" and "Draft and review the outbox schema" in "\n".join(p.text for p in report.paragraphs)
    assert {"Still open", "Tasks", "Rounds", "Agents"} <= set(headings)
    # A completed scope can still be archived; then no control is left at all.
    archive = page.get_by_role("button", name="Archive")
    assert archive.is_visible() and not page.get_by_role("button", name="Complete", exact=True).is_visible()
    archive.click()
    page.get_by_role("dialog", name="Archive this workspace?").get_by_role("button", name="Archive workspace").click()
    page.wait_for_function("() => document.querySelector('#desk').dataset.status === 'archived'")
    assert Room.objects.get(pk=room_id).status == "archived"
    assert not page.locator("#workspace-controls").is_visible() and page.locator("#read-only").is_visible()
    assert page.evaluate("window.__sameDocument === true")
    assert page.errors == []

    # A viewer sees the same room and nothing to press.
    viewer_page, viewer = make_page("vic")
    RoomMember.objects.create(room_id=room_id, user=viewer, access=RoomMember.Access.VIEWER)
    viewer_page.goto(f"/workspaces/{room_id}/")
    viewer_page.wait_for_function("() => document.querySelectorAll('#observations [data-observation-id]').length > 0")
    assert viewer_page.locator("button:visible").filter(has_text="End round").count() == 0
    assert viewer_page.locator("#task-form, #invocations, #btn-save-narrative").count() == 0
    assert viewer_page.errors == []


def test_a_manager_creates_a_workspace_in_the_wizard(make_page):
    page, manager = make_page("wanda")
    page.goto("/discussions/new/")
    page.get_by_label("Topic").fill(TOPIC)
    page.locator("input[name=kind][value=workspace]").check()
    page.get_by_role("button", name="Next").click()
    page.wait_for_selector("#moderator optgroup[label='Built-in presets'] option", state="attached")
    page.get_by_label("Facilitator", exact=True).select_option(label="The Impartial Chair")
    for name in ("Architect", "Designer"):
        page.locator(".prow").filter(has=page.locator(".name", has_text=name)).first.locator(".p-check").check()
    page.get_by_role("button", name="Next").click()
    # A workspace has no turn limit or estimate: the page says how its rounds end instead.
    assert page.locator("#workspace-rounds").is_visible() and "End round" in page.locator("#workspace-rounds").inner_text()
    assert "pauses itself when nobody has acted in it for an hour" in page.locator("#workspace-rounds").inner_text()
    assert page.locator("#discussion-rounds").is_hidden() and page.locator("#estimate-section").is_hidden()
    assert page.get_by_role("button", name="Start workspace").is_visible()
    page.get_by_role("button", name="Save as draft").click()
    page.wait_for_url("**/workspaces/*/")
    room = Room.objects.get(owner=manager)
    assert room.kind == "workspace" and room.status == "draft" and room.topic == TOPIC
    assert sorted(Seat.objects.filter(room=room, role="participant").values_list("agent__name", flat=True)) == ["Architect", "Designer"]
    assert page.url.endswith(f"/workspaces/{room.pk}/")
    # A draft that never ran cannot be completed (there is no scope to close); it can be archived.
    page.wait_for_function("() => document.querySelector('#desk').dataset.status === 'draft'")
    assert page.get_by_role("button", name="Complete", exact=True).is_disabled()
    status, body = api(page, "POST", f"discussions/{room.pk}/complete")
    assert status == 409 and body["error"]["code"] == "invalid_transition", body
    # In the list: a workspace has no turn limit ("0", not "0 of 5") and its closed states have labels.
    status, body = api(page, "POST", f"discussions/{room.pk}/archive")
    assert status == 200, body
    page.goto("/")
    row = page.locator(f"#discussion-rows tr[data-id='{room.pk}']")
    row.wait_for()
    cells = row.locator("td").all_inner_texts()
    assert [c.strip() for c in cells[1:4]] == ["workspace", "Archived", "0"]


def _bulk_observations(room_id, n, number=1):
    """``n`` observations written straight into round ``number`` (a long workspace, quickly), after the room's seq."""
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room_id)
        turn = Turn.objects.get(room=room, number=number)
        rows = [Observation(room=room, seq=room.seq + i + 1, turn=turn, round=number, author_name="Archive",
                            author_kind=Observation.AuthorKind.AGENT, kind=Observation.Kind.CONTRIBUTION,
                            event_type="observation", content=f"Old note {i}") for i in range(n)]
        Observation.objects.bulk_create(rows)
        Room.objects.filter(pk=room_id).update(seq=room.seq + n)
    return [o.seq for o in rows]


def test_the_desk_shows_the_newest_observations_of_a_long_workspace(make_page):
    page, manager = make_page("lena")
    room_id = create_workspace(page)
    status, body = api(page, "PATCH", f"discussions/{room_id}", {"turnPolicy": {"maxEvents": 1000, "maxSeconds": 3600}})
    assert status == 200, body
    assert api(page, "POST", f"discussions/{room_id}/start")[0] == 200
    wait_for(lambda: typed(room_id, 1).count() >= 6 or None, timeout=60)  # round 1's agents are done
    seqs = _bulk_observations(room_id, 1200)
    newest = Observation.objects.get(room_id=room_id, seq=seqs[-1]).pk
    oldest = typed(room_id).order_by("seq").first().pk

    page.goto(f"/workspaces/{room_id}/")
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    page.wait_for_function("() => document.querySelectorAll('#observations [data-observation-id]').length === 1000")
    shown = set(dom_observations(page))
    assert newest in shown and oldest not in shown
    assert page.locator("#observations-older").is_visible()
    assert "1,000 newest observations are shown" in page.locator("#observations-older").inner_text()
    # The manager's own observation arrives live at the end, on a long workspace too.
    page.locator("#obs-content").fill("Who signs off the cut-over?")
    page.get_by_role("button", name="Publish").click()
    mine = wait_for(lambda: Observation.objects.filter(room_id=room_id, content="Who signs off the cut-over?").first(), timeout=20)
    page.wait_for_selector(f"#observations [data-observation-id='{mine.pk}']")
    assert dom_observations(page)[-1] == mine.pk
    # Older ones load on request, all of them in the end.
    page.get_by_role("button", name="Show older observations").click()
    total = typed(room_id).count()
    page.wait_for_function("(n) => document.querySelectorAll('#observations [data-observation-id]').length === n", arg=total)
    assert oldest in dom_observations(page) and page.locator("#observations-older").is_hidden()
    # What the offline rehearsal model wrote says so; a person's observation does not.
    agent = typed(room_id).filter(provider="rehearsal").first()
    assert page.locator(f"[data-observation-id='{agent.pk}'] > .badge.rehearsal").inner_text() == "rehearsal"
    assert page.locator(f"[data-observation-id='{mine.pk}'] > .badge.rehearsal").count() == 0
    page.get_by_role("button", name="End round").click()
    narrative = wait_for(lambda: Narrative.objects.filter(room_id=room_id, round=1).first(), timeout=60)
    assert narrative.provider == "rehearsal"
    page.locator("#narrative-rehearsal").wait_for()
    assert page.errors == []


def test_a_workspace_paused_for_its_budget_resumes_only_once_it_is_raised(make_page):
    page, manager = make_page("bea")
    room_id = create_workspace(page)
    status, body = api(page, "PATCH", f"discussions/{room_id}", {"budgetTokens": 50, "turnPolicy": {"maxEvents": 50, "maxSeconds": 3600}})
    assert status == 200, body
    page.goto(f"/workspaces/{room_id}/")
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    page.get_by_role("button", name="Start").click()
    page.locator("#budget-notice").wait_for()
    assert Room.objects.get(pk=room_id).pause_reason == "budget" and not typed(room_id).exists()
    notice = " ".join(page.locator("#budget-notice").inner_text().split())
    assert "would go over its budget" in notice and "before the amount spent reaches the budget" in notice
    # Resume without raising it: refused, and the desk says why.
    page.get_by_role("button", name="Resume").click()
    page.locator("#budget-refused").wait_for()
    assert page.locator("#budget-refused").inner_text().startswith("Raise the budget to at least ")
    assert Room.objects.get(pk=room_id).status == "paused"
    # Raised, then resumed: every agent works in round 1, the one whose call was refused too.
    page.get_by_role("button", name="Change").click()
    page.get_by_label("Token budget").fill("5000000")
    page.get_by_role("button", name="Save", exact=True).click()
    wait_for(lambda: Room.objects.get(pk=room_id).budget_tokens == 5_000_000 or None, timeout=20)
    page.get_by_role("button", name="Resume").click()
    wait_for(lambda: {o.seat_id for o in typed(room_id, 1)} == set(Seat.objects.filter(room_id=room_id, role="participant")
                                                                     .values_list("pk", flat=True)) or None, timeout=60)
    page.wait_for_function("() => document.querySelector('#budget-notice').hidden")
    assert page.locator("#budget-refused").is_hidden()
    assert Room.objects.get(pk=room_id).round == 1
    # Emptying the field removes the budget ("no limit"), with its audit row.
    page.get_by_role("button", name="Change").click()
    assert page.get_by_label("Token budget").input_value() == "5000000"
    page.get_by_label("Token budget").fill("")
    page.get_by_role("button", name="Save", exact=True).click()
    wait_for(lambda: Room.objects.get(pk=room_id).budget_tokens is None or None, timeout=20)
    page.wait_for_function("() => document.querySelector('#budget-text').textContent.endsWith('no budget caps it.')")
    assert Invocation.objects.filter(room_id=room_id, component="room.update").last().input["after"] == {"budgetTokens": None}
    assert page.errors == []


def test_live_events_keep_the_chosen_agent_and_a_new_task_starts_from_the_defaults(make_page):
    page, manager = make_page("kira")
    room_id = create_workspace(page)
    seats = list(Seat.objects.filter(room_id=room_id, role="participant").order_by("position"))
    page.goto(f"/workspaces/{room_id}/")
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    page.locator("#filter-seat").select_option(str(seats[1].pk))
    page.get_by_label("Assign to").select_option(str(seats[2].pk))
    page.get_by_label("Priority").select_option("5")
    # Something happens in the room (here the pacing changes in another tab): the desk redraws.
    status, body = api(page, "PATCH", f"discussions/{room_id}", {"turnPolicy": {"maxEvents": 12}})
    assert status == 200, body
    page.wait_for_function("() => document.querySelector('#pacing-text').textContent.startsWith('12 observations')")
    assert page.locator("#filter-seat").input_value() == str(seats[1].pk)
    assert page.get_by_label("Assign to").input_value() == str(seats[2].pk)
    # Adding the task resets the whole form.
    page.get_by_label("Title").fill("Write the runbook")
    page.get_by_role("button", name="Add task").click()
    task = wait_for(lambda: TaskAssignment.objects.filter(room_id=room_id).first(), timeout=20)
    assert (task.priority, task.assignee_id) == (5, seats[2].pk)
    page.wait_for_selector(f"#board [data-task-id='{task.pk}']")
    assert page.get_by_label("Title").input_value() == ""
    assert page.get_by_label("Priority").input_value() == "3" and page.get_by_label("Assign to").input_value() == ""
    assert page.locator("#filter-seat").input_value() == str(seats[1].pk)
    assert page.errors == []
