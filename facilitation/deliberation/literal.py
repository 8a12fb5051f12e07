"""Someone's words written into Markdown so that they render exactly as written (pure).

A chat message exported into a discussion file, or a turn's line quoted in the offline rehearsal
model's synthesis, is text a person (or another model) wrote, not Markdown the writer of the
document means: ``**this**`` must stay two asterisks either side, ``<b>`` a tag shown as text, a line
that starts with ``#`` no heading. A backslash before ASCII punctuation keeps it as written in
CommonMark (and so in markdown-it, markdown-it-py and the pages' renderer).
"""
import re

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
