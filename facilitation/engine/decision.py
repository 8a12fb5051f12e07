"""Parsing and validating the facilitator's decision, with deterministic fallbacks.

The facilitator answers with a JSON object ``{decision, nextParticipantId, question,
reasoning, progress?}``. Fences and prose around it are tolerated. Anything invalid
falls back: the opening to the first speaking seat with a generic question; an
evaluation to round-robin while rounds remain and to synthesis when they do not.
The reason of a fallback is kept on the decision.
"""
import json
import re
from dataclasses import dataclass, field

GENERIC_OPENING = "To open the discussion: what is your view of the topic, and what matters most in it?"
GENERIC_FOLLOW_UP = "Building on what has been said so far, what would you add, challenge or refine?"


@dataclass
class Decision:
    decision: str  # continue | synthesize
    next_participant_id: int | None
    question: str
    reasoning: str
    fallback: str | None = None
    progress: dict = field(default_factory=dict)

    def as_payload(self) -> dict:
        return {
            "decision": self.decision,
            "nextParticipantId": self.next_participant_id,
            "question": self.question,
            "reasoning": self.reasoning,
            "fallback": self.fallback,
            "progress": self.progress,
        }


_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)


def extract_json(text: str) -> dict | None:
    """The object between the first '{' and the last '}', after removing code fences."""
    if not isinstance(text, str):
        return None
    body = _FENCE.sub("", text)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(body[start:end + 1])
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _as_int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def fallback_decision(*, opening: bool, speaking_ids: list[int], last_id: int | None, rounds_left: int, reason: str) -> Decision:
    if not opening and rounds_left <= 0:
        return Decision("synthesize", None, "", "No rounds remain, so the discussion moves to synthesis.", fallback=reason)
    if opening or last_id not in speaking_ids:
        nxt = speaking_ids[0]
    else:
        nxt = speaking_ids[(speaking_ids.index(last_id) + 1) % len(speaking_ids)]
    question = GENERIC_OPENING if opening else GENERIC_FOLLOW_UP
    why = "First active participant opens." if opening else "Round-robin to the next participant."
    return Decision("continue", nxt, question, why, fallback=reason)


def parse_decision(text: str, *, speaking_ids: list[int], opening: bool, rounds_left: int, last_id: int | None = None) -> Decision:
    """A valid decision from the facilitator's text, or the deterministic fallback."""
    def fall(reason: str) -> Decision:
        return fallback_decision(opening=opening, speaking_ids=speaking_ids, last_id=last_id, rounds_left=rounds_left, reason=reason)

    data = extract_json(text)
    if data is None:
        return fall("unparsable")
    decision = str(data.get("decision", "")).strip().lower()
    reasoning = str(data.get("reasoning") or "").strip()
    progress = data.get("progress") if isinstance(data.get("progress"), dict) else {}
    if decision not in ("continue", "synthesize"):
        return fall("invalid_decision")
    if not opening and rounds_left <= 0:
        return Decision("synthesize", None, "", reasoning or "No rounds remain.", fallback=None if decision == "synthesize" else "rounds_exhausted", progress=progress)
    if decision == "synthesize":
        if opening:
            return fall("synthesize_at_opening")
        return Decision("synthesize", None, "", reasoning, progress=progress)
    nxt = _as_int(data.get("nextParticipantId"))
    question = str(data.get("question") or "").strip()
    if nxt not in speaking_ids:
        return fall("invalid_participant")
    if not question:
        return fall("missing_question")
    return Decision("continue", nxt, question[:2000], reasoning[:4000], progress=progress)
