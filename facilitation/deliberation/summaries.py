"""Rolling summaries of finished turns, written cheaply (extractively, no model call).

Turns are summarised in fixed chunks of ``chunk`` turns once they are older than the
last ``keep`` turns, so a chunk's summary never changes once written: prompts that
carry them stay append-only and cache well. Each turn becomes one short line: who
spoke in which round, the gist of what they said, the items they raised (by their
room-state ids) and their vote.
"""
import re
from functools import lru_cache

from facilitation.deliberation.markers import parse_markers

OFFLINE_LABEL = "[Offline rehearsal - not written by a language model]"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
# Emphasis, code and quote marks, and an @mention (read as markers reads one: its alias may start with a digit, "-" or
# "_"), so that a gist names the agent by its alias as written without mentioning it again.
_MARKS = re.compile(r"(?<![\w@.`/])@([A-Za-z0-9_-]+)|[*_`>]")


def clip(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    if len(text) <= limit:
        return text
    return text[: limit - 3].rsplit(" ", 1)[0].rstrip(",;:.") + "..."


def prose_lines(content: str) -> list[str]:
    """The prose lines of a turn: no offline label, marker lines, headings, fences or code."""
    marker_lines = {m["line"] for m in parse_markers(content) if m.get("type") != "mention" and "line" in m}
    lines, fenced = [], False
    for number, line in enumerate(str(content or "").splitlines()):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not stripped or stripped == OFFLINE_LABEL or stripped.startswith("#") or number in marker_lines:
            continue
        lines.append(stripped)
    return lines


@lru_cache(maxsize=2048)  # older turns are summarised again at every step
def gist(content: str, limit: int = 140) -> str:
    """The first real sentence of a turn (at least four words), shortened."""
    for line in prose_lines(content):
        text = _MARKS.sub(lambda m: m.group(1) or "", line).strip(" -")
        if len(text.split()) >= 4:
            return clip(_SENTENCE_END.split(text, maxsplit=1)[0], limit)
    return ""


def split_turns(count: int, *, chunk: int, keep: int) -> int:
    """How many of ``count`` turns are summarised (a multiple of ``chunk``, leaving at least ``keep``)."""
    if chunk <= 0 or count <= keep:
        return 0
    return ((count - keep) // chunk) * chunk


def turn_line(turn: dict, raised: list[str], vote: str = "") -> str:
    """One turn in one line. ``turn``: {round, speaker, content, status}."""
    who = f"Round {turn.get('round')}, {turn.get('speaker') or 'someone'}"
    if turn.get("passed"):
        return f"- {who}: passed."
    if turn.get("status", "ok") != "ok" or not str(turn.get("content") or "").strip():
        return f"- {who}: no answer ({str(turn.get('status') or 'empty').replace('_', ' ')})."
    line = f"- {who}: {gist(turn.get('content', ''), 120) or 'spoke briefly'}"
    extras = []
    if raised:
        extras.append("raised " + ", ".join(raised))
    if vote:
        extras.append(f"voted {vote}")
    return line + (f" ({'; '.join(extras)})" if extras else "")


def chunk_summary(turns: list[dict], raised_by_seq: dict, votes_by_seq: dict) -> str:
    """The summary of one chunk of turns (each {seq, round, speaker, content, status})."""
    first, last = turns[0].get("round"), turns[-1].get("round")
    head = f"Rounds {first}-{last}:" if first != last else f"Round {first}:"
    lines = [turn_line(t, raised_by_seq.get(t.get("seq"), []), votes_by_seq.get(t.get("seq"), "")) for t in turns]
    return "\n".join([head, *lines])
