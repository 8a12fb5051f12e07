"""Small text helpers of the rehearsal model: the label, shortening, gists, seeded picks."""
import hashlib
import json
import re

from facilitation.deliberation.literal import plain_text
from facilitation.deliberation.summaries import gist, prose_lines

LABEL = "[Offline rehearsal - not written by a language model]"

VOTES = ("READY", "CHANGES", "REJECT")


def digest(*parts) -> int:
    raw = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(raw.encode("utf-8")).digest()[:8], "big")


def short(text: str, limit: int = 110) -> str:
    text = " ".join(str(text or "").split()).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.")
    return cut + "..."


def subject(topic: str) -> str:
    """A short form of the topic that reads well inside quotes and in a heading: its first sentence as
    text, without the topic's Markdown (a ``# Heading`` line is that sentence, ``**bold**`` the word)."""
    text = plain_text(topic)
    if not text:
        return "the topic"
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return short(first.rstrip(".!"), 90)


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(name or "").lower()).strip("-") or "someone"


def _plain_lines(content: str) -> list[str]:
    """The prose lines of a turn: no label, markers, headings, fences or diagram code."""
    return prose_lines(content)


def gist_of(content: str, limit: int = 140) -> str:
    return gist(content, limit)


# Emphasis and code marks, and an @mention, which keeps its underscores (``@_bot``, ``@ana_b``).
_IDEA_MARKS = re.compile(r"((?<![\w@.`/])@[A-Za-z0-9_-]+)|[*_`]")


def ideas_in(content: str) -> list[str]:
    ideas = []
    for line in _plain_lines(content):
        if line.startswith(("- ", "* ")):
            text = _IDEA_MARKS.sub(lambda m: m.group(1) or "", line[2:]).strip()
            text = re.split(r"(?<=[.!?:])\s", text, maxsplit=1)[0].rstrip(":")
            if text:
                ideas.append(short(text, 90))
    return ideas


def vote_of(point: dict) -> str | None:
    value = str(point.get("value") or point.get("text") or "").strip().upper()
    for vote in VOTES:
        if value.startswith(vote):
            return vote
    return None


def seeded_pick(options, seed: int, salt: int = 0):
    return options[(seed + salt * 7919) % len(options)] if options else None


def quote(text: str, limit: int = 100) -> str:
    """Someone's words for use inside double quotes: single quotes inside, no closing full stop."""
    text = short(str(text or "").replace('"', "'"), limit)
    return text[:-1] if text.endswith(".") and not text.endswith("...") else text


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


_QUOTE_ENDS_SENTENCE = re.compile(r'"([^"\n]*?[^.!?"\n])" (?=[A-Z])')
_LOWER_START = re.compile(r"(?<=[.!?]) ([a-z])")
_DOUBLE_STOP = re.compile(r'([.!?])"([.,?!])')


def tidy(text: str) -> str:
    """Clean punctuation: a quotation that ends a sentence gets its full stop inside
    (``"...badly." Which``, never ``badly.". Which``), no stop after a quotation that
    already has one, and every sentence starts with a capital letter."""
    out = []
    for line in str(text).split("\n"):
        line = _QUOTE_ENDS_SENTENCE.sub(lambda m: f'"{m.group(1)}." ', line)
        line = _DOUBLE_STOP.sub(r'\1"', line)
        line = _LOWER_START.sub(lambda m: " " + m.group(1).upper(), line)
        out.append(line)
    return "\n".join(out)
