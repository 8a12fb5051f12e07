"""Exports: Markdown (conclusion + transcript) and .docx minutes, through the API and directly."""
import io
import re

import pytest
from docx import Document

from facilitation.actions import lifecycle
from facilitation.deliberation.markers import parse_markers
from facilitation.discussions.file_io import discussion_file
from facilitation.exports import render_docx, render_markdown
from facilitation.exports.minutes import ROLE_LABELS
from rooms.models import Observation, Room, Seat
from tests.docx_properties import assert_our_properties

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@pytest.fixture
def finished(room):
    """A discussion with a decision, contributions with markers, a timed-out turn and a synthesis."""
    lifecycle.do_start_discussion(room)
    seats = list(room.seats.order_by("position"))
    chair, first, second = seats[0], seats[1], seats[2]
    add = lambda seq, **kw: Observation.objects.create(room=room, seq=100 + seq, **kw)  # noqa: E731
    add(1, round=0, seat=chair, author_name=chair.display_name, author_kind="facilitator", kind="decision",
        content="Which cache?", provider="rehearsal",
        data={"decision": "continue", "nextParticipantId": first.pk, "question": "Which cache fits best?",
              "reasoning": "Start with the most concrete voice.", "fallback": None})
    text = "We should use Redis.\nDECISION: Adopt Redis as the read cache\nTODO: Benchmark eviction policies\nVOTE: READY"
    add(2, round=1, seat=first, author_name=first.display_name, kind="contribution", content=text,
        markers=parse_markers(text), provider="rehearsal")
    add(3, round=2, seat=second, author_name=second.display_name, kind="contribution", content="", status="timed_out",
        provider="rehearsal")
    conclusion = "Adopt Redis with a short TTL.\nTODO: Write the runbook"
    add(4, round=2, seat=chair, author_name=chair.display_name, author_kind="facilitator", kind="synthesis",
        content=conclusion, provider="rehearsal", data={"reason": "decided"})
    Room.objects.filter(pk=room.pk).update(status="concluded", conclusion=conclusion, round=2)
    return Room.objects.get(pk=room.pk)


def test_markdown_minutes_over_the_api(owner_api, finished):
    response = owner_api.get(f"/api/discussions/{finished.pk}/export", {"format": "minutes"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    assert response["Content-Disposition"] == f'attachment; filename="discussion-{finished.pk}-test-discussion-minutes.md"'
    text = response.content.decode()
    assert text.startswith("# Test discussion\n")
    assert "Offline rehearsal" in text
    assert "\n## Topic\n\nShould we cache?\n" in text and "- **Format:** Deliberation" in text
    assert "- **Status:** Concluded (round 2 of 3)" in text
    participants = [s.display_name for s in finished.seats.exclude(role=Seat.Role.FACILITATOR).order_by("position")]
    assert f"{participants[0]} (Participant)" in text
    conclusion = text.split("## Conclusion", 1)[1].split("## Decisions", 1)[0]
    assert "Adopt Redis with a short TTL." in conclusion
    decisions = text.split("## Decisions", 1)[1].split("## Action items", 1)[0]
    assert "Adopt Redis as the read cache" in decisions
    actions = text.split("## Action items", 1)[1].split("## Transcript", 1)[0]
    assert "- [ ] Benchmark eviction policies" in actions and "- [ ] Write the runbook" in actions
    transcript = text.split("## Transcript", 1)[1]
    assert "facilitator decision: continue" in transcript and "Which cache fits best?" in transcript
    assert f"Next speaker: {participants[0]}" in transcript
    assert "Start with the most concrete voice." in transcript
    assert "`DECISION: Adopt Redis as the read cache`" in transcript and "`VOTE READY`" in transcript
    assert "timed out, no response" in transcript
    assert transcript.index("We should use Redis.") < transcript.index("timed out") < transcript.index("(synthesis)")


def test_docx_minutes_over_the_api(owner_api, finished):
    response = owner_api.get(f"/api/discussions/{finished.pk}/export", {"format": "docx"})
    assert response.status_code == 200 and response["Content-Type"] == DOCX
    assert response["Content-Disposition"].endswith('.docx"')
    doc = Document(io.BytesIO(response.content))
    paragraphs = [p.text for p in doc.paragraphs]
    cells = [[c.text for c in row.cells] for table in doc.tables for row in table.rows]
    assert paragraphs[0] == "Minutes: Test discussion"
    assert_our_properties(doc, "Test discussion")
    assert any("Offline rehearsal" in p for p in paragraphs)
    assert ["Topic", "Should we cache?"] in cells and ["Format", "Deliberation"] in cells
    assert any(row[0] == "Facilitator" and row[1] for row in cells)
    assert any(row[0] == "Started" and row[1] != "-" for row in cells)
    participants = [(s.display_name, s.role) for s in finished.seats.exclude(role=Seat.Role.FACILITATOR).order_by("position")]
    for name, role in participants:
        assert [name, ROLE_LABELS[role]] in cells
    headings = [p.text for p in doc.paragraphs if p.style.name.startswith("Heading")]
    assert ["Participants", "Conclusion", "Decisions", "Action items", "Transcript"] == [
        h for h in headings if h in ("Participants", "Conclusion", "Decisions", "Action items", "Transcript")]
    body = "\n".join(paragraphs)
    assert "Adopt Redis with a short TTL." in body
    assert "Adopt Redis as the read cache" in body.split("Decisions", 1)[1].split("Action items", 1)[0]
    assert "Benchmark eviction policies" in body.split("Action items", 1)[1].split("Transcript", 1)[0]
    assert "Which cache fits best?" in body and "timed out, no response" in body


def test_export_defaults_to_the_discussion_file_and_rejects_unknown_formats(owner_api, room):
    response = owner_api.get(f"/api/discussions/{room.pk}/export")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")
    assert response["Content-Disposition"] == f'attachment; filename="discussion-{room.pk}-test-discussion.md"'
    assert response.content.decode() == discussion_file(room)
    minutes = owner_api.get(f"/api/discussions/{room.pk}/export", {"format": "minutes"}).content.decode()
    assert "_No conclusion yet._" in minutes and "No decision was recorded." in minutes and "Offline rehearsal" not in minutes
    bad = owner_api.get(f"/api/discussions/{room.pk}/export", {"format": "pdf"})
    assert bad.status_code == 400 and bad.json()["error"]["details"] == {"format": ["Must be md, minutes or docx."]}


def test_exports_of_an_empty_discussion(room):
    assert "Nothing has been said yet." in render_markdown(room)
    doc = Document(io.BytesIO(render_docx(room)))
    assert any("No conclusion yet." in p.text for p in doc.paragraphs)


def test_docx_survives_text_that_xml_cannot_hold(room):
    Observation.objects.create(room=room, seq=50, round=1, author_name="Ada", content="bell\x07 and tab\x0b here")
    doc = Document(io.BytesIO(render_docx(room)))
    assert any("bell and tab here" in p.text for p in doc.paragraphs)


# A conclusion as the facilitator writes it: headings, lists, bold and italics, and its own
# "Decisions" section (one item the markers also hold, one they do not, worded its own way).
SYNTHESIS = """# Synthesis: Should we cache?

The Closer closes this *deliberation* after 2 turn(s).

## Key points

- **Architect**: cache the catalogue, not the cart
- **Skeptic**: invalidation is the hard part
  - prices change hourly

## Decisions

- Adopt Redis as the read cache (Architect)
- Keep the TTL at 60 s (Skeptic)

## Next steps

1. Benchmark eviction policies
2. Write the runbook
"""


@pytest.fixture
def synthesized(finished):
    seats = list(finished.seats.order_by("position"))
    devil = seats[2]
    Seat.objects.filter(pk=devil.pk).update(role="devil_advocate")
    Observation.objects.filter(room=finished, kind="synthesis").update(content=SYNTHESIS)
    Room.objects.filter(pk=finished.pk).update(conclusion=SYNTHESIS)
    return Room.objects.get(pk=finished.pk)


def test_docx_renders_the_conclusion_as_word_headings_lists_and_runs(synthesized):
    doc = Document(io.BytesIO(render_docx(synthesized)))
    styled = [(p.style.name, p.text) for p in doc.paragraphs]
    assert ("Heading 2", "Synthesis: Should we cache?") in styled
    assert ("Heading 3", "Key points") in styled and ("Heading 3", "Next steps") in styled
    assert ("List Bullet", "Architect: cache the catalogue, not the cart") in styled
    assert ("List Bullet 2", "prices change hourly") in styled
    assert ("List Number", "Benchmark eviction policies") in styled and ("List Number", "Write the runbook") in styled
    assert not any(text.lstrip().startswith(("#", "- ", "**")) for _, text in styled), "raw Markdown left in the minutes"
    architect = next(p for p in doc.paragraphs if p.text.startswith("Architect: cache"))
    assert [(r.text, bool(r.bold)) for r in architect.runs][:2] == [("Architect", True), (": cache the catalogue, not the cart", False)]
    intro = next(p for p in doc.paragraphs if p.text.startswith("The Closer closes"))
    assert any(r.text == "deliberation" and r.italic for r in intro.runs)

    # The conclusion once; one Decisions section, the conclusion's own folded into it.
    texts = [p.text for p in doc.paragraphs]
    assert sum("The Closer closes this" in t for t in texts) == 1
    assert "The conclusion, shown above." in texts
    assert [t for s, t in styled if s.startswith("Heading") and "decision" in t.lower()] == ["Decisions"]
    section = texts[texts.index("Decisions") + 1: texts.index("Action items")]
    assert any(t.startswith("Adopt Redis as the read cache") for t in section)
    assert any(t.startswith("Keep the TTL at 60 s") for t in section)
    assert len(section) == 2
    # Roles with their labels, never the internal values.
    cells = [c.text for table in doc.tables for row in table.rows for c in row.cells]
    assert "Devil's advocate" in cells
    assert "devil_advocate" not in "\n".join(texts + cells)


def test_markdown_shows_the_conclusion_once_with_one_decisions_section(synthesized):
    text = render_markdown(synthesized)
    assert text.count("The Closer closes this") == 1
    assert text.count("Decisions") == 1 and "None recorded" not in text
    decisions = text.split("## Decisions", 1)[1].split("## Action items", 1)[0]
    assert "- Adopt Redis as the read cache — " in decisions and "- Keep the TTL at 60 s — " in decisions
    conclusion = text.split("## Conclusion", 1)[1].split("## Decisions", 1)[0]
    assert "### Synthesis: Should we cache?" in conclusion and "#### Key points" in conclusion
    assert "(Devil's advocate)" in text and "devil_advocate" not in text
    assert "_The conclusion, shown above._" in text.split("## Transcript", 1)[1]


def test_a_conclusion_saying_no_decision_adds_nothing(finished):
    conclusion = "## Outcome\nWait and see.\n\n## Decisions\n\n- No decision was recorded.\n"
    Room.objects.filter(pk=finished.pk).update(conclusion=conclusion)
    text = render_markdown(Room.objects.get(pk=finished.pk))
    decisions = text.split("## Decisions", 1)[1].split("## Action items", 1)[0]
    assert decisions.count("- ") == 1 and "Adopt Redis as the read cache" in decisions
    assert text.count("No decision was recorded.") == 0


CHAT_TEXT = "2*3*4 is 24, **this** and _that_ stay as typed\n# 1 on my list\n- not a list\n1. not numbered\n> no quote <b>x</b> [no](link) `tick` \\ & ~x~"


def _chat_message(room):
    return Observation.objects.create(room=room, seq=500, round=1, author_name="Ben", author_kind="human", kind="contribution",
                                      content=CHAT_TEXT, data={"source": {"platform": "telegram", "messageId": "7"}})


@pytest.mark.parametrize("text", [CHAT_TEXT, "plain words", "  # indented heading\n+ plus\n10) ten", "***\n---\n===", "a\\*b"])
def test_escaped_chat_text_renders_as_written(text):
    from markdown_it import MarkdownIt

    from facilitation.exports.markdown import escape_markdown

    tokens = MarkdownIt("commonmark", {"html": False}).parse(escape_markdown(text))
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert kinds <= {"paragraph_open", "paragraph_close", "inline", "text", "text_special", "softbreak"}, kinds
    # One paragraph whose text is the message (CommonMark trims each line's outer spaces).
    written = "".join(c.content if c.type != "softbreak" else "\n" for t in tokens if t.type == "inline" for c in t.children)
    assert written == "\n".join(line.strip() for line in text.split("\n"))


def test_a_chat_message_is_exported_as_written(finished):
    _chat_message(finished)
    md = render_markdown(finished)
    participants = next(line for line in md.splitlines() if line.startswith("- **Participants:**"))
    assert participants.endswith(", Ben (Person)")  # who spoke from the chat took part too, listed once
    assert "2\\*3\\*4 is 24, \\*\\*this\\*\\* and \\_that\\_ stay as typed" in md and "\\# 1 on my list" in md
    doc = Document(io.BytesIO(render_docx(finished)))
    paragraph = next(p for p in doc.paragraphs if p.text.startswith("2*3*4"))
    assert paragraph.text == CHAT_TEXT  # line breaks kept as breaks, nothing parsed
    assert not any(r.bold or r.italic for r in paragraph.runs)
    assert not any(p.style.name.startswith(("Heading", "List", "Quote")) and "1 on my list" in p.text for p in doc.paragraphs)


HOSTILE_HTML = ("Looks fine <img src=x onerror=alert(1)> to me\n\n<script>alert(2)</script>\n\n"
                "see `<img src=y onerror=3>` then <img src=y onerror=3>\n\n> <i>quoted</i>\n\n```\n<div>code stays</div>\n```")


def _live_html(markdown: str) -> list[str]:
    """The raw HTML a renderer that passes it through would run, but the export's own ``seq`` anchors."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(markdown)
    found = [t.content for t in tokens if t.type == "html_block"]
    found += [c.content for t in tokens for c in (t.children or []) if c.type == "html_inline"]
    return [html for html in found if not re.fullmatch(r'<a id="seq-\d+"></a>|</a>|<a id="seq-\d+">', html.strip())]


def test_raw_html_in_a_comment_or_the_conclusion_is_written_out_in_the_minutes(finished):
    Observation.objects.create(room=finished, seq=501, round=2, author_name="Mia", author_kind="human", kind="contribution",
                               content=HOSTILE_HTML)
    Room.objects.filter(pk=finished.pk).update(conclusion="Agreed.\n\n<iframe src=javascript:alert(4)></iframe>")
    md = render_markdown(Room.objects.get(pk=finished.pk))
    assert len(_live_html(HOSTILE_HTML)) >= 4  # the comment as written would run
    assert _live_html(md) == []
    # The tags read as typed, and code keeps its "<".
    assert "Looks fine &lt;img src=x onerror=alert(1)> to me" in md and "&lt;script>alert(2)&lt;/script>" in md
    assert "<div>code stays</div>" in md and "&lt;iframe src=javascript:alert(4)>" in md


def test_names_and_one_line_items_in_the_minutes_read_as_written(finished):
    """A person's name from a chat, a room's name, a decision's reasoning and an action item are one line of text each:
    Markdown or HTML in them reads as typed, and no tag runs."""
    name = "Dan <b>Doe</b> & *co* <img src=x onerror=alert(1)>"
    said = "TODO: ship <i>it</i> _now_"
    Observation.objects.create(room=finished, seq=502, round=2, author_name=name, author_kind="human", kind="contribution",
                               content=said, markers=parse_markers(said))
    Room.objects.filter(pk=finished.pk).update(name="Cache <script>alert(2)</script> **review**")
    decision = Observation.objects.get(room=finished, kind="decision")
    decision.data = {**decision.data, "reasoning": "Ask <u>Dan</u> first"}
    decision.save()
    md = render_markdown(Room.objects.get(pk=finished.pk))
    assert _live_html(md) == []
    from markdown_it import MarkdownIt

    text = MarkdownIt("commonmark").render(md)
    assert "<strong>Dan &lt;b&gt;Doe&lt;/b&gt; &amp; *co* &lt;img src=x onerror=alert(1)&gt;</strong>" in text
    assert "<h1>Cache &lt;script&gt;alert(2)&lt;/script&gt; **review**</h1>" in text
    assert "Ask &lt;u&gt;Dan&lt;/u&gt; first" in text
    assert "ship &lt;i&gt;it&lt;/i&gt; _now_ — Dan &lt;b&gt;Doe&lt;/b&gt; &amp; *co*" in text  # the action item, as written


# A topic as people write it: a heading, a list, emphasis, a link, and raw HTML.
MARKDOWN_TOPIC = "\n".join([
    "# Heading line",
    "Should we use **bold** caching?",
    "",
    "## Goals",
    "- fast [reads](https://example.com/reads)",
    "- `safe` writes",
    "",
    "<img src=x onerror=alert(1)>",
    "",
    "<script>alert(2)</script>",
])


def _outline(markdown: str) -> list[tuple[str, str]]:
    """(tag, text) of every heading, and the facts' list items, in the order a renderer shows them."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark", {"html": False}).parse(markdown)
    return [(t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]


def test_the_markdown_minutes_keep_their_structure_whatever_the_topic_says(finished):
    Room.objects.filter(pk=finished.pk).update(topic=MARKDOWN_TOPIC)
    md = render_markdown(Room.objects.get(pk=finished.pk))
    outline = _outline(md)
    # The report's headings, in order; the topic's own below its "Topic" section.
    assert [h for h in outline if h[0] in ("h1", "h2")] == [
        ("h1", "Test discussion"), ("h2", "Topic"), ("h2", "Conclusion"), ("h2", "Decisions"), ("h2", "Action items"),
        ("h2", "Transcript")], outline
    assert ("h3", "Heading line") in outline and ("h4", "Goals") in outline
    # Every fact is still an item of the facts' list, right under the title (none became part of the topic).
    facts = md.split("\n\n", 2)[1] if "Offline rehearsal" not in md.split("\n\n", 2)[1] else md.split("\n\n", 3)[2]
    assert facts.startswith("- **Format:** Deliberation") and "- **Ended:**" in facts and "Topic" not in facts
    topic = md.split("## Topic", 1)[1].split("## Conclusion", 1)[0]
    assert "Should we use **bold** caching?" in topic and "- fast [reads](https://example.com/reads)" in topic
    # Its raw HTML is written out as text, as a turn's is.
    assert _live_html(md) == []
    assert "&lt;img src=x onerror=alert(1)>" in topic and "&lt;script>alert(2)&lt;/script>" in topic


def test_the_docx_minutes_render_the_topic_and_keep_it_out_of_the_outline(finished):
    Room.objects.filter(pk=finished.pk).update(topic=MARKDOWN_TOPIC)
    doc = Document(io.BytesIO(render_docx(Room.objects.get(pk=finished.pk))))
    facts = doc.tables[0]
    assert facts.rows[0].cells[0].text == "Topic"
    cell = facts.rows[0].cells[1]
    text = cell.text
    # The topic's words without its marks: no "#", "**", link syntax or list dashes.
    assert "Heading line" in text and "Should we use bold caching?" in text and "fast reads (https://example.com/reads)" in text
    assert not any(mark in text for mark in ("# ", "**", "](", "\n- ")), text
    # Its formatting as the conclusion's: bold runs, code, headings as bold lines, list items.
    paragraphs = cell.paragraphs
    assert any(r.text == "bold" and r.bold for p in paragraphs for r in p.runs)
    assert any(p.text == "Heading line" and all(r.bold for r in p.runs) for p in paragraphs)
    assert [p.text for p in paragraphs if p.style.name == "List Bullet"] == [
        "fast reads (https://example.com/reads)", "safe writes"]
    # Raw HTML is text, as typed.
    assert "<img src=x onerror=alert(1)>" in text and "<script>alert(2)</script>" in text
    # The topic's headings are not the document's: its outline is the minutes' own.
    headings = [p.text for p in doc.paragraphs if p.style.name.startswith("Heading")]
    assert "Heading line" not in headings and "Goals" not in headings
    # The subject names the topic in one clean line.
    assert doc.core_properties.subject == ("Heading line. Should we use bold caching? Goals. fast reads. safe writes. "
                                           "<img src=x onerror=alert(1)>. <script>alert(2)</script>.")


def test_a_setext_heading_in_the_topic_is_moved_below_the_report_s_too(finished):
    Room.objects.filter(pk=finished.pk).update(topic="Goals\n=====\nShip it.\n\nRisks\n-----\nNone.")
    outline = _outline(render_markdown(Room.objects.get(pk=finished.pk)))
    assert ("h3", "Goals") in outline and ("h4", "Risks") in outline
    assert [h for h in outline if h[0] == "h1"] == [("h1", "Test discussion")]


def test_the_minutes_tell_agents_of_one_name_apart_by_their_alias(finished):
    from rooms.models import Agent

    first, second = list(finished.seats.exclude(role=Seat.Role.FACILITATOR).order_by("position"))[:2]
    Agent.objects.filter(pk=first.agent_id).update(name="Architect", alias="architect")
    Agent.objects.filter(pk=second.agent_id).update(name="architect", alias="3d-architect")
    markdown = render_markdown(finished)
    participants = next(line for line in markdown.splitlines() if line.startswith("- **Participants:**"))
    assert "Architect (@architect) (Participant)" in participants and "architect (@3d-architect)" in participants
    transcript = markdown.split("## Transcript")[-1]
    assert "Architect (@architect)" in transcript and "architect (@3d-architect)" in transcript  # speakers, next speaker
    docx = Document(io.BytesIO(render_docx(finished)))
    text = "\n".join(p.text for p in docx.paragraphs) + "\n".join(c.text for t in docx.tables for r in t.rows for c in r.cells)
    assert "Architect (@architect)" in text and "architect (@3d-architect)" in text
    # a name no other agent has stays as it is
    chair = finished.seats.get(role=Seat.Role.FACILITATOR)
    assert f"{chair.display_name} (@" not in markdown
