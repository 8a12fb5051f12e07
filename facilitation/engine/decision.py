"""Reading and validating the facilitator's decision, with deterministic fallbacks.

The facilitator answers with a JSON object ``{decision, nextParticipantId, question,
reasoning, progress?}`` (a tool call's input, a JSON-schema answer or plain text).
Fences and prose around it are tolerated. ``read_decision`` says what is wrong with an
answer (so the runner can ask once more with the error); ``parse_decision`` always
returns a usable decision:

- a speaker named by name or alias (any casing, with or without ``@``) instead of its
  id is salvaged, and the salvage is noted as a correction;
- when only the speaker is invalid the question is kept and the next speaking seat in
  order gets it (the guardrails may pick a better one);
- anything else falls back: the opening to the first speaking seat with a generic
  question; an evaluation to round-robin while rounds remain and to synthesis when they
  do not. The reason is kept on the decision.

Nothing here raises on any input, and no speaker outside ``speaking_ids`` is ever returned.
"""
import json
import re
from dataclasses import dataclass, field

GENERIC_OPENING = "To open the discussion: what is your view of the topic, and what matters most in it?"
GENERIC_FOLLOW_UP = "Building on what has been said so far, what would you add, challenge or refine?"
QUESTION_LIMIT = 2000
REASONING_LIMIT = 4000
SPEAKER_KEYS = ("nextParticipantId", "nextParticipant", "next_participant_id", "nextSpeaker", "nextSpeakerId", "speaker", "next")


@dataclass
class Decision:
    decision: str  # continue | synthesize
    next_participant_id: int | None
    question: str
    reasoning: str
    fallback: str | None = None
    progress: dict = field(default_factory=dict)
    #: What the engine changed and why: [{"rule", "reason", ...}], shown in the timeline.
    corrections: list = field(default_factory=list)

    def as_payload(self) -> dict:
        return {
            "decision": self.decision,
            "nextParticipantId": self.next_participant_id,
            "question": self.question,
            "reasoning": self.reasoning,
            "fallback": self.fallback,
            "progress": self.progress,
            "corrections": list(self.corrections),
        }


@dataclass
class DecisionRead:
    """What could be read from an answer: a decision, or the error to report back."""

    decision: Decision | None = None
    error: str = ""  # a sentence for the model; empty when the decision is valid
    code: str = ""  # unparsable | invalid_decision | synthesize_at_opening | missing_question | invalid_participant
    kept_question: str = ""  # the question, when only the speaker was wrong
    reasoning: str = ""
    progress: dict = field(default_factory=dict)
    corrections: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.decision is not None and not self.error


_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)
_MAX_STARTS = 20


def extract_json(text) -> dict | None:
    """The JSON object in ``text``: the whole text, the span from the first '{' to the last '}',
    or the first object that parses from one of the first few '{' (code fences removed)."""
    if not isinstance(text, str):
        return None
    body = _FENCE.sub("", text).strip()
    candidates = [body]
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        candidates.append(body[start:end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    position, tries = body.find("{"), 0
    while position >= 0 and tries < _MAX_STARTS:
        tries += 1
        try:
            value, _ = decoder.raw_decode(body, position)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        position = body.find("{", position + 1)
    return None


def _text(value, limit: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        try:
            value = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
        except (TypeError, ValueError, RecursionError):
            return ""
    return value.strip()[:limit]


def resolve_speaker(value, speaking_ids: list[int], names: dict | None = None) -> tuple[int | None, bool]:
    """(seat id, salvaged): an id as given, or a seat found by name or alias in any casing.

    ``names`` maps lower-cased names and aliases to seat ids. ``salvaged`` is True when the
    value was not a plain id. Only ids in ``speaking_ids`` are ever returned.
    """
    if isinstance(value, bool) or value is None:
        return None, False
    if isinstance(value, int):
        return (value, False) if value in speaking_ids else (None, False)
    if isinstance(value, float) and value.is_integer():
        return (int(value), False) if int(value) in speaking_ids else (None, False)
    if not isinstance(value, str):
        return None, False
    text = value.strip().strip("\"'").strip()
    if text.isdigit():
        number = int(text)
        return (number, False) if number in speaking_ids else (None, False)
    names = names or {}
    candidates = [text, text.lstrip("@").strip()]
    head = re.match(r"^@?(.*?)\s*[\[(]", text)
    if head and head.group(1):
        candidates.append(head.group(1).strip())
    for candidate in candidates:
        seat = names.get(candidate.lower())
        if seat in speaking_ids:
            return seat, True
    found = re.search(r"\bid\s*[:#]?\s*(\d+)", text, re.IGNORECASE)
    if found and int(found.group(1)) in speaking_ids:
        return int(found.group(1)), True
    return None, False


def read_decision(text, *, speaking_ids: list[int], opening: bool, rounds_left: int, names: dict | None = None) -> DecisionRead:
    """Read an answer; a valid decision, or what is wrong with it (never raises)."""
    data = extract_json(text)
    if data is None:
        return DecisionRead(code="unparsable", error="The answer contains no JSON object.")
    decision = _text(data.get("decision"), 40).lower()
    reasoning = _text(data.get("reasoning"), REASONING_LIMIT)
    progress = data.get("progress") if isinstance(data.get("progress"), dict) else {}
    base = {"reasoning": reasoning, "progress": progress}
    if decision not in ("continue", "synthesize"):
        return DecisionRead(code="invalid_decision", error=f'"decision" must be "continue" or "synthesize", not {json.dumps(decision)}.', **base)
    if not opening and rounds_left <= 0:
        fallback = None if decision == "synthesize" else "rounds_exhausted"
        return DecisionRead(Decision("synthesize", None, "", reasoning or "No rounds remain.", fallback=fallback, progress=progress), **base)
    if decision == "synthesize":
        if opening:
            return DecisionRead(code="synthesize_at_opening", error="The opening must choose a first speaker and ask a question; it cannot synthesize.", **base)
        return DecisionRead(Decision("synthesize", None, "", reasoning, progress=progress), **base)
    question = _text(data.get("question"), QUESTION_LIMIT)
    raw = next((data[k] for k in SPEAKER_KEYS if k in data and data[k] not in (None, "")), None)
    seat, salvaged = resolve_speaker(raw, speaking_ids, names)
    if not question:
        return DecisionRead(code="missing_question", error='"question" is empty: ask the next speaker a focused question.', **base)
    if seat is None:
        valid = ", ".join(str(i) for i in speaking_ids)
        return DecisionRead(code="invalid_participant", kept_question=question,
                            error=f'"nextParticipantId" {json.dumps(raw, default=str)[:80]} is not a speaking participant; choose one of: {valid}.', **base)
    corrections = []
    if salvaged:
        corrections.append({"rule": "speaker_named", "reason": f"The decision named its speaker as {json.dumps(raw, default=str)[:80]}; read as seat {seat}."})
    return DecisionRead(Decision("continue", seat, question, reasoning, progress=progress, corrections=corrections), **base, corrections=corrections)


def fallback_decision(*, opening: bool, speaking_ids: list[int], last_id: int | None, rounds_left: int, reason: str,
                      question: str = "") -> Decision:
    """The deterministic decision when the facilitator's answer cannot be used."""
    if not speaking_ids:
        return Decision("synthesize", None, "", "Nobody is left who can speak, so the discussion moves to synthesis.", fallback=reason)
    if not opening and rounds_left <= 0:
        return Decision("synthesize", None, "", "No rounds remain, so the discussion moves to synthesis.", fallback=reason)
    if opening or last_id not in speaking_ids:
        nxt = speaking_ids[0]
    else:
        nxt = speaking_ids[(speaking_ids.index(last_id) + 1) % len(speaking_ids)]
    if question:
        return Decision("continue", nxt, question, "The facilitator's question is kept; the next participant in order takes it.", fallback=reason)
    question = GENERIC_OPENING if opening else GENERIC_FOLLOW_UP
    why = "First active participant opens." if opening else "Round-robin to the next participant."
    return Decision("continue", nxt, question, why, fallback=reason)


def decide_from(read: DecisionRead, *, speaking_ids: list[int], opening: bool, rounds_left: int, last_id: int | None) -> Decision:
    """The read decision, or the fallback for what was wrong with it (keeping the question when only the speaker was)."""
    if read.ok:
        return read.decision
    decision = fallback_decision(opening=opening, speaking_ids=speaking_ids, last_id=last_id, rounds_left=rounds_left,
                                 reason=read.code or "unparsable", question=read.kept_question)
    if read.kept_question and speaking_ids and decision.decision == "continue":
        decision.reasoning = read.reasoning or decision.reasoning
        decision.progress = read.progress
    return decision


def parse_decision(text, *, speaking_ids: list[int], opening: bool, rounds_left: int, last_id: int | None = None,
                   names: dict | None = None) -> Decision:
    """A usable decision from the facilitator's text: the valid one, or the deterministic fallback."""
    read = read_decision(text, speaking_ids=speaking_ids, opening=opening, rounds_left=rounds_left, names=names)
    return decide_from(read, speaking_ids=speaking_ids, opening=opening, rounds_left=rounds_left, last_id=last_id)
