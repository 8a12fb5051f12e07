"""A workspace's report, for its manager and anyone who may view it: what each round came to (its
narrative as it stands, key decisions, blockers, next steps), the tasks, what is still open and what
the agents spent. As Markdown (``export?format=minutes``) and as a Word document (``format=docx``).
In the Markdown report what people and agents wrote keeps the report's outline, as in a discussion's
minutes: a narrative's headings move below the round's, raw HTML is written out as text, and an item of
a list (a task, a decision, an open question) stays one line of it.
"""
import io
from dataclasses import dataclass, field

from facilitation.exports.docx import new_document, xml_safe
from facilitation.exports.markdown import written
from facilitation.exports.markdown_docx import add_markdown, fill_cell, inert_html
from facilitation.exports.minutes import when
from facilitation.wording import counted
from facilitation.workspace.context import unanswered
from rooms.models import Narrative, Observation, Room, Seat, TaskAssignment, Turn

ENDED_BY = {Turn.EndedBy.MANAGER: "ended by the manager", Turn.EndedBy.POLICY: "ended by itself",
            Turn.EndedBy.SCOPE: "ended when the scope closed"}
REHEARSAL_NOTICE = ("Offline rehearsal: some or all of this text was produced by the offline rehearsal model, "
                    "not by a language model. It shows how the workspace runs; it is not real advice.")
TASK_STATES = {"pending": "Pending", "claimed": "Claimed", "in_progress": "In progress", "completed": "Completed"}


@dataclass
class RoundPart:
    number: int
    ended: str  # "" while the round is open
    observations: int
    narrative: str = ""
    edited: bool = False
    decisions: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)


@dataclass
class Report:
    title: str
    scope: str
    status: str
    manager: str
    started: str
    ended: str
    spent: str
    rehearsal: bool
    rounds: list[RoundPart]
    tasks: list[str]
    open_items: list[str]
    agents: list[str]


def _tokens(n: int) -> str:
    return f"{n:,} token" + ("" if n == 1 else "s")


def _item(o: Observation) -> str:
    return f"{o.author_name} (round {o.round}): {o.content}"


def collect(room: Room) -> Report:
    turns = {t.number: t for t in Turn.objects.filter(room=room)}
    narratives = {n.round: n for n in Narrative.objects.filter(room=room)}
    typed = Observation.objects.filter(room=room).exclude(event_type="")
    blockers = {o.pk: o for o in typed.filter(event_type=Observation.EventType.BLOCKER)}
    rounds = []
    for number in sorted(turns):
        turn, n = turns[number], narratives.get(number)
        part = RoundPart(number, ENDED_BY.get(turn.ended_by, "ended") if turn.ended_at else "",
                         turn.event_count if turn.ended_at else typed.filter(round=number).count())
        if n is not None:
            part.narrative, part.edited = n.content, n.edited_at is not None
            part.decisions, part.next_steps = list(n.key_decisions or []), list(n.next_steps or [])
            part.blockers = [_item(blockers[b]) for b in n.blockers or [] if b in blockers]
        rounds.append(part)
    seats = list(Seat.objects.filter(room=room).select_related("agent", "user").order_by("position", "id"))
    names = {s.pk: s.display_name for s in seats}
    tasks = []
    for t in TaskAssignment.objects.filter(room=room).order_by("status", "-priority", "id"):
        who = names.get(t.claimed_by_id) and f"claimed by {names[t.claimed_by_id]}" or (
            names.get(t.assignee_id) and f"assigned to {names[t.assignee_id]}") or "nobody's yet"
        tasks.append(f"{TASK_STATES.get(t.status, t.status)}: {t.title} (priority {t.priority}, {who})")
    open_items = [f"{o.event_type.capitalize()} from {_item(o)}" for o in unanswered(
        room, Observation.EventType.QUESTION, Observation.EventType.BLOCKER).order_by("seq")]
    agents = [f"{s.display_name}: {_tokens(s.tokens_used)}" for s in seats
              if s.agent_id is not None and s.role != Seat.Role.FACILITATOR]
    limits = [_tokens(room.budget_tokens) if room.budget_tokens is not None else "",
              f"${room.budget_usd:.2f}" if room.budget_usd is not None else ""]
    limits = [x for x in limits if x]
    spent = f"{_tokens(room.tokens_used)} (${room.cost_usd:.2f})" + (
        f" of a budget of {' and '.join(limits)}" if limits else "")
    rehearsal = (typed.filter(provider="rehearsal").exists()
                 or Narrative.objects.filter(room=room, provider="rehearsal").exists())
    return Report(room.name, room.topic, room.get_status_display(), room.owner.get_username() if room.owner_id else "-",
                  when(room.started_at), when(room.ended_at), spent, rehearsal, rounds, tasks, open_items, agents)


def _round_heading(part: RoundPart) -> str:
    state = part.ended or "open"
    return f"Round {part.number} ({state}; {counted(part.observations, 'observation')})"


def _facts(r: Report) -> list[tuple[str, str]]:
    """The report's facts; the scope (the topic, Markdown people wrote) is shown apart from them: in the Markdown
    report as a section of its own, in the .docx as a cell with its formatting rendered."""
    return [("Status", r.status), ("Rounds", str(len(r.rounds))), ("Manager", r.manager),
            ("Started", r.started), ("Ended", r.ended), ("Spent", r.spent)]


def _one_line(text: str) -> str:
    """An item of one of the report's lists (a task, a decision, an open question...) as one line of it: its
    line breaks would end the list (a ``# ...`` line of it a heading of the report), its raw HTML is text."""
    return inert_html(" ".join(text.split()))


def render_markdown(room: Room) -> str:
    r = collect(room)
    out = [f"# Workspace report: {r.title}", ""]
    if r.rehearsal:
        out += [f"_{REHEARSAL_NOTICE}_", ""]
    out += [f"- **{label}:** {value}" for label, value in _facts(r)] + [""]
    out += ["## Scope", "", written(r.scope, 2) or "-", ""]
    out += ["## Still open", ""] + ([f"- {_one_line(item)}" for item in r.open_items] or ["Nothing: every question and blocker has an answer."]) + [""]
    out += ["## Tasks", ""] + ([f"- {_one_line(t)}" for t in r.tasks] or ["No tasks."]) + [""]
    out += ["## Rounds", ""]
    for part in r.rounds:
        out += [f"### {_round_heading(part)}", ""]
        if not part.narrative:
            out += ["No narrative yet." if part.ended else "This round is still open.", ""]
            continue
        out += [written(part.narrative, 3), ""]
        if part.edited:
            out += ["_Edited by the manager._", ""]
        for title, items in (("Key decisions", part.decisions), ("Blockers", part.blockers), ("Next steps", part.next_steps)):
            if items:
                out += [f"**{title}**", ""] + [f"- {_one_line(i)}" for i in items] + [""]
    out += ["## Agents", ""] + ([f"- {_one_line(a)}" for a in r.agents] or ["No agents."]) + [""]
    return "\n".join(out)


def _list(doc, items: list[str], empty: str) -> None:
    if not items:
        doc.add_paragraph(empty)
    for item in items:
        doc.add_paragraph(item, style="List Bullet")


def render_docx(room: Room) -> bytes:
    r = xml_safe(collect(room))
    doc = new_document(r.title, "Workspace report")
    doc.add_heading(f"Workspace report: {r.title}", level=0)
    if r.rehearsal:
        doc.add_paragraph().add_run(REHEARSAL_NOTICE).bold = True
    table = doc.add_table(rows=0, cols=2)
    table.style = "Table Grid"
    scope = table.add_row().cells
    scope[0].text = "Scope"
    fill_cell(scope[1], r.scope)
    for label, value in _facts(r):
        cells = table.add_row().cells
        cells[0].text, cells[1].text = label, value
    doc.add_heading("Still open", level=1)
    _list(doc, r.open_items, "Nothing: every question and blocker has an answer.")
    doc.add_heading("Tasks", level=1)
    _list(doc, r.tasks, "No tasks.")
    doc.add_heading("Rounds", level=1)
    for part in r.rounds:
        doc.add_heading(_round_heading(part), level=2)
        if not part.narrative:
            doc.add_paragraph("No narrative yet." if part.ended else "This round is still open.")
            continue
        add_markdown(doc, part.narrative, heading_base=3)
        if part.edited:
            doc.add_paragraph().add_run("Edited by the manager.").italic = True
        for title, items in (("Key decisions", part.decisions), ("Blockers", part.blockers), ("Next steps", part.next_steps)):
            if items:
                doc.add_paragraph().add_run(title).bold = True
                _list(doc, items, "")
    doc.add_heading("Agents", level=1)
    _list(doc, r.agents, "No agents.")
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()
