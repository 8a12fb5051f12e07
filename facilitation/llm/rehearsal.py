"""The offline rehearsal provider: the default model when no real one is configured.

It never sees the prompt text. It reads ``request.purpose`` and the structured
``request.meta`` and writes what a room needs to run end to end:

- ``opening`` / ``evaluation``: a pure JSON decision (``"rehearsal": true`` inside),
  choosing the next speaker the way the facilitator persona would;
- ``contribution``: a short Markdown turn in the speaker's persona voice, rich in
  markers (``Q:``, ``CONCERN:``, ``DECISION:``, ``TODO:``, ``VOTE:``, ``@mention``);
- ``synthesis``: an extractive conclusion built from the gathered points and recent
  turns, shaped by the facilitator persona;
- anything else (narratives, minutes ...): a short extractive summary.

Every text except the JSON decisions starts with ``LABEL`` on its own line.
It is deterministic: any variation is seeded from a hash of the request's meta, so
the same request always gives the same text. It never sleeps.
"""
import hashlib
import json
import re
import time

from facilitation.llm.base import LLMRequest, LLMResponse, Provider, estimate_tokens

LABEL = "[Offline rehearsal - not written by a language model]"

VOTES = ("READY", "CHANGES", "REJECT")
SPEAKING_ROLES = ("participant", "devil_advocate")
FACILITATOR_STYLES = ("socratic", "contrarian", "bridge-builder", "spark", "examiner", "impartial-chair", "closer", "equalizer")
_STYLE_HINTS = {"bridge": "bridge-builder", "impartial": "impartial-chair", "chair": "impartial-chair", "equaliz": "equalizer", "equalis": "equalizer"}


# --------------------------------------------------------------------------- helpers

def _digest(*parts) -> int:
    raw = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(raw.encode("utf-8")).digest()[:8], "big")


def _short(text: str, limit: int = 110) -> str:
    text = " ".join(str(text or "").split()).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.")
    return cut + "..."


def _subject(topic: str) -> str:
    """A short form of the topic that reads well inside quotes."""
    text = " ".join(str(topic or "").split())
    if not text:
        return "the topic"
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return _short(first.rstrip(".!"), 90)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(name or "").lower()).strip("-") or "someone"


_MARKER_LINE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?(VOTE|Q|TODO|DECISION|ASSIGNED|DONE|CONCERN)\b", re.IGNORECASE)


def _plain_lines(content: str) -> list[str]:
    """The prose lines of a turn: no label, markers, headings, fences or diagram code."""
    lines, fenced = [], False
    for line in str(content or "").splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not stripped or stripped == LABEL or stripped.startswith("#") or _MARKER_LINE.match(stripped):
            continue
        lines.append(stripped)
    return lines


def _gist(content: str, limit: int = 140) -> str:
    for line in _plain_lines(content):
        text = re.sub(r"[*_`>]", "", line).strip(" -")
        text = re.sub(r"@([\w-]+)", r"\1", text)
        if len(text.split()) >= 4:
            first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
            return _short(first, limit)
    return ""


def _ideas(content: str) -> list[str]:
    ideas = []
    for line in _plain_lines(content):
        if line.startswith(("- ", "* ")):
            text = re.sub(r"[*_`]", "", line[2:]).strip()
            text = re.split(r"(?<=[.!?:])\s", text, maxsplit=1)[0].rstrip(":")
            if text:
                ideas.append(_short(text, 90))
    return ideas


def _vote_of(point: dict) -> str | None:
    value = str(point.get("value") or point.get("text") or "").strip().upper()
    for vote in VOTES:
        if value.startswith(vote):
            return vote
    return None


def _pick(options, seed: int, salt: int = 0):
    return options[(seed + salt * 7919) % len(options)] if options else None


# --------------------------------------------------------------------------- the room as meta shows it

class _Room:
    def __init__(self, meta: dict, purpose: str):
        self.meta = meta
        self.purpose = purpose
        self.seed = _digest(purpose, meta)
        self.topic = str(meta.get("topic") or "")
        self.subject = _subject(self.topic)
        self.format = str(meta.get("format") or "deliberation").lower()
        self.round = int(meta.get("round") or 0)
        self.max_rounds = int(meta.get("maxRounds") or 0)
        left = meta.get("roundsLeft")
        self.rounds_left = int(left) if left is not None else max(0, self.max_rounds - self.round)
        self.speakers = [s for s in (meta.get("speakers") or []) if s.get("role", "participant") in SPEAKING_ROLES]
        self.by_name = {s.get("name"): s for s in self.speakers}
        last = meta.get("lastSpeakerId")
        self.last = next((s for s in self.speakers if str(s.get("id")) == str(last)), None) if last is not None else None
        self.recent = [r for r in (meta.get("recent") or []) if isinstance(r, dict)]
        self.points = [p for p in (meta.get("points") or []) if isinstance(p, dict)]
        self.persona = meta.get("persona") or {}
        self.speaker = meta.get("speaker") or {}
        self.question = str(meta.get("question") or "")

    # -- who spoke how much
    def airtime(self, seat: dict) -> int:
        table = self.meta.get("airtime")
        if isinstance(table, dict) and table:
            return int(table.get(str(seat.get("id")), table.get(seat.get("id"), 0)) or 0)
        return sum(1 for r in self.recent if self._is(r, seat))

    @staticmethod
    def _is(turn: dict, seat: dict) -> bool:
        if turn.get("seatId") is not None:
            return str(turn.get("seatId")) == str(seat.get("id"))
        return turn.get("speaker") == seat.get("name")

    def last_heard(self, seat: dict) -> int:
        """Index of the seat's latest recent turn (-1: not in the recent turns)."""
        return max((i for i, r in enumerate(self.recent) if self._is(r, seat)), default=-1)

    def heard(self, seat: dict) -> bool:
        return self.airtime(seat) > 0 or self.last_heard(seat) >= 0

    @property
    def all_heard(self) -> bool:
        return bool(self.speakers) and all(self.heard(s) for s in self.speakers)

    @property
    def min_airtime(self) -> int:
        return min((self.airtime(s) for s in self.speakers), default=0)

    @property
    def max_airtime(self) -> int:
        return max((self.airtime(s) for s in self.speakers), default=0)

    # -- what was said
    def of_type(self, kind: str) -> list[dict]:
        return [p for p in self.points if p.get("type") == kind]

    def latest_votes(self) -> dict:
        votes = {}
        for p in self.points:
            if p.get("type") == "vote" and _vote_of(p):
                votes[p.get("speaker")] = _vote_of(p)
        return votes

    def last_index(self, kind: str) -> int:
        return max((i for i, p in enumerate(self.points) if p.get("type") == kind), default=-1)

    def open_questions(self) -> list[dict]:
        after = self.last_index("decision")
        return [p for i, p in enumerate(self.points) if p.get("type") == "question" and i > after]

    def unanswered_concern(self) -> dict | None:
        """The latest concern if nobody else has spoken up (with any marker) since."""
        idx = self.last_index("concern")
        if idx < 0:
            return None
        concern = self.points[idx]
        later = [p for p in self.points[idx + 1:] if p.get("speaker") != concern.get("speaker") and p.get("type") != "mention"]
        return None if later else concern

    def latest_point_not_by(self, name: str | None, kinds=("decision", "concern", "question", "todo")) -> dict | None:
        for p in reversed(self.points):
            if p.get("type") in kinds and p.get("speaker") != name and p.get("text"):
                return p
        return None

    def preferred_point(self, name: str | None, *groups) -> dict | None:
        """The latest point not by ``name`` from the first group of kinds that has one."""
        for kinds in groups:
            point = self.latest_point_not_by(name, kinds)
            if point:
                return point
        return None

    def latest_turn_not_by(self, name: str | None) -> dict | None:
        for r in reversed(self.recent):
            if r.get("speaker") != name and r.get("content"):
                return r
        return None

    def round_robin_after(self, seat: dict | None) -> dict | None:
        if not self.speakers:
            return None
        if seat is None or seat not in self.speakers:
            return self.speakers[0]
        return self.speakers[(self.speakers.index(seat) + 1) % len(self.speakers)]

    def rr_rank(self, seat: dict) -> int:
        """Distance in seat order after the last speaker (1 = next in turn)."""
        n = len(self.speakers)
        base = self.speakers.index(self.last) if self.last in self.speakers else -1
        return (self.speakers.index(seat) - base - 1) % n

    def candidates(self) -> list[dict]:
        others = [s for s in self.speakers if s is not self.last]
        return others or list(self.speakers)


# --------------------------------------------------------------------------- facilitator decisions

def _facilitator_style(persona: dict) -> str:
    key = str(persona.get("key") or "").lower()
    name = str(persona.get("name") or "").lower()
    for style in FACILITATOR_STYLES:
        if style in key or style.replace("-", " ") in name:
            return style
    for hint, style in _STYLE_HINTS.items():
        if hint in key or hint in name:
            return style
    return "generic"


def _least_airtime(room: _Room, seats: list[dict]) -> dict:
    return min(seats, key=lambda s: (room.airtime(s), room.last_heard(s), room.rr_rank(s)))


def _choose(style: str, room: _Room, opening: bool) -> tuple[dict, str, dict | None]:
    """(next seat, why, the point the question should pick up)."""
    cands = room.candidates()
    if opening:
        if style == "contrarian":
            firsts = [s for s in cands if s.get("role") != "devil_advocate"] or cands
            return firsts[0], "a position has to be on the table before it can be tested", None
        if style == "spark":
            return _pick(cands, room.seed), "any voice can strike the first spark", None
        if style == "equalizer":
            return cands[0], "everyone starts with equal airtime; we go in seat order", None
        return cands[0], "the first speaking seat opens", None

    unheard = [s for s in cands if not room.heard(s)]
    last_name = room.last.get("name") if room.last else None

    if style == "equalizer":
        seat = _least_airtime(room, cands)
        return seat, f"{seat['name']} has had the least airtime ({room.airtime(seat)} turn(s))", room.preferred_point(seat["name"], ("decision", "concern"), ("question", "todo"))

    if style == "impartial-chair":
        seat = room.round_robin_after(room.last)
        if seat is room.last:
            seat = cands[0]
        return seat, "next in seat order; every seat gets the same floor", room.preferred_point(seat["name"], ("decision", "concern", "question"))

    if style == "closer":
        if unheard:
            return unheard[0], f"{unheard[0]['name']} has not been heard yet; everyone speaks once before anyone speaks twice", None
        votes = room.latest_votes()
        blockers = [s for s in cands if votes.get(s["name"]) in ("REJECT", "CHANGES")]
        if blockers:
            seat = min(blockers, key=lambda s: (votes[s["name"]] != "REJECT", room.rr_rank(s)))
            return seat, f"{seat['name']} still holds a blocking view ({votes[seat['name']]})", room.latest_point_not_by(None, ("concern", "decision"))
        seat = _least_airtime(room, cands)
        return seat, f"{seat['name']} can still change the decision", room.latest_point_not_by(None, ("decision",))

    if style == "socratic":
        questions = room.open_questions() or room.of_type("question")
        if questions:
            q = questions[-1]
            pool = [s for s in cands if s.get("name") != q.get("speaker")] or cands
            seat = _least_airtime(room, pool)
            return seat, f"{q.get('speaker')}'s open question goes to a different voice to test it", q
        seat = unheard[0] if unheard else _least_airtime(room, cands)
        return seat, f"{last_name or 'the last speaker'} made a claim worth probing from another angle", room.preferred_point(seat["name"], ("decision", "concern"), ("todo",))

    if style == "contrarian":
        advocates = [s for s in cands if s.get("role") == "devil_advocate"]
        advocate_names = {s["name"] for s in room.speakers if s.get("role") == "devil_advocate"}
        if room.last is not None and room.last.get("role") == "devil_advocate":
            decisions = room.of_type("decision")
            proposer = room.by_name.get(decisions[-1].get("speaker")) if decisions else None
            if proposer is None or proposer is room.last:
                defender = room.latest_turn_not_by(last_name)
                proposer = room.by_name.get(defender.get("speaker")) if defender else None
            if proposer is not None and proposer is not room.last:
                objection = room.preferred_point(proposer["name"], ("concern",), ("question",))
                return proposer, f"{proposer['name']} must answer the objection {last_name} just raised", ({**objection, "mode": "answer"} if objection else None)
        advocates_spoke = any(room.heard(s) for s in room.speakers if s["name"] in advocate_names)
        quiet = [s for s in unheard if s["name"] not in advocate_names]
        just_answered = len(room.recent) >= 2 and room.recent[-2].get("role") == "devil_advocate"
        if advocates and not (quiet and just_answered):
            last_advocate = max((i for i, p in enumerate(room.points) if p.get("speaker") in advocate_names), default=-1)
            fresh = [p for p in room.points[last_advocate + 1:] if p.get("type") in ("decision", "todo") and p.get("speaker") not in advocate_names]
            if fresh or last_advocate < 0:
                seat = _least_airtime(room, advocates)
                return seat, f"the room is building a position; {seat['name']} (devil's advocate) tests it", room.preferred_point(seat["name"], ("decision",), ("todo",), ("concern",))
        if quiet and advocates_spoke:
            return quiet[0], f"{quiet[0]['name']} has not spoken yet; a silent dissenter must not stay silent", room.preferred_point(quiet[0]["name"], ("decision",), ("concern",))
        votes = room.latest_votes()
        dissent = [s for s in cands if votes.get(s["name"]) in ("REJECT", "CHANGES")]
        if dissent:
            seat = min(dissent, key=lambda s: (votes[s["name"]] != "REJECT", room.airtime(s), room.rr_rank(s)))
            return seat, f"{seat['name']} voted against the trend; dissent gets the floor", room.preferred_point(seat["name"], ("decision",), ("todo",))
        seat = unheard[0] if unheard else _least_airtime(room, cands)
        return seat, f"{seat['name']} has not yet attacked the leading view", room.preferred_point(seat["name"], ("decision",), ("todo",))

    if style == "bridge-builder":
        votes = room.latest_votes()
        rank = {"READY": 0, "CHANGES": 1, "REJECT": 2}
        anchor = rank.get(votes.get(last_name), 1)
        floor = min(room.airtime(c) for c in cands)
        pool = [c for c in cands if room.airtime(c) <= floor + 1]
        seat = max(pool, key=lambda s: (not room.heard(s), abs(rank.get(votes.get(s["name"]), 1) - anchor), -room.airtime(s), -room.rr_rank(s)))
        return seat, f"{seat['name']} stands furthest from {last_name or 'the last view'}; look for the overlap", room.preferred_point(seat["name"], ("decision", "concern"), ("todo",))

    if style == "spark":
        if unheard:
            seat = _pick(unheard, room.seed)
            return seat, f"{seat['name']} has not added ideas yet", None
        last_role = room.last.get("role") if room.last else None
        pool = [s for s in cands if s.get("role") != last_role] or cands
        low = min(room.airtime(s) for s in pool)
        seat = _pick([s for s in pool if room.airtime(s) == low], room.seed)
        return seat, f"cross-pollinate: {seat['name']} brings a different angle to the last idea", None

    if style == "examiner":
        concern = room.unanswered_concern()
        votes = room.latest_votes()
        unvoted = [s for s in cands if s["name"] not in votes]
        if concern:
            pool = [s for s in cands if s.get("name") != concern.get("speaker")] or cands
            ordered = [s for s in pool if s in unvoted] or pool
            seat = min(ordered, key=lambda s: (room.airtime(s), room.rr_rank(s)))
            return seat, f"{concern.get('speaker')}'s concern needs verification by another reviewer", concern
        if unvoted:
            seat = min(unvoted, key=lambda s: (room.airtime(s), room.rr_rank(s)))
            return seat, f"{seat['name']} has not put a verdict on record", room.preferred_point(seat["name"], ("concern",), ("decision",))
        seat = _least_airtime(room, cands)
        return seat, f"{seat['name']} reviews the area with the least scrutiny so far", room.preferred_point(seat["name"], ("concern",), ("decision",))

    seat = _least_airtime(room, cands)
    return seat, f"{seat['name']} has spoken least so far", room.preferred_point(seat["name"], ("decision", "concern"), ("question", "todo"))


def _should_stop(style: str, room: _Room) -> tuple[bool, str]:
    votes = room.latest_votes()
    opens = room.open_questions()
    if not room.speakers:
        return True, "there is nobody left to speak"
    if style == "closer":
        heard = sum(1 for seat in room.speakers if room.heard(seat))
        accepted = votes and all(v == "READY" for v in votes.values())
        if room.of_type("decision") and accepted and heard >= max(2, (len(room.speakers) + 1) // 2):
            return True, "a decision is on record, half the room has weighed in and everyone who voted accepts it"
        if room.all_heard and "REJECT" not in votes.values():
            return True, "everyone has been heard once and nothing blocks a decision"
        return False, ""
    if style == "equalizer":
        balanced = room.max_airtime - room.min_airtime == 0
        if room.all_heard and balanced and (not opens or room.min_airtime >= 2):
            return True, "airtime is balanced and every voice has been heard"
        return False, ""
    if style == "impartial-chair":
        if room.min_airtime >= 2 and room.max_airtime == room.min_airtime:
            return True, "every seat has had the same number of turns, twice round the table"
        return False, ""
    if style == "socratic":
        if room.all_heard and not opens and room.of_type("decision"):
            return True, "the central claims have been questioned and no question is left open"
        return False, ""
    if style == "contrarian":
        if not room.all_heard:
            return False, ""
        pts = room.points
        for i, proposal in enumerate(pts):
            if proposal.get("type") != "decision":
                continue
            for j in range(i + 1, len(pts)):
                objection = pts[j]
                if objection.get("type") != "concern" or objection.get("speaker") == proposal.get("speaker"):
                    continue
                if any(p.get("type") == "decision" and p.get("speaker") != objection.get("speaker") for p in pts[j + 1:]):
                    return True, "the leading position has met a serious objection and the room has answered it"
        return False, ""
    if style == "bridge-builder":
        if room.format == "brainstorm":
            return (room.min_airtime >= 2, "every voice has been woven in twice")
        if room.all_heard and len(votes) >= len(room.speakers) and len(set(votes.values())) == 1 and "REJECT" not in votes.values():
            return True, "the positions have converged and nobody votes against"
        history: dict = {}
        for p in room.of_type("vote"):
            history.setdefault(p.get("speaker"), []).append(_vote_of(p))
        if room.min_airtime >= 2 and history and all(len(v) >= 2 and v[-1] == v[-2] for v in history.values()):
            return True, "the remaining difference is clear and stable; more talk will not close it"
        return False, ""
    if style == "spark":
        if room.min_airtime >= 2:
            return True, "every voice has added ideas twice; time to cluster"
        return False, ""
    if style == "examiner":
        pending = room.unanswered_concern()
        if pending and (room.last is None or pending.get("speaker") != room.last.get("name")):
            return False, ""
        if room.format == "brainstorm":
            return (room.all_heard, "every reviewer has examined the work")
        if room.all_heard and all(s["name"] in votes for s in room.speakers):
            return True, "every reviewer has examined the work and voted; concerns have responses"
        return False, ""
    if room.min_airtime >= 2 and not opens:
        return True, "every perspective has been heard twice and no question is open"
    return False, ""


_OPENING_QUESTIONS = {
    "socratic": ["{name}, to begin: what do you take for granted about \"{subject}\", and what would show you are wrong?",
                 "{name}, what is the strongest claim you would make about \"{subject}\", and what evidence supports it?"],
    "contrarian": ["{name}, put a position on the table: what should we do about \"{subject}\"? Make it concrete enough to be attacked.",
                   "{name}, what is your recommendation on \"{subject}\", and why would a sceptic accept it?"],
    "bridge-builder": ["{name}, what matters most to you about \"{subject}\", whatever option we end up with?",
                       "{name}, what outcome on \"{subject}\" would most of this room be glad to live with?"],
    "spark": ["{name}, kick us off: give three quick, different ideas for \"{subject}\"; the bolder the better.",
              "{name}, if there were no constraints at all, how would you approach \"{subject}\"?"],
    "examiner": ["{name}, start the review of \"{subject}\": what are its main strengths, and what is the most serious problem you see?",
                 "{name}, examine \"{subject}\" from your area: which findings would you rank as critical, major or minor?"],
    "impartial-chair": ["{name}, to open: what is your view on \"{subject}\"?",
                        "{name}, please start us off with your perspective on \"{subject}\"."],
    "closer": ["{name}, we need a decision on \"{subject}\". What would you decide today, and why?",
               "{name}, what is the option for \"{subject}\" you would commit to now, and what would make it a mistake?"],
    "equalizer": ["{name}, you open for us: how does \"{subject}\" look from where you sit?",
                  "{name}, we will hear everyone in turn; what is your first take on \"{subject}\"?"],
    "generic": ["{name}, to open the discussion: what is your view of \"{subject}\", and what matters most in it?"],
}

_FOLLOW_UPS = {
    "socratic": ["{name}, {ref} is still open. What would have to be true for the answer to be yes, and how would we know?",
                 "{name}, consider {ref}. Which assumption sits underneath it, and is that assumption safe for \"{subject}\"?"],
    "contrarian": ["{name}, the room is building on {ref}. What is the strongest case against it?",
                   "{name}, under what conditions does {ref} fail, and who pays if it does?"],
    "bridge-builder": ["{name}, consider {ref}. Which part of it could you accept, and what would you need changed?",
                       "{name}, where do you and {author} overlap on {ref}, and what real difference is left?"],
    "spark": ["{name}, riff on what we have: take the last idea somewhere unexpected for \"{subject}\".",
              "{name}, combine two ideas already on the table into something new for \"{subject}\"."],
    "examiner": ["{name}, verify {ref}: confirm or refute it with evidence, and rate its severity.",
                 "{name}, is {ref} blocking? What is the smallest change that resolves it?"],
    "impartial-chair": ["{name}, what is your view on {ref}?",
                        "{name}, is there anything you would add on \"{subject}\" before we move on, including on {ref}?"],
    "closer": ["{name}, on {ref}: can you live with it if we add a safeguard? If not, what exactly blocks you?",
               "{name}, give me your decision on \"{subject}\" in one line, with an owner for the first step."],
    "equalizer": ["{name}, how does {ref} look from where you sit?",
                  "{name}, what would you add on \"{subject}\"? Do you see {ref} differently?"],
    "generic": ["{name}, building on {ref}, what would you add, challenge or refine?"],
}
_ANSWER = "{name}, {author} objects: \"{text}\" Answer it directly: what evidence holds your position up, or what would you change?"
_KIND_WORDS = {"decision": "proposal", "todo": "suggestion", "concern": "concern", "question": "question"}


def _quote(text: str, limit: int = 100) -> str:
    return _short(str(text or "").replace('"', "'"), limit)


def _question(style: str, room: _Room, seat: dict, point: dict | None, opening: bool) -> str:
    name = seat.get("name", "you")
    if opening:
        return _pick(_OPENING_QUESTIONS.get(style) or _OPENING_QUESTIONS["generic"], room.seed, 1).format(name=name, subject=room.subject)
    if point is None:
        variants = [v for v in (_FOLLOW_UPS.get(style) or []) if "{ref}" not in v] or [
            "{name}, building on what has been said about \"{subject}\", what would you add, challenge or refine?"]
        return _pick(variants, room.seed, 1).format(name=name, subject=room.subject)
    author, text = point.get("speaker") or "someone", _quote(point.get("text"), 100)
    if point.get("mode") == "answer":
        return _ANSWER.format(name=name, author=author, text=text)
    ref = f"{author}'s {_KIND_WORDS.get(point.get('type'), 'point')} \"{text}\""
    question = _pick(_FOLLOW_UPS.get(style) or _FOLLOW_UPS["generic"], room.seed, 1).format(name=name, subject=room.subject, ref=ref, author=author)
    if style == "equalizer" and room.airtime(seat) < room.max_airtime:
        question = question.replace(f"{name}, ", f"{name}, we have heard least from you so far. ", 1)
    return question


def _decision(purpose: str, meta: dict) -> dict:
    room = _Room(meta, purpose)
    style = _facilitator_style(room.persona)
    opening = purpose == "opening"
    persona_name = room.persona.get("name") or "The facilitator"
    opens = room.open_questions()
    heard = sum(1 for s in room.speakers if room.heard(s))
    coverage = 0.0
    if room.speakers:
        pace = min(1.0, room.round / room.max_rounds) if room.max_rounds else 0.0
        coverage = round(0.6 * heard / len(room.speakers) + 0.4 * pace, 2)
    progress = {"coverage": coverage, "openQuestions": len(opens)}

    if not room.speakers:
        return {"decision": "synthesize", "nextParticipantId": None, "question": "",
                "reasoning": f"{persona_name}: no speaking participant is available, so the room concludes.",
                "progress": progress, "rehearsal": True}

    seat, why, point = _choose(style, room, opening)
    if room.last is not None and seat is room.last and len(room.speakers) > 1:
        seat = room.round_robin_after(room.last)
    stop, stop_why = (False, "")
    if meta.get("mustSynthesize"):
        stop, stop_why = True, "no rounds remain, so the room must conclude"
    elif not opening and room.rounds_left <= 0:
        stop, stop_why = True, "the round limit is reached"
    elif not opening:
        stop, stop_why = _should_stop(style, room)

    if stop:
        return {"decision": "synthesize", "nextParticipantId": seat.get("id"), "question": "",
                "reasoning": f"{persona_name}: time to synthesize, because {stop_why}.",
                "progress": {**progress, "coverage": max(coverage, 0.8) if not meta.get("mustSynthesize") else coverage},
                "rehearsal": True}
    return {"decision": "continue", "nextParticipantId": seat.get("id"), "question": _question(style, room, seat, point, opening),
            "reasoning": f"{persona_name}: {why}.", "progress": progress, "rehearsal": True}


# --------------------------------------------------------------------------- contributions

_VOICES = {
    "architect": {
        "lens": "systems architecture",
        "openers": ["Looking at \"{subject}\" as a system, the first thing I check is where the boundaries fall and who owns what.",
                    "From an architecture point of view, \"{subject}\" is mostly a question of coupling and of how it will grow.",
                    "My lens on \"{subject}\" is the next few years: what stays easy to change, and what sets in concrete."],
        "body": ["Keep the core small and put the variable parts behind one clear interface, so later changes stay local.",
                 "Prefer the boring, proven option here; novelty should pay for itself in a measurable way."],
        "concerns": ["Two parts of this design would have to change together, which is coupling we will regret.",
                     "It is not clear which component owns the data, and shared ownership ages badly."],
        "questions": ["What happens at ten times today's load?", "Which part of this would be hardest to reverse?"],
        "todos": ["Sketch the component boundaries and data ownership before building.", "Write a short decision record for the chosen structure."],
        "decisions": ["Keep a single owner for each piece of data and expose it through one interface.", "Start with the simplest structure that keeps the boundaries clean."],
        "ideas": ["A plug-in boundary so variations do not touch the core", "An event log as the single source of truth", "A thin facade now, with room to split it later"],
    },
    "security": {
        "lens": "security",
        "openers": ["Reading \"{subject}\" as an attacker would, I start with what is worth stealing and how one would get in.",
                    "On \"{subject}\", my question is always the same: who could misuse this, and what would it cost us?",
                    "Security-wise, \"{subject}\" widens the attack surface, so I want the controls decided before the features."],
        "body": ["Every input should be treated as untrusted and every permission granted as narrowly as possible.",
                 "The cheapest control is the one designed in now; retrofitting access checks is slow and error-prone."],
        "concerns": ["Authorisation checks are not specified, so one user might reach another user's data.",
                     "Sensitive data could end up in logs or exports without anyone noticing."],
        "questions": ["Who can reach this, and with which rights?", "Which data here is sensitive, and where does it flow?"],
        "todos": ["Write a one-page threat model for the main flows.", "Review secrets handling and log redaction before release."],
        "decisions": ["Deny by default and grant each role only what it needs.", "Validate every external input at the boundary."],
        "ideas": ["A threat-modelling game as part of the kickoff", "Abuse cases written next to every user story", "A red-team afternoon before launch"],
    },
    "pragmatist": {
        "lens": "delivery",
        "openers": ["On \"{subject}\", what is the smallest version we could ship and learn from this week?",
                    "I would cut \"{subject}\" down to the part users actually need first and leave the rest for later.",
                    "We risk over-building \"{subject}\"; let us find the simplest thing that works."],
        "body": ["Ship a thin slice, watch how it is used, and let real feedback decide the next step.",
                 "Accept some deliberate, written-down debt if it gets value out sooner."],
        "concerns": ["Scope is growing faster than our understanding of what users need.",
                     "We are designing for cases nobody has asked for yet."],
        "questions": ["Which part of this could wait for a second iteration?", "What would we lose by shipping the simple version first?"],
        "todos": ["Define the first slice and its acceptance check in one paragraph.", "List what we are explicitly deferring."],
        "decisions": ["Ship the minimal version first and revisit after real usage.", "Time-box the first iteration to two weeks."],
        "ideas": ["A one-week prototype with real users", "A manual version behind the scenes before automating", "Drop the least-used half of the scope"],
    },
    "perfectionist": {
        "lens": "quality",
        "openers": ["Before we call \"{subject}\" done, I want to know exactly how we will prove it works.",
                    "For \"{subject}\", the edge cases and the error paths are where I would look first.",
                    "Quality on \"{subject}\" is cheapest now, while the behaviour is still being defined."],
        "body": ["Each behaviour should be written down precisely enough that someone else could test it.",
                 "Consistent naming and documented decisions will save the next person hours."],
        "concerns": ["The failure paths are unspecified, so errors may pass silently.",
                     "There are no acceptance criteria yet, so done means different things to different people."],
        "questions": ["What exactly should happen when this fails halfway?", "How will we know this keeps working after the next change?"],
        "todos": ["Write acceptance tests for the main path and the two likeliest failures.", "Document the decision and its edge cases."],
        "decisions": ["Nothing is done until it has tests for its error paths.", "Agree on acceptance criteria before implementation starts."],
        "ideas": ["A checklist of edge cases built by the whole team", "Tests written first as the living specification", "A style guide so similar things look alike"],
    },
    "designer": {
        "lens": "user experience",
        "openers": ["For \"{subject}\", I keep picturing the person who has to use it on a busy day.",
                    "From the user's side, \"{subject}\" should feel obvious the first time, without a manual.",
                    "My worry with \"{subject}\" is that we are designing for ourselves rather than for its users."],
        "body": ["Every extra step or unfamiliar term is a cost the user pays; each should earn its place.",
                 "Accessibility has to be part of the first version: keyboard, contrast and plain language."],
        "concerns": ["The flow assumes expert users and will confuse newcomers.",
                     "There is no clear feedback after an action, so users will not know whether it worked."],
        "questions": ["Who exactly is the user, and what are they trying to get done?", "What does the user see when something goes wrong?"],
        "todos": ["Run a five-user hallway test on the main flow.", "Write the error and empty states before the happy path is polished."],
        "decisions": ["Design the main flow for a first-time user and keep expert shortcuts optional.", "Meet basic accessibility checks in the first release."],
        "ideas": ["A guided first run", "Plain-language labels tested with real users", "An undo instead of confirmation dialogs"],
    },
    "researcher": {
        "lens": "evidence",
        "openers": ["On \"{subject}\", let me separate what we know from what we are assuming.",
                    "There is prior art for \"{subject}\"; others have tried similar things, with mixed results.",
                    "Before deciding on \"{subject}\", it is worth checking which claims have actual evidence behind them."],
        "body": ["Several statements in this discussion are plausible but unchecked; a little measurement would settle them.",
                 "Documented experience from comparable projects points to the same trade-offs we are circling."],
        "concerns": ["Part of the reasoning rests on a single anecdote rather than data.",
                     "Some of the figures mentioned may be out of date."],
        "questions": ["What data do we have on current usage?", "Has anyone compared the options on a realistic workload?"],
        "todos": ["Collect two or three comparable cases and their outcomes.", "Measure the current baseline before changing anything."],
        "decisions": ["Treat the unverified assumptions as risks until measured."],
        "ideas": ["A quick survey of how others handled it", "A small benchmark to replace guesses with numbers", "A reading list of the best prior work"],
    },
    "visualizer": {
        "lens": "structure",
        "openers": ["Let me draw the part of \"{subject}\" we keep talking about; pictures expose gaps quickly.",
                    "A small diagram of \"{subject}\" shows where the arrows have no owner.",
                    "Sketching \"{subject}\" helps: one box per responsibility, one arrow per dependency."],
        "body": ["Drawn this way, one step has no clear owner and the error path is missing.",
                 "The picture shows the flow is simpler than the discussion suggests, except for one loop."],
        "concerns": ["The diagram has an arrow nobody could explain: who calls whom here?",
                     "There is no path back when a step fails."],
        "questions": ["Which component owns the middle step?", "Are two of us using the same word for different things?"],
        "todos": ["Keep this diagram next to the code and update it with each change.", "Draw the failure path as a second diagram."],
        "decisions": ["Use this diagram as the shared picture for the next discussion."],
        "ideas": ["A living diagram generated from the code", "A one-page map of all the moving parts", "A sequence diagram for the riskiest flow"],
        "diagram": True,
    },
    "generic": {
        "lens": "practical judgement",
        "openers": ["On \"{subject}\", my view is that we should be clear about the goal before choosing the means.",
                    "Thinking about \"{subject}\", I see a reasonable path, with a couple of risks to manage.",
                    "For \"{subject}\", the key trade-off is between speed and confidence."],
        "body": ["The strongest option is the one that keeps later choices open while delivering something useful now.",
                 "We should name the main risk explicitly and agree on how we would notice it early."],
        "concerns": ["We have not agreed on what success looks like.", "The main risk has no owner yet."],
        "questions": ["What would success look like in three months?", "What is the main risk, and who watches it?"],
        "todos": ["Write down the success criteria in two sentences.", "Name an owner for the main risk."],
        "decisions": ["Go ahead with the simplest option that meets the stated goal."],
        "ideas": ["A small pilot", "A shared list of assumptions to test", "A checkpoint after the first month"],
    },
}


def _voice_key(room: _Room) -> str:
    key = str(room.persona.get("key") or "").lower()
    if key in _VOICES:
        return key
    names = " ".join(str(x or "").lower() for x in (room.persona.get("name"), room.speaker.get("name")))
    for voice in _VOICES:
        if voice != "generic" and voice in names:
            return voice
    return "generic"


def _vote(voice: str, room: _Room) -> str:
    decisions = room.of_type("decision")
    concerns = room.of_type("concern")
    late = room.rounds_left <= 1
    if voice == "security":
        if len(concerns) >= 3 and not decisions:
            return "REJECT"
        return "READY" if decisions and late else "CHANGES"
    if voice == "pragmatist":
        return "CHANGES" if (room.round >= 3 and not decisions) else "READY"
    if voice == "perfectionist":
        return "READY" if (decisions and room.of_type("todo") and late) else "CHANGES"
    if voice == "architect":
        return "READY" if room.last_index("decision") > room.last_index("concern") else "CHANGES"
    if voice == "researcher":
        return "READY" if not room.open_questions() else "CHANGES"
    if voice in ("designer", "visualizer"):
        return "READY" if decisions else "CHANGES"
    return "READY" if decisions else _pick(["READY", "CHANGES"], room.seed, 5)


def _mention_for(room: _Room, prefer: str | None) -> dict | None:
    me = room.speaker.get("name")
    others = [s for s in room.speakers if s.get("name") != me and str(s.get("id")) != str(room.speaker.get("id"))]
    if prefer and prefer in room.by_name and prefer != me:
        return room.by_name[prefer]
    return _pick(others, room.seed, 3) if others else None


def _handle(seat: dict) -> str:
    return "@" + (seat.get("alias") or _slug(seat.get("name")))


def _diagram(room: _Room) -> list[str]:
    names = [s.get("name") for s in room.speakers][:3] or ["Client", "Service", "Store"]
    a, b = _slug(names[0]).replace("-", "_"), _slug(names[-1]).replace("-", "_")
    return ["```plantuml", "@startuml", f"[{a}] --> [core] : asks", f"[core] --> [{b}] : delegates", "@enduml", "```"]


def _contribution(meta: dict) -> str:
    room = _Room(meta, "contribution")
    voice_key = _voice_key(room)
    voice = _VOICES[voice_key]
    role = str(room.speaker.get("role") or "participant")
    me = room.speaker.get("name") or room.persona.get("name") or "Participant"
    s = room.seed
    fill = {"subject": room.subject}
    target = room.latest_point_not_by(me, ("decision", "concern")) or room.latest_point_not_by(me)
    turn = room.latest_turn_not_by(me)
    lines = [LABEL, ""]

    if role == "observer":
        return "\n".join(lines + _observer_lines(room))

    if role == "devil_advocate":
        return "\n".join(lines + _challenge_lines(room, voice, room.latest_point_not_by(me, ("decision", "concern")), turn))

    if room.format == "brainstorm":
        ideas = [i.format(**fill) for i in voice["ideas"]]
        start = s % len(ideas)
        ideas = ideas[start:] + ideas[:start]
        other_ideas = _ideas(turn.get("content", "")) if turn else []
        lines.append(_pick(voice["openers"], s).format(**fill) + " Some ideas, judgement deferred:")
        lines.append("")
        lines.append(f"- **{ideas[0]}**: it opens the most doors from the {voice['lens']} angle.")
        lines.append(f"- {ideas[1]}.")
        if other_ideas:
            lines.append(f"- Riffing on {turn.get('speaker')}'s '{_quote(other_ideas[0], 60)}': pair it with {_lower_first(ideas[2])}.")
        else:
            lines.append(f"- {ideas[2]}.")
        mention = _mention_for(room, turn.get("speaker") if turn else None)
        lines.append("")
        if mention:
            lines.append(f"{_handle(mention)}, how would you push the first idea further from your side?")
        lines.append("")
        lines.append("Q: " + _pick(voice["questions"], s, 2))
        lines.append("TODO: " + _pick(voice["todos"], s, 4))
        return "\n".join(lines)

    # review / deliberation
    pick = s % len(voice["body"])
    claim, answer = voice["body"][pick], voice["body"][(pick + 1) % len(voice["body"])]
    lines.append(f"{claim} {_pick(voice['openers'], s).format(**fill)}")
    asked = _asked(room.question, me)
    if asked:
        lines += ["", f"You asked: \"{asked}\" From the {voice['lens']} side, my answer is {_lower_first(answer)}"]
    reaction = _reaction(target, voice, s)
    if reaction:
        lines += ["", reaction]
    elif turn and _gist(turn.get("content", "")):
        lines += ["", f"Building on {turn.get('speaker')} ('{_quote(_gist(turn.get('content', '')), 90)}'), my {voice['lens']} view adds one condition."]
    if not asked and not reaction:
        lines += ["", f"Since nothing has been put to me directly, here is the test I would apply to any option for \"{room.subject}\": "
                      f"{_lower_first(_pick(voice['questions'], s, 8))} If we cannot answer that, we are not ready to choose."]
    if voice.get("diagram"):
        lines.append("")
        lines.extend(_diagram(room))
    lines.append("")
    lines.append("CONCERN: " + _pick(voice["concerns"], s, 2))
    lines.append("Q: " + _pick(voice["questions"], s, 3))
    vote = _vote(voice_key, room)
    if vote == "READY" or room.rounds_left <= 1 or _DECISION_ASKED.search(room.question):
        lines.append("DECISION: " + _pick(voice["decisions"], s, 4))
    else:
        lines.append("TODO: " + _pick(voice["todos"], s, 4))
    lines.append("")
    lines.append(f"VOTE: {vote}")
    return "\n".join(lines)


_DECISION_ASKED = re.compile(r"\b(decid|decision|commit|position|recommend|propose\b|answer it directly)", re.IGNORECASE)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _asked(question: str, me: str) -> str:
    """The facilitator's question without the leading "Name," address, shortened."""
    text = " ".join(str(question or "").split())
    if me and text.lower().startswith(str(me).lower()):
        text = text[len(me):].lstrip(" ,:;-")
    text = text.replace('"', "'")
    return _short(text[:1].upper() + text[1:], 100) if text else ""


def _reaction(point: dict | None, voice: dict, s: int) -> str:
    if not point:
        return ""
    who, text, lens = point.get("speaker") or "someone", _quote(point.get("text"), 90), voice["lens"]
    kind = point.get("type")
    if kind == "concern":
        return _pick([f"{who} is right to worry that \"{text}\" From the {lens} side, I would treat it as a condition, not a footnote.",
                      f"On {who}'s concern (\"{text}\"): I share it in part, but the {lens} risk I see is a different one."], s, 6)
    if kind == "decision":
        return _pick([f"I can support {who}'s proposal (\"{text}\") provided the {lens} condition below is met.",
                      f"{who} proposes \"{text}\" That works for me only with the {lens} caveat below."], s, 6)
    if kind == "question":
        return f"To {who}'s question (\"{text}\"): from the {lens} side, it depends on the condition below, so let us settle that first."
    return f"{who} suggested \"{text}\" I agree, and I would do it early."


_ASSUMPTIONS = (
    ("that today's conditions will hold", "If the load, the team or the budget shifts, the argument loses its footing."),
    ("that people will behave the way we expect", "We have no evidence of that yet, only our own intuition."),
    ("that the cost is what we think it is", "The hidden costs (maintenance, training, migration) are not on the table."),
)


def _challenge_lines(room: _Room, voice: dict, target: dict | None, turn: dict | None) -> list[str]:
    s = room.seed
    if target:
        claim, owner = _quote(target.get("text"), 90), target.get("speaker") or "the room"
    elif turn and _gist(turn.get("content", "")):
        claim, owner = _quote(_gist(turn.get("content", "")), 90), turn.get("speaker") or "the room"
    else:
        claim, owner = f"pursuing '{room.subject}' at all", "the room"
    assumption, consequence = _pick(_ASSUMPTIONS, s, 1)
    out = [
        f"We should not accept {owner}'s point yet: it assumes {assumption}. {consequence}",
        "",
        f"The point under test is \"{claim}\" It sounds reasonable, which is exactly why it needs pushing before we build on it; "
        f"from the {voice['lens']} angle the opposite case deserves a hearing.",
    ]
    if room.format == "brainstorm":
        mention = _mention_for(room, owner)
        out += ["", "Flip it around:", "",
                "- Do the exact opposite of the current favourite and see what survives.",
                f"- Treat '{room.subject}' as the wrong problem and look one step earlier.",
                "- Ask what a competitor would do to make this idea fail.", ""]
        if mention:
            out.append(f"{_handle(mention)}, which of these flips worries you most?")
        out += ["", "Q: What evidence would convince us the original idea is still the best one?"]
        return out
    votes = room.latest_votes()
    d, c = room.last_index("decision"), room.last_index("concern")
    vote = "REJECT" if d >= 0 and c < d else "CHANGES"
    out += [
        "",
        f"CONCERN: {owner}'s point assumes {assumption}, and nobody has tested that.",
        "Q: " + _pick(["What is the strongest evidence that this holds outside the best case?",
                       "Under which conditions would we regret this choice?",
                       "Who loses if we turn out to be wrong, and did we ask them?"], s, 2),
        "TODO: " + _pick(["Write down the top three assumptions and how each would be checked.",
                          "Ask one person outside this room to argue the opposite case."], s, 3),
        "",
        f"VOTE: {vote}",
    ]
    if votes and all(v == "READY" for v in votes.values()):
        out.insert(-2, "Unanimity this early is a warning sign, not a result.")
    return out


def _observer_lines(room: _Room) -> list[str]:
    heard = [(s.get("name"), room.airtime(s)) for s in room.speakers]
    busiest = max(heard, key=lambda x: x[1])[0] if heard else "nobody"
    concerns = room.of_type("concern")
    return [
        f"An observation on the discussion of \"{room.subject}\", without taking a side: so far {busiest} has had the most airtime, "
        f"and {len(concerns)} concern(s) and {len(room.of_type('question'))} question(s) have been raised.",
        "",
        "The arguments cluster around feasibility and risk; the user's perspective has had less attention." if concerns
        else "The discussion has stayed on possibilities; risks have barely been named yet.",
        "",
        "Q: Which of the raised questions does the group consider blocking?",
    ]


# --------------------------------------------------------------------------- synthesis

_REASONS = {
    "decided": "The facilitator judged the topic covered.",
    "max_rounds": "The round limit was reached.",
    "budget": "The budget ran low, so the room concluded with what it had.",
    "forced": "The discussion was concluded on request, from what had been said so far.",
}
_HIGH = re.compile(r"secur|sensitive|authori[sz]ation|another user|breach|leak|data loss|attack|privacy|outage|unauthori|crash|corrupt", re.IGNORECASE)
_LOW = re.compile(r"naming|style|polish|cosmetic|wording|docs?\b|document", re.IGNORECASE)


def _dedupe(points: list[dict], limit: int = 8) -> list[dict]:
    seen, out = set(), []
    for p in points:
        key = " ".join(str(p.get("text", "")).lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(p)
    return out[-limit:]


def _bullets(points: list[dict], empty: str) -> list[str]:
    items = _dedupe(points)
    if not items:
        return [f"- {empty}"]
    return [f"- {_short(p.get('text'), 160)} ({p.get('speaker') or 'unattributed'})" for p in items]


def _severity(point: dict, votes: dict) -> str:
    text = str(point.get("text", ""))
    vote = votes.get(point.get("speaker"))
    if _HIGH.search(text) or vote == "REJECT":
        return "critical"
    if _LOW.search(text):
        return "minor"
    return "major" if vote in ("CHANGES", None) else "minor"


def _perspectives(room: _Room) -> list[tuple[str, str]]:
    """(speaker, gist) per speaker, from their latest recent turn or their points."""
    names = [s.get("name") for s in room.speakers]
    for r in room.recent:
        if r.get("speaker") not in names:
            names.append(r.get("speaker"))
    out = []
    for name in names:
        turns = [r for r in room.recent if r.get("speaker") == name and r.get("content")]
        gist = _gist(turns[-1]["content"]) if turns else ""
        if not gist:
            own = [p for p in room.points if p.get("speaker") == name and p.get("type") in ("decision", "concern", "question", "todo")]
            gist = _short(own[-1]["text"], 140) if own else ""
        if gist:
            out.append((name, gist))
    return out


def _synthesis(meta: dict) -> str:
    room = _Room(meta, "synthesis")
    style = _facilitator_style(room.persona)
    votes = room.latest_votes()
    decisions, concerns = room.of_type("decision"), room.of_type("concern")
    questions = room.open_questions() or room.of_type("question")
    todos = room.of_type("todo") + room.of_type("assigned")
    views = _perspectives(room)
    tally = {v: sorted(n for n, x in votes.items() if x == v) for v in VOTES}
    reason = _REASONS.get(str(meta.get("reason") or ""), "")

    out = [LABEL, "", f"# Synthesis: {room.subject}", ""]
    intro = f"{room.persona.get('name') or 'The facilitator'} closes this {room.format} after {room.round} turn(s)."
    out += [" ".join(x for x in (intro, reason) if x), ""]

    # persona-shaped lead
    if style == "examiner":
        verdict = ("Not ready" if tally["REJECT"] else "Ready with changes" if tally["CHANGES"] or concerns else "Ready")
        out += ["## Verdict", "", f"**{verdict}.**" + (f" Votes: " + ", ".join(f"{v} {len(n)}" for v, n in tally.items() if n) + "." if votes else ""), ""]
        ranked = sorted(_dedupe(concerns), key=lambda p: ("critical", "major", "minor").index(_severity(p, votes)))
        out += ["## Findings by severity", ""]
        out += [f"- **{_severity(p, votes)}**: {_short(p.get('text'), 150)} ({p.get('speaker')})" for p in ranked] or ["- No findings were raised."]
        out.append("")
    elif style == "closer":
        lead = decisions[-1] if decisions else None
        line = f"**{_short(lead.get('text'), 160)}** (proposed by {lead.get('speaker')})" if lead else \
            f"**Proceed with the simplest option discussed for \"{room.subject}\", and review it at the first checkpoint.**"
        out += ["## Decision", "", line, ""]
    elif style == "bridge-builder":
        ready = tally["READY"]
        common = (f"{', '.join(ready)} can already support the direction." if ready else "Everyone who spoke wants a result that holds up in practice.")
        out += ["## Common ground", "", common, ""]
    elif style == "spark":
        out += ["## Idea clusters", ""]
        for name, content in ((r.get("speaker"), r.get("content", "")) for r in room.recent):
            ideas = _ideas(content)
            if ideas:
                out.append(f"- **{name}**: " + "; ".join(_short(i, 70) for i in ideas[:3]))
        if out[-1] == "":
            out.append("- The ideas are gathered in the key points below.")
        out.append("")
    elif style == "contrarian":
        out += ["## Objections the conclusion must survive", ""] + _bullets(concerns, "No objection was raised; treat the conclusion as untested.") + [""]

    out += ["## Key points", ""]
    out += [f"- **{n}**: {g}" for n, g in views] or ["- Too little was said to extract key points."]
    out.append("")

    out += ["## Agreements", ""]
    agreed = [f"- {', '.join(names)} voted {v}." for v, names in tally.items() if len(names) >= 2]
    if decisions:
        agreed.append(f"- {len(_dedupe(decisions))} proposed decision(s) met no rejection." if not tally["REJECT"] else
                      "- Decisions were proposed, but at least one participant rejects the current direction.")
    out += agreed or ["- No explicit agreement was recorded."]
    out.append("")

    out += ["## Disagreements and concerns", ""]
    split = [f"- {', '.join(names)}: {v}" for v, names in tally.items() if names] if len({*votes.values()}) > 1 else []
    out += split + (_bullets(concerns, "No concerns were raised.") if style not in ("examiner", "contrarian") else
                    [f"- {len(_dedupe(concerns))} concern(s), listed above."])
    out.append("")

    out += ["## Decisions", ""] + _bullets(decisions, "No decision was recorded.") + [""]
    out += ["## Open questions", ""] + _bullets(questions, "No open questions remain.") + [""]

    out += ["## Recommendations", ""]
    recs = [f"- {_short(p.get('text'), 150)} (owner: {p.get('speaker')})" for p in _dedupe(todos, 6)]
    if style == "impartial-chair":
        recs = [r.replace("(owner:", "(proposed by") for r in recs] or ["- The room made no proposals of its own."]
    else:
        if style == "socratic" and questions:
            recs.append(f"- Answer the open question first: \"{_short(questions[-1].get('text'), 100)}\"")
        if style == "examiner" and concerns:
            critical = any(_severity(p, votes) == "critical" for p in concerns)
            recs.append("- Fix the critical findings before release, then re-review the major ones." if critical
                        else "- Address the major findings, then confirm them in a short re-review.")
        if style == "closer":
            if not todos:
                recs += [f"- Carry out: {_short(p.get('text'), 140)} (owner: {p.get('speaker')})" for p in _dedupe(decisions, 3)]
            recs.append("- Review trigger: reopen the decision if a critical concern materialises in the first iteration.")
        if style == "contrarian":
            recs.append("- Revisit the conclusion if any listed objection turns out to hold.")
        if not recs:
            recs.append(f"- Turn the strongest point above into a concrete next step for \"{room.subject}\".")
    out += recs + [""]

    if style == "equalizer":
        out += ["## Every voice", ""]
        for seat in room.speakers:
            name = seat.get("name")
            gist = dict(views).get(name)
            turns = room.airtime(seat)
            out.append(f"- **{name}** ({turns} turn(s)): " + (f"contributed \"{_short(gist, 100)}\"." if gist else "had little airtime; hear them first next time."))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _generic(purpose: str, meta: dict) -> str:
    room = _Room(meta, purpose)
    views = _perspectives(room)
    out = [LABEL, "", f"Summary ({purpose}) of \"{room.subject}\", round {room.round}:", ""]
    out += [f"- {n}: {g}" for n, g in views] or ["- Nothing has been said yet."]
    for kind, title in (("decision", "Decisions"), ("question", "Open questions"), ("todo", "Actions")):
        pts = _dedupe(room.of_type(kind), 5)
        if pts:
            out += ["", f"{title}:"] + [f"- {_short(p.get('text'), 140)} ({p.get('speaker')})" for p in pts]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- provider

def _prompt_text(request: LLMRequest) -> str:
    parts = [request.system or ""]
    for message in request.messages or []:
        content = message.get("content", "") if isinstance(message, dict) else message
        if isinstance(content, list):
            parts.extend(str(block.get("text", "")) if isinstance(block, dict) else str(block) for block in content)
        else:
            parts.append(str(content))
    return "\n".join(parts)


class RehearsalProvider(Provider):
    """Offline, deterministic stand-in for a language model (always labelled as such)."""

    name = "rehearsal"
    offline = True
    model = "rehearsal"

    def __init__(self, pace: float = 0.0):
        #: Seconds each answer takes, so a person can watch a rehearsal unfold (the demo sets it).
        self.pace = pace

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        if self.pace > 0:
            time.sleep(self.pace)
        meta = request.meta or {}
        purpose = request.purpose
        if purpose in ("opening", "evaluation"):
            text = json.dumps(_decision(purpose, meta), ensure_ascii=False)
        elif purpose == "contribution":
            text = _contribution(meta)
        elif purpose == "synthesis":
            text = _synthesis(meta)
        else:
            text = _generic(purpose, meta)
        return LLMResponse(
            text=text, provider=self.name, model=self.model,
            input_tokens=estimate_tokens(_prompt_text(request)), output_tokens=estimate_tokens(text),
            latency_ms=int((time.perf_counter() - started) * 1000),
        )
