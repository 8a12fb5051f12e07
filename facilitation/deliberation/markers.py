"""Parse the structured markers of a contribution.

A marker starts a line (after optional indentation, a list bullet ``-``/``*``/``+``,
a numbered-list prefix, a quote ``>`` or Markdown bold)::

    VOTE: READY            -> {"type": "vote", "value": "READY", "text": "READY"}
    - Q: Which cache?      -> {"type": "question", "text": "Which cache?"}
    **CONCERN:** no auth   -> {"type": "concern", "text": "no auth"}

``@alias`` mentions are found anywhere in a line, with every alias an agent can have
(an ASCII slug: letters, digits, ``-`` and ``_``, any of them first: ``@architect``,
``@3d-artist``, ``@42``, ``@_bot``). Lines inside fenced code blocks and mentions inside
inline code are ignored, and so are e-mail addresses and domain names. Items
come back in the order they appear in the text; each also carries its ``line``
(0-based). Pure Python: no Django.
"""
import re

#: Marker keyword -> item type.
MARKER_TYPES = {
    "VOTE": "vote",
    "Q": "question",
    "TODO": "todo",
    "DECISION": "decision",
    "ASSIGNED": "assigned",
    "DONE": "done",
    "CONCERN": "concern",
}
VOTE_VALUES = ("READY", "CHANGES", "REJECT")

_MARKER = re.compile(
    r"""^\s*
        (?:>\s*)*                         # quoted lines
        (?:(?:[-*+]|\d{1,3}[.)])\s+)?     # a list bullet or a number
        (?P<open>\*\*|__)?                # optional bold around the keyword
        (?P<key>VOTE|Q|TODO|DECISION|ASSIGNED|DONE|CONCERN)
        (?:(?P=open)\s*:|\s*:(?:\s*(?P=open))?)   # "**Q**:" or "**Q:**" or "Q:"
        (?P<rest>.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_VOTE_VALUE = re.compile(r"^[\s\[\(*_`]*(READY|CHANGES|REJECT)\b", re.IGNORECASE)
# An alias is a slug (``rooms.actions.catalog``: derived with slugify, or given and checked as a slug), so
# it may start with a digit, ``-`` or ``_`` as well as a letter; a mention reads the same characters.
_MENTION = re.compile(r"(?<![\w@.`/])@([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)")
_INLINE_CODE = re.compile(r"`[^`]*`")
_FENCE = re.compile(r"^\s*(```|~~~)")
_PASS = re.compile(r"^[\s`*_\"'>]*NO_RESPONSE[\s`*_\"'.!]*$", re.IGNORECASE)
#: What a participant answers to pass its turn.
PASS = "NO_RESPONSE"


def is_pass(text: str) -> bool:
    """Is this turn a pass: ``NO_RESPONSE`` and nothing else (any case, quotes, emphasis or a full stop around it)?"""
    return bool(text) and bool(_PASS.match(text))


def _clean(rest: str, bold: str | None) -> str:
    text = rest.strip()
    if bold and text.endswith(bold):  # "**VOTE: READY**"
        text = text[: -len(bold)].rstrip()
    return text


def mention_targets(line: str) -> list[str]:
    """The aliases ``@``-mentioned in one line, in order, as written (inline code left out)."""
    visible = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
    found = []
    for match in _MENTION.finditer(visible):
        alias = match.group(1)
        if "." in alias:  # a domain-like tail is part of an address, not an alias
            continue
        if not any(c.isalnum() for c in alias):  # "@-", "@__": punctuation, not a name
            continue
        found.append(alias)
    return found


def mention_forms(target: str) -> list[str]:
    """What a mention's ``target`` may name, most literal first: the alias as written (``bot_`` is an alias
    of its own), then without the dashes and underscores that may end it as punctuation (``@rob- and``)."""
    text = str(target or "").lstrip("@")
    forms = [text, text.rstrip("-_")]
    return [f for i, f in enumerate(forms) if f and f not in forms[:i]]


def _mentions(line: str, number: int) -> list[dict]:
    return [{"type": "mention", "text": alias, "target": alias, "line": number} for alias in mention_targets(line)]


def parse_markers(text: str) -> list[dict]:
    """The markers and mentions of ``text``, in reading order."""
    if not text:
        return []
    items: list[dict] = []
    in_fence = False
    for number, line in enumerate(text.splitlines()):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = _MARKER.match(line)
        if match:
            kind = MARKER_TYPES[match.group("key").upper()]
            body = _clean(match.group("rest"), match.group("open"))
            if kind == "vote":
                value = _VOTE_VALUE.match(body)
                if value:
                    vote = value.group(1).upper()
                    tail = body[value.end():].strip("*_`]) ")
                    items.append({"type": "vote", "value": vote, "text": f"{vote} {tail}".strip(), "line": number})
            elif body:
                items.append({"type": kind, "text": body, "line": number})
        items.extend(_mentions(line, number))
    return items
