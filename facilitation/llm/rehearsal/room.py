"""The room as the request's meta shows it: speakers, airtime, recent turns and gathered points."""
from facilitation.llm.rehearsal.text import digest, subject, vote_of

SPEAKING_ROLES = ("participant", "devil_advocate")


class Room:
    def __init__(self, meta: dict, purpose: str):
        self.meta = meta
        self.purpose = purpose
        self.seed = digest(purpose, meta)
        self.topic = str(meta.get("topic") or "")
        self.subject = subject(self.topic)
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
            if p.get("type") == "vote" and vote_of(p):
                votes[p.get("speaker")] = vote_of(p)
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
