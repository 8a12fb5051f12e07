"""A discussion as Markdown: its facts, topic, conclusion, decisions, action items and full transcript.

The topic, the conclusion and the turns are Markdown people and models wrote. The topic is a section of
its own (a list or a heading in it would otherwise end the facts' list), and headings inside the topic,
the conclusion and the turns are moved below the export's own (a conclusion's ``# Synthesis`` becomes
``### Synthesis`` under ``## Conclusion``), so the file keeps one outline. A message from a chat is plain text: it is escaped, so it reads as written. Raw
HTML in anyone's Markdown is written out as text (``inert_html``): the minutes never carry a live tag. Names, the
title, decisions, action items and a decision's question and reasoning are one line each, escaped (``_plain``).
"""
from facilitation.deliberation.literal import escape_markdown
from facilitation.exports.markdown_docx import demote_headings, inert_html
from facilitation.exports.minutes import (
    NO_ACTIONS, NO_DECISIONS, REHEARSAL_NOTICE, STATUS_TEXT, Entry, Minutes, collect, decision_line, marker_label, when,
)
from rooms.models import Room
from rooms.models.chat import written_in_a_chat

MARKDOWN_TYPE = "text/markdown"


def _plain(text) -> str:
    """A name, a title or a one-line item as written, on one line: what would be Markdown or HTML in it is escaped
    (a name like ``Dan <b>Doe</b> & *co*`` reads as typed, and no tag in it runs)."""
    return escape_markdown(" ".join(str(text or "").split()))


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.splitlines()] or [">"]


def _entry(entry: Entry) -> list[str]:
    status = STATUS_TEXT.get(entry.status, entry.status)
    flag = f" — _{status}_" if status else ""
    if entry.kind == "decision":
        lines = [f"**{_plain(entry.who)}** (facilitator decision: {_plain(decision_line(entry.data))}){flag}"]
        if entry.next_speaker:
            lines.append(f"Next speaker: {_plain(entry.next_speaker)}")
        if entry.data.get("question"):
            lines.append(f"Question: {_plain(entry.data['question'])}")
        if entry.data.get("reasoning"):
            lines.append(f"Reasoning: _{_plain(entry.data['reasoning'])}_")
        return [line + ("  " if i < len(lines) - 1 else "") for i, line in enumerate(lines)]
    if entry.kind == "synthesis":
        lines = [f"**{_plain(entry.who)}** (synthesis){flag}", ""]
        if entry.repeats_conclusion:
            return lines + ["_The conclusion, shown above._"]
        return lines + _quote(inert_html(demote_headings(entry.content, 3)))
    lines = [f"**{_plain(entry.who)}** ({_plain(entry.role)}){flag}", ""]
    content = escape_markdown(entry.content) if written_in_a_chat(entry.data) else inert_html(demote_headings(entry.content, 3))
    lines += content.splitlines() if entry.content else ["_(no response)_"]
    if entry.markers:
        lines += ["", "Markers: " + ", ".join(f"`{marker_label(m)}`" for m in entry.markers)]
    return lines


def written(text: str, below: int) -> str:
    """Someone's Markdown placed under a heading of level ``below``: its headings moved below it, its raw
    HTML written out as text."""
    return inert_html(demote_headings(text, below)).strip()


def render_minutes(m: Minutes) -> str:
    out = [f"# {_plain(m.title)}", ""]
    if m.rehearsal:
        out += [f"> **{REHEARSAL_NOTICE}**", ""]
    out += [
        f"- **Format:** {m.format}",
        f"- **Status:** {m.status} (round {m.round} of {m.max_rounds})",
        f"- **Facilitator:** {_plain(m.facilitator)}",
        "- **Participants:** " + (", ".join(f"{_plain(name)} ({_plain(role)})" for name, role in m.participants) or "-"),
        f"- **Created:** {when(m.created_at)}",
        f"- **Started:** {when(m.started_at)}",
        f"- **Ended:** {when(m.ended_at)}",
        "",
        "## Topic",
        "",
        written(m.topic, 2) or "-",
        "",
        "## Conclusion",
        "",
        written(m.conclusion, 2) if m.conclusion.strip() else "_No conclusion yet._",
        "",
        "## Decisions",
        "",
    ]
    out += [f"- {_plain(d.text)} — {_plain(d.who)}, round {d.round}" for d in m.decisions] or [NO_DECISIONS]
    out += ["", "## Action items", ""]
    out += [f"- [ ] {_plain(a.text)} — {_plain(a.who)}, round {a.round}" for a in m.action_items] or [NO_ACTIONS]
    out += ["", "## Transcript", ""]
    if not m.entries:
        out += ["_Nothing has been said yet._", ""]
    current = None
    for entry in m.entries:
        if entry.round != current:
            current = entry.round
            out += [f"### Round {current}" if current else "### Opening", ""]
        out += [f"<a id=\"seq-{entry.seq}\"></a>"] + _entry(entry) + [""]
    return "\n".join(out).rstrip() + "\n"


def render_markdown(room: Room) -> str:
    return render_minutes(collect(room))
