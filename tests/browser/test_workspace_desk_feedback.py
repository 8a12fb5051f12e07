"""The desk says what is wrong with what the manager typed, and lets the manager answer and share.

Against the live stack, like ``test_workspace_desk``; the agents and the narrator run on the offline
rehearsal model.
"""
import pytest

from rooms.models import Invocation, Narrative, Observation, Persona, Role, Room, RoomMember, Seat, TaskAssignment
from tests.browser.conftest import api
from tests.browser.test_workspace_desk import create_workspace, typed
from tests.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def running_workspace(page, *, narrative=False):
    """A started workspace whose rounds do not end by themselves; with ``narrative``, round 1 ended."""
    room_id = create_workspace(page)
    status, body = api(page, "PATCH", f"discussions/{room_id}", {"turnPolicy": {"maxEvents": 1000, "maxSeconds": 3600}})
    assert status == 200, body
    assert api(page, "POST", f"discussions/{room_id}/start")[0] == 200
    wait_for(lambda: typed(room_id, 1).count() >= 3 or None, timeout=60)
    if narrative:
        assert api(page, "POST", f"discussions/{room_id}/rounds/end")[0] == 200
        wait_for(lambda: Narrative.objects.filter(room_id=room_id, round=1).first(), timeout=60)
    return room_id


def open_desk(page, room_id, *, narrative=False):
    """The workspace's desk, live; with ``narrative``, once it shows the latest narrative."""
    page.goto(f"/workspaces/{room_id}/")
    page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    if narrative:
        page.wait_for_function("() => !document.querySelector('#narrative-body').hidden")


def desk_with_a_narrative(page):
    """A running workspace whose round 1 ended, open on the desk at its narrative: ``(room_id, narrative)``."""
    room_id = running_workspace(page, narrative=True)
    open_desk(page, room_id, narrative=True)
    return room_id, Narrative.objects.get(room_id=room_id, round=1)


def writes(page):
    """Every request the page sends that could change something (filled as the page sends them)."""
    sent = []
    page.on("request", lambda r: sent.append(f"{r.method} {r.url}") if r.method != "GET" else None)
    return sent


def test_the_desk_says_what_is_wrong_and_sends_nothing_blank(make_page):
    page, manager = make_page("quinn")
    room_id, narrative = desk_with_a_narrative(page)
    people = Observation.objects.filter(room_id=room_id, author_kind="human").count()
    sent = writes(page)

    # A task titled with spaces: the form says so, nothing is sent or saved.
    page.get_by_label("Title").fill("   ")
    page.get_by_role("button", name="Add task").click()
    page.locator("#task-form-error").wait_for()
    assert page.locator("#task-form-error").inner_text() == "A task needs a title (spaces do not count)."
    # An observation of spaces: the same.
    page.locator("#obs-content").fill("  \t ")
    page.get_by_role("button", name="Publish").click()
    page.locator("#observation-error").wait_for()
    assert "Write the observation's text first" in page.locator("#observation-error").inner_text()
    # A narrative whose text is blank, then one with 51 key decisions.
    page.locator("#narrative-content").fill("   ")
    page.get_by_role("button", name="Save narrative").click()
    page.locator("#narrative-error").wait_for()
    assert "The narrative's text is empty" in page.locator("#narrative-error").inner_text()
    page.locator("#narrative-content").fill("Round 1: the outbox goes first.")
    page.get_by_label("Key decisions (one per line)").fill("\n".join(f"Decision {i}" for i in range(51)))
    page.get_by_role("button", name="Save narrative").click()
    page.wait_for_function("() => document.querySelector('#narrative-error').textContent"
                           " === 'At most 50 key decisions, one per line: there are 51.'")
    page.wait_for_timeout(300)
    assert sent == []
    assert TaskAssignment.objects.filter(room_id=room_id).count() == 0
    assert Observation.objects.filter(room_id=room_id, author_kind="human").count() == people
    assert Narrative.objects.get(pk=narrative.pk).version == narrative.version

    # What only the server checks comes back with its details, field by field, in the desk's words, under the editor.
    page.get_by_label("Key decisions (one per line)").fill("x" * 1001)
    page.get_by_role("button", name="Save narrative").click()
    page.wait_for_function("() => document.querySelector('#narrative-error').textContent.includes('Key decisions')")
    assert page.locator("#narrative-error").inner_text() == (
        "The narrative edit is not valid.\nKey decisions: Each item has at most 1000 characters.")  # a line each
    assert page.get_by_label("Key decisions (one per line)").input_value() == "x" * 1001  # nothing typed is lost
    assert Narrative.objects.get(pk=narrative.pk).version == narrative.version
    assert not Invocation.objects.filter(room_id=room_id, component="manager.edit_narrative").exists()

    # A task being edited cannot lose its title to spaces either.
    status, body = api(page, "POST", f"discussions/{room_id}/tasks", {"title": "Write the runbook", "priority": 2})
    assert status == 201, body
    page.get_by_role("button", name="Edit Write the runbook").click()
    sent.clear()
    page.locator("#task-edit").get_by_label("Title").fill("  ")
    page.locator("#task-edit").get_by_role("button", name="Save").click()
    page.locator("#task-edit-error").wait_for()
    assert page.locator("#task-edit-error").inner_text() == "A task needs a title (spaces do not count)."
    page.wait_for_timeout(300)
    assert sent == [] and TaskAssignment.objects.get(pk=body["data"]["id"]).title == "Write the runbook"
    assert page.errors == []


def test_an_agent_is_offered_only_roles_it_works_in(make_page):
    page, manager = make_page("rory")
    room_id = create_workspace(page)
    seat = Seat.objects.filter(room_id=room_id, role="participant").select_related("agent").order_by("position").first()
    open_desk(page, room_id)
    select = page.get_by_label(f"Role of {seat.agent.name}")
    select.wait_for()
    offered = select.locator("option").all_inner_texts()
    # The built-in presets are seeded: the working roles are there, the facilitator's and the observer's are not.
    assert "Participant" in offered and "Devil's advocate" in offered and "Systems architect" in offered
    assert "Facilitator" not in offered and "Observer" not in offered
    # The server refuses them too, and says why.
    observer = Role.objects.get(key="observer", is_builtin=True)
    status, body = api(page, "PATCH", f"discussions/{room_id}/participants/{seat.pk}", {"roleId": observer.pk, "version": 1})
    assert status == 400 and "cannot work as Observer" in body["error"]["details"]["roleId"][0], body
    assert Seat.objects.get(pk=seat.pk).work_role_id is None
    page.get_by_label(f"Role of {seat.agent.name}").select_option(label="Devil's advocate")
    wait_for(lambda: Seat.objects.get(pk=seat.pk).work_role_id == Role.objects.get(key="devil_advocate", is_builtin=True).pk
             or None, timeout=20)
    assert page.errors == []


def test_a_refused_persona_swap_is_said_next_to_its_select(make_page):
    page, manager = make_page("rafa")
    room_id = create_workspace(page)
    seat = Seat.objects.filter(room_id=room_id, role="participant").select_related("agent").order_by("position").first()
    gone = Persona.objects.create(key="desk-doubter", name="Doubter", prompt="You doubt every plan.", created_by=manager)
    open_desk(page, room_id)
    select = page.get_by_label(f"Persona of {seat.agent.name}")
    select.wait_for()
    before = select.input_value()
    gone_id = gone.pk
    gone.delete()  # deleted after the desk listed it: the server refuses the swap
    select.select_option(label="Doubter")
    error = page.locator(f"#seat-{seat.pk}-personaId-error")
    error.wait_for()
    assert "Unknown persona" in error.inner_text()
    select = page.get_by_label(f"Persona of {seat.agent.name}")
    assert select.get_attribute("aria-describedby") == f"seat-{seat.pk}-personaId-error"
    # The choice went back to what the seat has.
    assert select.input_value() == before != str(gone_id) and Seat.objects.get(pk=seat.pk).persona_id == seat.persona_id
    page.wait_for_timeout(300)
    assert "Unknown persona" not in (page.locator("#toast").text_content() or "")  # not in a pop-up as well
    assert page.errors == []


def test_the_manager_replies_to_a_question_from_the_desk(make_page):
    page, manager = make_page("sami")
    room_id = running_workspace(page)
    status, body = api(page, "POST", f"discussions/{room_id}/observations", {"type": "question", "content": "Who signs off the cut-over?"})
    assert status == 201, body
    question = body["data"]["id"]
    open_desk(page, room_id)
    page.wait_for_selector(f"#observations [data-observation-id='{question}']")
    # Only questions and blockers carry a Reply.
    kinds = page.eval_on_selector_all("#observations [data-action=reply]", "bs => bs.map(b => b.closest('[data-observation-id]').dataset.type)")
    assert kinds and set(kinds) <= {"question", "blocker"}
    assert page.locator("#obs-reply").is_hidden()

    # Reply opens the form with its target shown; cancelling it publishes a plain observation again.
    page.get_by_role("button", name=f"Reply to question #{question}").click()
    target = page.locator("#obs-reply")
    assert target.is_visible() and "Replying to question" in target.inner_text() and "Who signs off the cut-over?" in target.inner_text()
    assert page.evaluate("document.activeElement.id") == "obs-content"
    page.get_by_role("button", name="Cancel reply").click()
    assert target.is_hidden()
    page.locator("#obs-type").select_option("observation")
    page.locator("#obs-content").fill("The cut-over needs a date first.")
    page.get_by_role("button", name="Publish").click()
    plain = wait_for(lambda: Observation.objects.filter(room_id=room_id, content="The cut-over needs a date first.").first(), timeout=20)
    assert plain.responding_to_id is None
    page.wait_for_function("() => document.querySelector('#obs-content').value === ''")  # the page has the answer

    # The reply itself: posted with respondingToId, shown under the question, which is no longer open.
    page.get_by_role("button", name=f"Reply to question #{question}").click()
    assert page.locator("#obs-type").input_value() == "clarification"
    page.locator("#obs-content").fill("The finance lead signs it off.")
    page.get_by_role("button", name="Publish").click()
    reply = wait_for(lambda: Observation.objects.filter(room_id=room_id, content="The finance lead signs it off.").first(), timeout=20)
    assert (reply.responding_to_id, reply.event_type, reply.author_kind) == (question, "clarification", "human")
    page.wait_for_selector(f"[data-observation-id='{question}'] .replies [data-observation-id='{reply.pk}']")
    # The form starts afresh once the page has the POST's answer (the pushed reply may be shown before it).
    page.wait_for_function("() => document.querySelector('#obs-content').value === ''")
    assert target.is_hidden()
    page.locator("#filter-open").check()
    assert page.locator(f"#observations [data-observation-id='{question}']").count() == 0
    status, body = api(page, "GET", f"discussions/{room_id}/observations?unanswered=true&type=question")
    assert question not in [o["id"] for o in body["data"]]
    assert page.errors == []


def test_the_invocation_log_names_the_agents(make_page):
    page, manager = make_page("tove")
    room_id = running_workspace(page, narrative=True)
    open_desk(page, room_id)
    names = {s.agent_id: s.agent.name for s in Seat.objects.filter(room_id=room_id).select_related("agent")}
    rows = Invocation.objects.filter(room_id=room_id, agent__isnull=False).order_by("id")
    assert {r.agent_id for r in rows} >= {s for s, _ in names.items()}  # the agents' work and the narrator's
    last = rows.last()
    page.wait_for_selector(f"#invocations [data-invocation-id='{last.pk}']")
    for row in rows:
        who = page.locator(f"#invocations [data-invocation-id='{row.pk}'] .who").inner_text()
        assert names[row.agent_id] in who and f"agent {row.agent_id}" not in who, who
    assert page.errors == []


def test_the_owner_shares_a_workspace_from_the_desk(make_page):
    page, manager = make_page("uma")
    room_id = create_workspace(page)
    guest_page, guest = make_page("ulf")
    open_desk(page, room_id)
    members = page.locator("#members")
    members.get_by_text("Not shared with anyone yet.").wait_for()
    assert "uma" in members.inner_text()
    # Share with a person as a viewer; then as a participant; then take it away again.
    page.get_by_label("Username").fill("ulf")
    page.locator("#share-access").select_option("viewer")
    page.get_by_role("button", name="Share").click()
    page.locator("#members [data-username='ulf']").wait_for()
    assert RoomMember.objects.get(room_id=room_id, user=guest).access == "viewer"
    assert page.get_by_label("Username").input_value() == ""
    guest_page.goto(f"/workspaces/{room_id}/")
    guest_page.wait_for_function("() => document.querySelector('#connection').dataset.state === 'online'")
    assert guest_page.locator("#sharing, #observation-form").count() == 0  # a viewer neither shares nor publishes
    page.get_by_label("Access of ulf").select_option("participant")
    wait_for(lambda: RoomMember.objects.get(room_id=room_id, user=guest).access == "participant" or None, timeout=20)
    guest_page.locator("#observation-form").wait_for(timeout=20000)  # the guest's desk redraws for the new access
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Remove ulf").click()
    members.get_by_text("Not shared with anyone yet.").wait_for()
    assert not RoomMember.objects.filter(room_id=room_id, user=guest).exists()
    # Somebody who does not exist: the form says so and nothing is shared.
    page.get_by_label("Username").fill("nobody-here")
    page.get_by_role("button", name="Share").click()
    page.locator("#share-error").wait_for()
    assert page.locator("#share-error").inner_text()
    assert not RoomMember.objects.filter(room_id=room_id).exists()
    assert page.errors == [] and guest_page.errors == []


def test_a_long_word_in_a_task_or_an_observation_wraps_instead_of_widening_the_desk_on_a_phone(make_page):
    page, _ = make_page("petra", viewport={"width": 390, "height": 844})
    page.goto("/")
    room_id = running_workspace(page)
    word = "https://example.com/" + "a" * 150  # a link pasted as a title: one word, no place to break
    status, task = api(page, "POST", f"discussions/{room_id}/tasks", {"title": word, "priority": 3})
    assert status == 201, task
    status, obs = api(page, "POST", f"discussions/{room_id}/observations", {"type": "question", "content": f"Is {word} right?"})
    assert status == 201, obs
    open_desk(page, room_id)
    page.wait_for_selector(f"#board [data-task-id='{task['data']['id']}']")
    page.wait_for_selector(f"#observations [data-observation-id='{obs['data']['id']}']")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "the desk scrolls sideways"


def test_a_pacing_form_the_server_refuses_says_why_under_it_and_stays_open(make_page):
    page, manager = make_page("pia")
    room_id = running_workspace(page)
    open_desk(page, room_id)
    sent = writes(page)
    page.get_by_role("button", name="Change").click()
    # A page opened before the server's limit changed: the field lets the amount through, the server refuses it.
    page.eval_on_selector("#budget-usd", "e => e.removeAttribute('max')")
    page.get_by_label("Budget in USD").fill("5000000")
    page.get_by_role("button", name="Save").click()
    error = page.locator("#pacing-error")
    error.wait_for()
    assert "Budget in USD: Must be a number from 0 to 999,999.99." in error.inner_text()
    assert page.locator("#pacing-form").is_visible() and page.get_by_label("Budget in USD").input_value() == "5000000"
    assert any(r.startswith("PATCH") for r in sent) and Room.objects.get(pk=room_id).budget_usd is None
    # Fixed and saved: the line goes with the form; opened again, nothing old is said.
    page.get_by_label("Budget in USD").fill("50")
    page.get_by_role("button", name="Save").click()
    page.wait_for_function("() => document.querySelector('#pacing-form').hidden")
    page.get_by_role("button", name="Change").click()
    assert error.is_hidden()
    assert page.errors == []


def test_a_budget_over_the_server_s_limit_is_stopped_by_the_browser_before_sending(make_page):
    page, manager = make_page("pim")
    room_id = running_workspace(page)
    open_desk(page, room_id)
    sent = writes(page)
    page.get_by_role("button", name="Change").click()
    usd = page.get_by_label("Budget in USD")
    assert usd.get_attribute("max") == "999999.99"
    usd.fill("1000000")
    page.get_by_role("button", name="Save").click()
    page.wait_for_timeout(300)
    assert usd.evaluate("e => e.validity.rangeOverflow") and usd.evaluate("e => e.validationMessage")
    assert not any(r.startswith("PATCH") for r in sent) and Room.objects.get(pk=room_id).budget_usd is None
    assert page.locator("#pacing-form").is_visible()
    usd.fill("999999.99")
    page.get_by_role("button", name="Save").click()
    wait_for(lambda: Room.objects.get(pk=room_id).budget_usd is not None or None, timeout=20)
    assert float(Room.objects.get(pk=room_id).budget_usd) == 999999.99
    assert page.errors == []


def test_the_token_budget_field_holds_the_server_s_limits_and_says_what_it_takes(make_page):
    page, manager = make_page("tove")
    room_id = create_workspace(page)
    open_desk(page, room_id)
    sent = writes(page)
    page.get_by_role("button", name="Change").click()
    tokens = page.get_by_label("Token budget")
    # From 1 to the server's largest (as far as the browser keeps a whole number exactly: MAX_BIG is larger).
    assert tokens.get_attribute("min") == "1" and tokens.get_attribute("max") == "9007199254740991"
    help_line = page.locator("#budget-tokens-help")
    assert tokens.get_attribute("aria-describedby") == "budget-tokens-help" and help_line.is_visible()
    assert "a whole number from 1" in help_line.inner_text() and "Empty: no limit." in help_line.inner_text()
    for typed, flaw in (("0", "rangeUnderflow"), ("9007199254740993", "rangeOverflow"), ("12.5", "stepMismatch")):
        tokens.fill(typed)
        page.get_by_role("button", name="Save").click()
        page.wait_for_timeout(200)
        assert tokens.evaluate(f"e => e.validity.{flaw}") and tokens.evaluate("e => e.validationMessage"), typed
    assert not any(r.startswith("PATCH") for r in sent) and Room.objects.get(pk=room_id).budget_tokens is None
    tokens.fill("250000")
    page.get_by_role("button", name="Save").click()
    wait_for(lambda: Room.objects.get(pk=room_id).budget_tokens == 250000 or None, timeout=20)
    assert page.errors == []


def test_a_viewer_reads_the_narrative_as_rendered_text_not_in_a_form_control(make_page):
    page, manager = make_page("nell")
    room_id = running_workspace(page, narrative=True)
    narrative = Narrative.objects.get(room_id=room_id, round=1)
    narrative.content = "**Ship** the outbox first.\n\n- one\n- two\n\n<script>window.pwned = 1</script><img src=x onerror=1>"
    narrative.save(update_fields=["content"])
    viewer_page, viewer = make_page("vera")
    RoomMember.objects.create(room_id=room_id, user=viewer, access=RoomMember.Access.VIEWER)
    open_desk(viewer_page, room_id, narrative=True)
    read = viewer_page.locator("#narrative-read")
    read.locator("strong").wait_for()
    assert read.locator("strong").inner_text() == "Ship" and read.locator("li").all_inner_texts() == ["one", "two"]
    # What people wrote is text: no script, no image, nothing run.
    assert read.locator("script, img").count() == 0 and "<script>" in read.inner_text()
    assert viewer_page.evaluate("() => window.pwned") is None
    assert viewer_page.locator("#narrative-body textarea, #narrative-body [readonly]").count() == 0
    assert viewer_page.errors == []


def test_saving_the_pacing_form_says_what_was_saved_the_budget_too(make_page):
    """The form holds the pacing and the budget: what the desk says once it saved names both, so a manager who
    only raised the budget does not read about the pacing alone."""
    page, manager = make_page("rhea")
    room_id = create_workspace(page)
    open_desk(page, room_id)
    page.get_by_role("button", name="Change").click()
    page.get_by_label("Token budget").fill("250000")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_function("() => document.querySelector('#toast').textContent.startsWith('Saved')")
    assert page.locator("#toast").inner_text() == (
        "Saved: a round ends after 10 observations or 5 minutes; the budget is 250,000 tokens.")
    assert Room.objects.get(pk=room_id).budget_tokens == 250_000
    page.get_by_role("button", name="Change").click()
    page.get_by_label("Token budget").fill("")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_function("() => document.querySelector('#toast').textContent.endsWith('no budget caps it.')")
    assert Room.objects.get(pk=room_id).budget_tokens is None
    assert page.errors == []
