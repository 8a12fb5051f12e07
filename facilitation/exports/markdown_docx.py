"""Markdown written by people and models, as Word paragraphs: real headings, list items and runs.

The text is parsed by markdown-it-py (CommonMark, raw HTML off: a ``<b>`` stays text) and
its tokens become python-docx paragraphs in the built-in styles: ``Heading N``,
``List Bullet``/``List Number`` (nested levels ``List Bullet 2``, ``3``), ``Quote``, and
bold, italic, code and struck-through runs. A line break inside a paragraph stays a line
break, because turns put one marker (``DECISION:``, ``VOTE:``) per line. In a table's cell (a topic in the
facts of the minutes) a heading is a bold line: the document's outline stays its own.
"""
import re

from docx.enum.text import WD_BREAK
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt
from markdown_it import MarkdownIt

_PARSER = MarkdownIt("commonmark", {"html": False}).enable("strikethrough")
_HTML_AWARE = MarkdownIt("commonmark")  # reads raw HTML as HTML tokens, to find it
_MONO = "Consolas"
_MAX_LIST_DEPTH = 3


def parse(text: str):
    return _PARSER.parse(text or "")


def _restart_numbering(paragraph) -> None:
    """Start a "List Number" paragraph's list again at 1 (python-docx otherwise counts on across lists)."""
    numbering = paragraph.part.numbering_part.numbering_definitions._numbering
    style = paragraph.part.styles["List Number"]
    num_pr = style.element.pPr.numPr if style.element.pPr is not None else None
    if num_pr is None or num_pr.numId is None:
        return
    abstract = numbering.num_having_numId(num_pr.numId.val).abstractNumId.val
    num = numbering.add_num(abstract)
    override = num.add_lvlOverride(ilvl=0)
    override.add_startOverride(1)
    p_pr = paragraph._p.get_or_add_pPr()
    own = p_pr.get_or_add_numPr()
    own.get_or_add_ilvl().val = 0
    own.get_or_add_numId().val = num.numId


def _add_inline(paragraph, token) -> None:
    bold = italic = strike = 0
    link = None
    for child in token.children or []:
        kind = child.type
        if kind == "strong_open":
            bold += 1
        elif kind == "strong_close":
            bold -= 1
        elif kind == "em_open":
            italic += 1
        elif kind == "em_close":
            italic -= 1
        elif kind == "s_open":
            strike += 1
        elif kind == "s_close":
            strike -= 1
        elif kind == "link_open":
            link = child.attrGet("href")
        elif kind == "link_close":
            if link:
                paragraph.add_run(f" ({link})")
            link = None
        elif kind in ("text", "code_inline", "html_inline"):
            if not child.content:
                continue
            run = paragraph.add_run(child.content)
            run.bold = bold > 0 or None
            run.italic = italic > 0 or None
            if strike:
                run.font.strike = True
            if kind == "code_inline":
                run.font.name = _MONO
        elif kind == "softbreak" or kind == "hardbreak":
            paragraph.add_run().add_break(WD_BREAK.LINE)
        elif kind == "image":
            paragraph.add_run(f"[{child.content or 'image'}]")


def _code_block(doc, text: str) -> None:
    paragraph = doc.add_paragraph(style="No Spacing")
    lines = text.rstrip("\n").split("\n")
    for i, line in enumerate(lines):
        run = paragraph.add_run(line)
        run.font.name = _MONO
        run.font.size = Pt(9)
        if i < len(lines) - 1:
            run.add_break(WD_BREAK.LINE)


def _horizontal_rule(doc) -> None:
    paragraph = doc.add_paragraph()
    border = OxmlElement("w:pBdr")
    bottom = OxmlElement("w:bottom")
    for key, value in (("w:val", "single"), ("w:sz", "6"), ("w:space", "1"), ("w:color", "auto")):
        bottom.set(qn(key), value)
    border.append(bottom)
    paragraph._p.get_or_add_pPr().append(border)


def add_markdown(doc, text: str, *, heading_base: int = 1) -> None:
    """Append ``text`` (Markdown) to ``doc`` (the document, or a table's cell); a ``#`` heading becomes
    ``Heading {heading_base}``, or a bold paragraph where there are no headings (a cell)."""
    lists: list[dict] = []  # open lists, innermost last: {"ordered": bool, "fresh": bool}
    quote = 0
    item_has_paragraph: list[bool] = []
    pending_heading = None
    for token in parse(text):
        kind = token.type
        if kind == "heading_open":
            pending_heading = min(9, heading_base + int(token.tag[1]) - 1)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            lists.append({"ordered": kind == "ordered_list_open", "fresh": True})
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            item_has_paragraph.append(False)
        elif kind == "list_item_close":
            item_has_paragraph.pop()
        elif kind == "blockquote_open":
            quote += 1
        elif kind == "blockquote_close":
            quote -= 1
        elif kind in ("fence", "code_block"):
            _code_block(doc, token.content)
        elif kind == "hr":
            _horizontal_rule(doc)
        elif kind == "inline":
            bold_line = False
            if pending_heading is not None:
                if hasattr(doc, "add_heading"):
                    paragraph = doc.add_heading(level=pending_heading)
                else:
                    paragraph, bold_line = doc.add_paragraph(), True
                pending_heading = None
            elif lists and item_has_paragraph and not item_has_paragraph[-1]:
                current = lists[-1]
                depth = min(len(lists), _MAX_LIST_DEPTH)
                style = ("List Number" if current["ordered"] else "List Bullet") + (f" {depth}" if depth > 1 else "")
                paragraph = doc.add_paragraph(style=style)
                if current["ordered"] and current["fresh"] and depth == 1:
                    _restart_numbering(paragraph)
                current["fresh"] = False
                item_has_paragraph[-1] = True
            elif lists:
                # A second paragraph inside one list item: continues the item, indented.
                paragraph = doc.add_paragraph(style="List Continue" + (f" {min(len(lists), _MAX_LIST_DEPTH)}" if len(lists) > 1 else ""))
            elif quote:
                paragraph = doc.add_paragraph(style="Quote")
            else:
                paragraph = doc.add_paragraph()
            _add_inline(paragraph, token)
            if bold_line:
                for run in paragraph.runs:
                    run.bold = True


def fill_cell(cell, text: str) -> None:
    """A table cell holding ``text`` (Markdown) rendered: its emphasis, code and links as in the body, its
    headings as bold lines, its lists as lists (instead of the cell's one paragraph of raw marks)."""
    first = cell.paragraphs[0]
    add_markdown(cell, text)
    if len(cell.paragraphs) > 1 and not first.text:
        first._element.getparent().remove(first._element)


def add_plain_text(doc, text: str) -> None:
    """Append ``text`` as written (a chat message, not Markdown): a paragraph per blank-line-separated
    block, its line breaks kept."""
    for block in re.split(r"\n\s*\n", text.strip()):
        paragraph = doc.add_paragraph()
        lines = block.split("\n")
        for i, line in enumerate(lines):
            run = paragraph.add_run(line)
            if i < len(lines) - 1:
                run.add_break()


def inert_html(text: str) -> str:
    """The same Markdown with its raw HTML written out as text: the ``<`` of every HTML block and inline tag
    becomes ``&lt;``, so a renderer shows the tag as typed instead of running it (code keeps its ``<``).
    Whatever still reads as HTML after that (a tag whose text also appears in a code span before it) loses
    every ``<`` of its lines: no tag survives."""
    lines = (text or "").split("\n")
    for token in _html_tokens("\n".join(lines)):
        if token.type == "html_block":
            _escape_lines(lines, token.map)
            continue
        for tag in (child.content for child in token.children if child.type == "html_inline"):
            line = next((i for i in range(*token.map) if tag in lines[i]), None)
            if line is None:  # a tag across lines
                _escape_lines(lines, token.map)
            else:
                lines[line] = lines[line].replace(tag, "&lt;" + tag[1:], 1)
    for token in _html_tokens("\n".join(lines)):
        _escape_lines(lines, token.map)
    return "\n".join(lines)


def _html_tokens(text: str) -> list:
    """The HTML blocks, and the inline runs holding HTML tags, with the lines they span."""
    return [t for t in _HTML_AWARE.parse(text) if t.map and (
        t.type == "html_block" or (t.type == "inline" and any(c.type == "html_inline" for c in t.children or ())))]


def _escape_lines(lines: list[str], span) -> None:
    for i in range(*span):
        lines[i] = lines[i].replace("<", "&lt;")


def demote_headings(text: str, levels: int) -> str:
    """The same Markdown with every heading ``levels`` deeper (at most ``######``). An underlined (setext)
    heading outside lists and quotes becomes the ``#`` heading of its depth, on one line."""
    lines = (text or "").split("\n")
    tokens = parse(text)
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or not token.map:
            continue
        start, end = token.map
        if token.markup.startswith("#"):
            line = lines[start]
            stripped = line.lstrip()
            depth = len(token.markup) + levels
            lines[start] = line[: len(line) - len(stripped)] + "#" * min(6, depth) + stripped[len(token.markup):]
        elif token.level == 0:  # "Title" over "=====" (level 1) or "-----" (level 2)
            depth = (1 if token.markup.startswith("=") else 2) + levels
            title = " ".join(line.strip() for line in lines[start:end - 1])
            lines[start:end] = ["#" * min(6, depth) + " " + title] + [None] * (end - start - 1)
    return "\n".join(line for line in lines if line is not None)
