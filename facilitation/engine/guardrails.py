"""Rules the engine enforces on every facilitator decision, whatever the model said.

Pure: the caller describes the room as ``Facts`` (plain ids and counts) and gets the
decision back, corrected where a rule demanded it. Each correction is appended to
``decision.corrections`` as ``{"rule", "reason", ...}`` and shows in the timeline.

- ``no_repeat``: never the same speaker twice in a row while another can speak.
- ``fair_share``: everyone who speaks is heard before anyone speaks a third time.
  With ``strict`` fairness (the Equalizer) nobody may get ahead: only the seats with
  the fewest turns may be chosen.
- ``not_speaking``: observers, absent seats and unknown ids never speak.
- ``open_objection``: no conclusion while a REJECT vote or an open concern stands
  unanswered, unless no rounds are left; instead someone else is asked to answer it.
  (When rounds or the budget run out the room concludes and the conclusion lists them
  as unresolved.)

- ``floor_request``: a seat asked for with ``@alias`` (``@all``: every speaking seat) in a
  turn or a person's comment, and not heard since, gets the floor at the next decision to
  continue when the rules above allow it; several are served in the order asked.

A replacement speaker is the one asked for with ``@alias`` when that seat may speak, otherwise the one with the fewest turns, then the fewest words, then
the next in seat order after the last speaker.
"""
from dataclasses import dataclass, field

from facilitation.engine.decision import Decision
from facilitation.wording import counted


@dataclass(frozen=True)
class Blocker:
    """Something that must be answered before the room may conclude."""

    kind: str  # reject | concern
    seat_id: int | None  # who raised it (the voter, the raiser)
    name: str
    text: str
    ref: str = ""  # the item id (C2) for concerns

    def describe(self) -> str:
        if self.kind == "reject":
            return f"{self.name}'s REJECT vote" + (f" (\"{_clip(self.text, 120)}\")" if self.text and self.text != "REJECT" else "")
        return f"{self.name}'s concern {self.ref} (\"{_clip(self.text, 140)}\")".replace("concern  (", "concern (")


@dataclass(frozen=True)
class Facts:
    speaking_ids: tuple  # seats that may speak, in seat order
    names: dict  # seat id -> display name
    turns: dict = field(default_factory=dict)  # seat id -> turns given the floor
    words: dict = field(default_factory=dict)  # seat id -> words spoken
    last_id: int | None = None
    mentioned: tuple = ()  # seats asked for with @alias and not heard since, in the order asked
    blockers: tuple = ()  # Blocker, oldest first
    rounds_left: int = 0
    strict: bool = False  # strict fairness: only the seats with the fewest turns

    def turns_of(self, seat_id) -> int:
        return int(self.turns.get(seat_id, 0))

    def name(self, seat_id) -> str:
        return self.names.get(seat_id) or f"seat {seat_id}"


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 3].rsplit(" ", 1)[0] + "..."


def eligible(facts: Facts) -> list[int]:
    """The seats the rules allow to speak next, in seat order."""
    ids = list(facts.speaking_ids)
    if not ids:
        return []
    others = [i for i in ids if i != facts.last_id] or ids
    if any(facts.turns_of(i) == 0 for i in ids):
        others = [i for i in others if facts.turns_of(i) < 2] or others
    if facts.strict:
        fewest = min(facts.turns_of(i) for i in ids)
        level = [i for i in others if facts.turns_of(i) == fewest]
        others = level or others
    return others


def _why_not(seat_id, facts: Facts) -> tuple[str, str]:
    """(rule, why) for a seat the rules do not allow now."""
    if seat_id not in facts.speaking_ids:
        return "not_speaking", "is not a speaking participant (observers never speak)"
    if seat_id == facts.last_id:
        return "no_repeat", "spoke last, and others are waiting"
    if any(facts.turns_of(i) == 0 for i in facts.speaking_ids) and facts.turns_of(seat_id) >= 2:
        waiting = ", ".join(facts.name(i) for i in facts.speaking_ids if facts.turns_of(i) == 0)
        return "fair_share", f"has had {facts.turns_of(seat_id)} turns while {waiting} has not been heard yet"
    fewest = min(facts.turns_of(i) for i in facts.speaking_ids)
    return "strict_share", f"has had {counted(facts.turns_of(seat_id), 'turn')} while others have had {fewest}: nobody gets ahead"


def _order_after(ids: list[int], facts: Facts) -> list[int]:
    speaking = list(facts.speaking_ids)
    start = speaking.index(facts.last_id) + 1 if facts.last_id in speaking else 0
    rotated = speaking[start:] + speaking[:start]
    return [i for i in rotated if i in ids]


def pick_speaker(facts: Facts, candidates: list[int] | None = None) -> int | None:
    """The replacement speaker among ``candidates`` (default: every eligible seat)."""
    pool = list(candidates if candidates is not None else eligible(facts))
    if not pool:
        return None
    for seat in facts.mentioned:
        if seat in pool:
            return seat
    order = _order_after(pool, facts)
    rank = {seat: n for n, seat in enumerate(order)}
    return min(pool, key=lambda s: (facts.turns_of(s), int(facts.words.get(s, 0)), rank.get(s, len(rank))))


def _readdress(question: str, old: str, new: str) -> str:
    if old and question.lower().startswith(old.lower()):
        return new + question[len(old):]
    return question


def _answer_question(blocker: Blocker, responder: str) -> str:
    if blocker.kind == "reject":
        return (f"{responder}, {blocker.name} votes REJECT on the current direction"
                + (f" (\"{_clip(blocker.text, 160)}\")" if blocker.text and blocker.text != "REJECT" else "")
                + ". Answer that objection directly: what would resolve it, or why should the room go ahead anyway?")
    return (f"{responder}, {blocker.name}'s concern is still open: \"{_clip(blocker.text, 200)}\" "
            "Address it directly: how would you resolve it, or should the room accept it as a known risk?")


def _block_conclusion(decision: Decision, facts: Facts) -> Decision:
    for blocker in facts.blockers:
        pool = [i for i in eligible(facts) if i != blocker.seat_id]
        if not pool:
            pool = [i for i in facts.speaking_ids if i != blocker.seat_id and i != facts.last_id]
        responder = pick_speaker(facts, pool)
        if responder is None:
            continue
        corrections = list(decision.corrections) + [{
            "rule": "open_objection",
            "reason": f"The room cannot conclude while {blocker.describe()} stands unanswered and rounds remain; "
                      f"{facts.name(responder)} is asked to answer it.",
            "to": responder,
        }]
        return Decision("continue", responder, _answer_question(blocker, facts.name(responder)), decision.reasoning,
                        fallback=decision.fallback, progress=decision.progress, corrections=corrections)
    return decision


def _give_floor(decision: Decision, facts: Facts, chosen, seat: int) -> Decision:
    """The floor goes to ``seat``, asked for with @ and not heard since."""
    new_name = facts.name(seat)
    old_name = facts.names.get(chosen) or (f"seat {chosen}" if chosen is not None else "nobody")
    corrections = list(decision.corrections) + [{
        "rule": "floor_request",
        "reason": f"{new_name} was asked for with @ and has not had the floor since; {new_name} speaks instead of {old_name}.",
        "from": chosen, "to": seat,
    }]
    question = _readdress(decision.question, facts.names.get(chosen, ""), new_name)
    if question == decision.question:
        question = f"{new_name}, you were asked for by name. {question}".strip()
    return Decision("continue", seat, question, decision.reasoning, fallback=decision.fallback,
                    progress=decision.progress, corrections=corrections)


def apply_guardrails(decision: Decision, facts: Facts, *, opening: bool = False) -> Decision:
    """The decision, corrected where a rule demands it (never a speaker who may not speak)."""
    if decision.decision == "synthesize":
        if opening or facts.rounds_left <= 0 or not facts.blockers:
            return decision
        return _block_conclusion(decision, facts)
    allowed = eligible(facts)
    if not allowed:
        return Decision("synthesize", None, "", decision.reasoning, fallback=decision.fallback or "no_speakers",
                        progress=decision.progress, corrections=list(decision.corrections))
    chosen = decision.next_participant_id
    wanted = [i for i in facts.mentioned if i in allowed]
    if wanted and chosen not in wanted:
        return _give_floor(decision, facts, chosen, wanted[0])
    if chosen in allowed:
        return decision
    rule, why = _why_not(chosen, facts)
    replacement = pick_speaker(facts, allowed)
    old_name = facts.names.get(chosen) or (f"seat {chosen}" if chosen is not None else "nobody")
    new_name = facts.name(replacement)
    reason = f"{old_name} {why}; {new_name} speaks instead"
    if replacement in facts.mentioned:
        reason += " (addressed in the latest turn)"
    corrections = list(decision.corrections) + [{"rule": rule, "reason": reason + ".", "from": chosen, "to": replacement}]
    question = _readdress(decision.question, facts.names.get(chosen, ""), new_name)
    return Decision("continue", replacement, question, decision.reasoning, fallback=decision.fallback,
                    progress=decision.progress, corrections=corrections)
