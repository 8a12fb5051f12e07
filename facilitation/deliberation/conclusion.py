"""Checking a conclusion before it is accepted (pure).

Every decision on record, every open concern and question, and every standing REJECT
must be accounted for in the conclusion, as decided or as unresolved. An item counts as
accounted for when one line of the conclusion takes it up (half of its significant
words, or its whole text when it is short) or names it by its id (``C2``). A REJECT
counts when a line names the voter together with the word "reject".
"""
import re

from facilitation.deliberation.literal import escape_inline
from facilitation.deliberation.state import RoomState, takes_up


def required_items(state: RoomState) -> list[dict]:
    """What a conclusion must account for: {id, kind, by, text}."""
    items = [{"id": i.id, "kind": i.kind, "by": i.speaker, "text": i.text} for i in state.decisions]
    items += [{"id": i.id, "kind": i.kind, "by": i.speaker, "text": i.text} for i in state.open_concerns + state.open_questions]
    items += [{"id": "", "kind": "reject", "by": v.speaker, "text": v.text or "REJECT"} for v in state.standing_rejects]
    return items


# A backslash before ASCII punctuation (Markdown's escape: a name quoted as written, ``Ann\_Lee``) is read away.
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def _lines(text: str) -> list[str]:
    return [_ESCAPED.sub(r"\1", line.strip()) for line in str(text or "").splitlines() if line.strip()]


def accounted_for(item: dict, lines: list[str]) -> bool:
    if item["kind"] == "reject":
        who = str(item.get("by") or "").lower()
        return any(who and who in line.lower() and "reject" in line.lower() for line in lines)
    if item.get("id") and any(re.search(rf"\b{re.escape(item['id'])}\b", line) for line in lines):
        return True
    return any(takes_up(line, item["text"], 0.5) for line in lines)


def omissions(conclusion: str, state: RoomState) -> list[dict]:
    """The required items the conclusion does not account for."""
    lines = _lines(conclusion)
    return [item for item in required_items(state) if not accounted_for(item, lines)]


KIND_WORDS = {"decision": "Decision", "concern": "Concern", "question": "Question", "reject": "REJECT vote"}


def with_gaps(conclusion: str, gaps: list[dict]) -> str:
    """The conclusion with the items it still leaves out listed at the end, their words and speakers as
    written (escaped: a participant's ``**`` or ``<b>`` is not this list's formatting)."""
    if not gaps:
        return conclusion
    lines = ["", "## Not covered by this conclusion", ""]
    for gap in gaps:
        label = KIND_WORDS.get(gap["kind"], gap["kind"])
        ref = f" {gap['id']}" if gap.get("id") else ""
        by = escape_inline(gap.get("by") or "") or "unattributed"
        lines.append(f"- {label}{ref} ({by}): {escape_inline(gap['text'])}")
    return conclusion.rstrip() + "\n" + "\n".join(lines) + "\n"
