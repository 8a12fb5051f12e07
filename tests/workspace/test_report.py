"""A workspace's report (export ``minutes`` and ``docx``): rounds with their narratives, tasks, what is
still open and what the agents spent, for anyone who may view the workspace."""
import io
import re

import pytest
from docx import Document

from facilitation.runs.scheduling import inline
from facilitation.workspace.actions.lifecycle import do_complete_workspace, do_start_workspace
from facilitation.workspace.actions.narratives import do_edit_narrative
from facilitation.workspace.actions.observations import do_post_observation
from facilitation.workspace.actions.rounds import do_end_round
from facilitation.workspace.actions.tasks import do_create_task
from rooms.models import Narrative, Room
from tests.docx_properties import assert_our_properties
from tests.factories import make_user
from tests.workspace.helpers import agent_seats, make_workspace, run_round_work


@pytest.fixture
def people(db):
    return {"manager": make_user("reporter"), "viewer": make_user("reader"), "stranger": make_user("outsider")}


@pytest.fixture
def finished(people):
    manager = people["manager"]
    room = make_workspace(manager, viewer=people["viewer"], turn_policy={"maxEvents": 50, "maxSeconds": 600})
    with inline():
        do_start_workspace(room, manager)
        run_round_work(room)
        do_end_round(room, manager)
        run_round_work(room)
        narrative = Narrative.objects.get(room=room, round=1)
        do_edit_narrative(room, narrative.pk, manager, content="The outbox ships first; cron stays a week.", version=narrative.version)
        do_create_task(room, manager, title="Draft the outbox schema", priority=5, assignee_id=agent_seats(room)[1].pk)
        do_post_observation(room, manager, event_type="question", content="Who signs off the invoice totals?")
        do_complete_workspace(room, manager)
    return Room.objects.get(pk=room.pk)


def test_the_report_in_markdown(finished, people, client):
    client.force_login(people["viewer"])
    response = client.get(f"/api/discussions/{finished.pk}/export?format=minutes")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")
    assert re.search(rf'filename="workspace-{finished.pk}-billing-migration-report\.md"', response["Content-Disposition"])
    text = response.content.decode()
    assert text.startswith("# Workspace report: Billing migration")
    assert "- **Status:** Completed" in text and "- **Manager:** reporter" in text
    still_open = text.split("## Still open")[1].split("## Tasks")[0]
    assert "Question from reporter (round 2): Who signs off the invoice totals?" in still_open
    assert "Pending: Draft the outbox schema (priority 5, assigned to " in text
    round_one = text.split("### Round 1 ")[1].split("### Round 2 ")[0]
    assert round_one.startswith("(ended by the manager; ")
    assert "The outbox ships first; cron stays a week." in round_one and "_Edited by the manager._" in round_one
    assert "### Round 2 (ended when the scope closed; " in text
    agents = text.split("## Agents")[1]
    assert all(re.search(rf"- {re.escape(s.agent.name)}: [\d,]+ tokens?", agents) for s in agent_seats(finished))


def test_the_report_as_a_word_document(finished, people, client):
    client.force_login(people["manager"])
    response = client.get(f"/api/discussions/{finished.pk}/export?format=docx")
    assert response.status_code == 200
    doc = Document(io.BytesIO(response.content))
    assert_our_properties(doc, "Billing migration")
    styled = [(p.style.name, p.text) for p in doc.paragraphs]
    assert ("Title", "Workspace report: Billing migration") in styled
    assert [t for s, t in styled if s == "Heading 1"] == ["Still open", "Tasks", "Rounds", "Agents"]
    assert [t.split(" (")[0] for s, t in styled if s == "Heading 2"] == ["Round 1", "Round 2"]
    assert any(s == "List Bullet" and t.startswith("Pending: Draft the outbox schema") for s, t in styled)
    facts = {row.cells[0].text: row.cells[1].text for row in doc.tables[0].rows}
    assert facts["Status"] == "Completed" and facts["Rounds"] == "2"


def test_a_stranger_gets_no_report_and_the_discussion_file_stays(finished, people, client):
    client.force_login(people["stranger"])
    assert client.get(f"/api/discussions/{finished.pk}/export?format=docx").status_code == 404
    client.force_login(people["viewer"])
    assert client.get(f"/api/discussions/{finished.pk}/export?format=md").content.decode().startswith("<!-- convene discussion file v1 -->")


def test_a_markdown_scope_keeps_the_report_s_structure(finished, people, client):
    Room.objects.filter(pk=finished.pk).update(topic="# Goals\n\n- ship **safely**\n- <img src=x onerror=alert(1)>")
    client.force_login(people["manager"])
    text = client.get(f"/api/discussions/{finished.pk}/export?format=minutes").content.decode()
    facts, rest = text.split("## Scope", 1)
    assert "- **Status:** Completed" in facts and "- **Manager:** reporter" in facts  # the facts stay one list
    scope = rest.split("## Still open", 1)[0]
    assert "### Goals" in scope and "- ship **safely**" in scope  # its heading below the report's own
    assert "&lt;img src=x onerror=alert(1)" in scope and "<img" not in text  # written out as text
    assert [line for line in text.splitlines() if line.startswith("# ")] == ["# Workspace report: Billing migration"]
    doc = Document(io.BytesIO(client.get(f"/api/discussions/{finished.pk}/export?format=docx").content))
    cell = {row.cells[0].text: row.cells[1] for row in doc.tables[0].rows}["Scope"]
    assert "#" not in cell.text and "**" not in cell.text and "ship safely" in cell.text
    assert any(run.bold and run.text == "safely" for p in cell.paragraphs for run in p.runs)
    assert [p.text for p in doc.paragraphs if p.style.name == "Heading 1"] == ["Still open", "Tasks", "Rounds", "Agents"]


def test_what_people_and_agents_wrote_keeps_the_markdown_report_s_structure(finished, people, client):
    """A narrative's raw HTML is written out as text, as in the scope; a task, a key decision, a next step or an
    open question with line breaks stays one item of its list instead of ending it (a heading of its own)."""
    narrative = Narrative.objects.get(room=finished, round=1)
    Narrative.objects.filter(pk=narrative.pk).update(
        content="Outbox first.\n\n<img src=x onerror=alert(1)>", key_decisions=["Ship it\n# Not a heading"],
        next_steps=["Ask <b>finance</b>"])
    finished.tasks.update(title="Draft the schema\n\n## Sneaky heading")
    finished.observations.filter(content="Who signs off the invoice totals?").update(content="Who signs off?\n\n# Loud")
    client.force_login(people["manager"])
    text = client.get(f"/api/discussions/{finished.pk}/export?format=minutes").content.decode()
    assert "<img" not in text and "<b>" not in text
    assert "&lt;img src=x onerror=alert(1)>" in text and "Ask &lt;b>finance&lt;/b>" in text
    assert "- Ship it # Not a heading" in text and "(round 2): Who signs off? # Loud" in text
    assert "- Pending: Draft the schema ## Sneaky heading (priority 5, " in text
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert not any("Not a heading" in h or "Sneaky" in h or "Loud" in h for h in headings)
