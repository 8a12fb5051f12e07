"""Minutes of a discussion as a Word document (python-docx).

The topic is Markdown: in the facts' table it is rendered as the conclusion is (emphasis, code, links,
lists; its headings as bold lines), and the document's subject is the line it reads as, without marks.
"""
import dataclasses
import io
import re

from docx import Document
from django.utils import timezone
from docx.shared import Pt, RGBColor

from facilitation.deliberation.literal import plain_text
from facilitation.exports.markdown_docx import add_markdown, add_plain_text, fill_cell
from facilitation.exports.minutes import (
    NO_ACTIONS, NO_DECISIONS, REHEARSAL_NOTICE, STATUS_TEXT, Minutes, collect, decision_line, marker_label, when,
)
from rooms.models import Room
from rooms.models.chat import written_in_a_chat

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
# Characters XML 1.0 cannot hold; python-docx refuses them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_safe(value):
    if isinstance(value, str):
        return _NOT_XML.sub("", value)
    if isinstance(value, list):
        return [xml_safe(v) for v in value]
    if isinstance(value, tuple):
        return tuple(xml_safe(v) for v in value)
    if isinstance(value, dict):
        return {k: xml_safe(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: xml_safe(getattr(value, f.name)) for f in dataclasses.fields(value)})
    return value


def _facts(doc, m: Minutes) -> None:
    rows = [
        ("Format", m.format), ("Status", f"{m.status} (round {m.round} of {m.max_rounds})"),
        ("Facilitator", m.facilitator), ("Created", when(m.created_at)), ("Started", when(m.started_at)),
        ("Ended", when(m.ended_at)),
    ]
    table = doc.add_table(rows=0, cols=2)
    table.style = "Table Grid"
    topic = table.add_row().cells
    topic[0].text = "Topic"
    if m.topic.strip():
        fill_cell(topic[1], m.topic)
    else:
        topic[1].text = "-"
    for label, value in rows:
        cells = table.add_row().cells
        cells[0].text, cells[1].text = label, value


def _participants(doc, m: Minutes) -> None:
    doc.add_heading("Participants", level=1)
    if not m.participants:
        doc.add_paragraph("None.")
        return
    table = doc.add_table(rows=1, cols=2)
    table.style = "Table Grid"
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Name", "Role"
    for name, role in m.participants:
        cells = table.add_row().cells
        cells[0].text, cells[1].text = name, role


def _items(doc, title: str, items, empty: str, prefix: str = "") -> None:
    doc.add_heading(title, level=1)
    if not items:
        doc.add_paragraph(empty)
    for item in items:
        doc.add_paragraph(f"{prefix}{item.text} ({item.who}, round {item.round})", style="List Bullet")


def _transcript(doc, m: Minutes) -> None:
    doc.add_heading("Transcript", level=1)
    if not m.entries:
        doc.add_paragraph("Nothing has been said yet.")
    current = None
    for e in m.entries:
        if e.round != current:
            current = e.round
            doc.add_heading(f"Round {current}" if current else "Opening", level=2)
        head = doc.add_paragraph()
        label = {"decision": f"facilitator decision: {decision_line(e.data)}", "synthesis": "synthesis"}.get(e.kind, e.role)
        head.add_run(e.who).bold = True
        head.add_run(f" ({label})")
        status = STATUS_TEXT.get(e.status, e.status)
        if status:
            head.add_run(f" — {status}").italic = True
        if e.kind == "decision":
            for name, value in (("Next speaker", e.next_speaker), ("Question", e.data.get("question")),
                                ("Reasoning", e.data.get("reasoning"))):
                if value:
                    doc.add_paragraph(f"{name}: {value}")
            continue
        if e.repeats_conclusion:
            doc.add_paragraph().add_run("The conclusion, shown above.").italic = True
        elif e.content and written_in_a_chat(e.data):
            add_plain_text(doc, e.content)
        elif e.content:
            add_markdown(doc, e.content, heading_base=3)
        else:
            doc.add_paragraph().add_run("(no response)").italic = True
        if e.markers:
            para = doc.add_paragraph()
            para.add_run("Markers: " + ", ".join(marker_label(mk) for mk in e.markers)).italic = True


def new_document(title: str, subject: str = "") -> Document:
    """An empty Word document whose properties name this export: its title and subject, Convene as its
    author, now as its date (python-docx's template carries its own author, date and comment otherwise)."""
    doc = Document()
    props, now = doc.core_properties, timezone.now()
    props.title, props.subject = title[:255], subject[:255]
    props.author = props.last_modified_by = "Convene"
    props.comments, props.keywords, props.category = "", "", ""
    props.created = props.modified = now
    props.revision = 1
    return doc


def render_minutes(m: Minutes) -> bytes:
    m = xml_safe(m)
    doc = new_document(m.title, plain_text(m.topic))
    doc.add_heading(f"Minutes: {m.title}", level=0)
    if m.rehearsal:
        run = doc.add_paragraph().add_run(REHEARSAL_NOTICE)
        run.bold = True
        run.font.size = Pt(10)
        run.font.color.rgb = RGBColor(0x9A, 0x3B, 0x00)
    _facts(doc, m)
    _participants(doc, m)
    doc.add_heading("Conclusion", level=1)
    if m.conclusion.strip():
        add_markdown(doc, m.conclusion, heading_base=2)
    else:
        doc.add_paragraph("No conclusion yet.")
    _items(doc, "Decisions", m.decisions, NO_DECISIONS)
    _items(doc, "Action items", m.action_items, NO_ACTIONS)
    _transcript(doc, m)
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def render_docx(room: Room) -> bytes:
    return render_minutes(collect(room))
