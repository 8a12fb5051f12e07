"""Someone's words written into Markdown so that they render exactly as written (pure).

A chat message exported into a discussion file, or a turn's line quoted in the offline rehearsal
model's synthesis, is text a person (or another model) wrote, not Markdown the writer of the
document means: ``**this**`` must stay two asterisks either side, ``<b>`` a tag shown as text, a line
that starts with ``#`` no heading. A backslash before ASCII punctuation keeps it as written in
CommonMark (and so in markdown-it, markdown-it-py and the pages' renderer).

``plain_text`` goes the other way: Markdown someone wrote, as the one line of text it reads as (a
topic quoted in a heading or a document's properties), without its marks.
"""
import re

from markdown_it import MarkdownIt

# What CommonMark would read as Markdown inside a line, and at a line's start (a heading, a quote, a
# list item, a rule or a setext underline).
_INLINE = re.compile(r"([\\`*_\[\]<>|~&!])")
_LINE_START = re.compile(r"^(\s*)(#|>|[-+=]|\d+(?=[.)]))")


def escape_inline(text: str) -> str:
    """``text`` for use inside a line of Markdown (after a bullet, in a heading, within quotes): one
    line, its emphasis, code, links, tags and entities kept as written."""
    return _INLINE.sub(r"\\\1", " ".join(str(text or "").split()))


def escape_markdown(text: str) -> str:
    """``text`` as Markdown that renders exactly as written (``2*3*4`` stays ``2*3*4``), line by line."""
    lines = []
    for line in text.split("\n"):
        line = _INLINE.sub(r"\\\1", line)
        start = _LINE_START.match(line)
        if start:
            mark = start.group(2)
            # "1." -> "1\.": the list number's punctuation is what makes it a list
            line = (start.group(1) + mark + "\\" + line[start.end():] if mark[0].isdigit()
                    else start.group(1) + "\\" + line[len(start.group(1)):])
        lines.append(line)
    return "\n".join(lines)


# CommonMark with raw HTML off: a tag someone typed is text, and stays in the line as typed.
_READER = MarkdownIt("commonmark", {"html": False}).enable("strikethrough")
_CLOSED = re.compile(r"[.!?:;…]$")


def _inline_text(token) -> str:
    parts = []
    for child in token.children or []:
        if child.type in ("text", "text_special", "code_inline", "image"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split())


def plain_text(markdown: str) -> str:
    """``markdown`` as one line of plain text: what it says without its marks (no ``#``, ``>``, bullets,
    emphasis, code ticks or link targets; an image is its alt text, a tag typed as text stays as typed).
    Each block ends with a full stop where it had no closing punctuation of its own, so a heading and the
    paragraph under it read as two sentences: ``# Goals`` then ``Ship **it**`` is ``Goals. Ship it.``"""
    blocks = []
    for token in _READER.parse(str(markdown or "")):
        if token.type == "inline":
            text = _inline_text(token)
        elif token.type in ("fence", "code_block"):
            text = " ".join(token.content.split())
        else:
            continue
        if text:
            blocks.append(text)
    if len(blocks) > 1:
        blocks = [b if _CLOSED.search(b) else f"{b}." for b in blocks]
    return " ".join(blocks)
