"""The room as the prompt text shows it: seats, airtime, votes, open items and the latest turns."""
import re

from facilitation.llm.rehearsal.reading import Reading, turn_markers
from facilitation.llm.rehearsal.text import digest, subject, vote_of

_SEAT_REF = re.compile(r'(\[|seat=")(\d+)(\]|")')  # how a prompt names a seat: [12] in lines, seat="12" on a turn


def _seed(reading: Reading, purpose: str) -> int:
    """The seed of the room's variation: the prompt with each seat named by its place in the room instead of its id
    (ids depend on what the database held before), so that one room gives the same answers wherever it runs."""
    places = {seat.id: n for n, seat in enumerate(reading.seats)}

    def place(match: re.Match) -> str:
        number = int(match.group(2))
        return f"{match.group(1)}#{places[number]}{match.group(3)}" if number in places else match.group(0)

    me = places.get(reading.me.id, -1) if reading.me else None
    return digest(purpose, _SEAT_REF.sub(place, reading.text), reading.style, me)


SPEAKING_ROLES = ("participant", "devil_advocate")


class Room:
    def __init__(self, reading: Reading, purpose: str):
        self.reading = reading
        self.purpose = purpose
        self.seed = _seed(reading, purpose)
        self.topic = reading.topic
        self.subject = subject(self.topic)
        self.format = reading.format
        self.round = reading.round
        self.max_rounds = reading.max_rounds
        self.rounds_left = reading.rounds_left
        self.speakers = [s.as_dict() for s in reading.seats if s.role in SPEAKING_ROLES and s.active]
        self.by_name = {s["name"]: s for s in self.speakers}
        self.by_id = {s["id"]: s for s in self.speakers}
        self.last = self.by_id.get(reading.last_id)
        self.recent = reading.turns
        self.persona = {"key": reading.style, "name": reading.facilitator_name}
        self.speaker = reading.me.as_dict() if reading.me else {}
        self.question = reading.question
        self.mentioned = [self.by_id[i] for i in reading.mentioned if i in self.by_id]
        allowed = reading.allowed
        self.allowed = [self.by_id[i] for i in allowed if i in self.by_id] if allowed is not None else None
        self.points = self._points()

    def _points(self) -> list[dict]:
        """Open items and decisions from the room state, the votes, and the markers of the verbatim turns, by round."""
        points, seen = [], set()
        for item in self.reading.items:
            points.append({"speaker": item["speaker"], "type": item["type"], "text": item["text"], "round": item["round"],
                           "id": item["id"], "open": item["open"]})
            seen.add((item["type"], item["text"]))
        for point in turn_markers(self.reading):
            if point["type"] == "vote" or (point["type"], point["text"]) in seen:
                continue
            points.append({**point, "open": False})
        for name, vote in self.reading.votes.items():
            points.append({"speaker": name, "type": "vote", "text": vote["value"], "value": vote["value"], "round": vote["round"]})
        points.sort(key=lambda p: p.get("round") or 0)
        return points

    # -- who spoke how much
    def airtime(self, seat: dict) -> int:
        return int(self.reading.airtime.get(seat.get("id"), {}).get("turns", 0))

    def words(self, seat: dict) -> int:
        return int(self.reading.airtime.get(seat.get("id"), {}).get("words", 0))

    def last_round(self, seat: dict) -> int:
        last = self.reading.airtime.get(seat.get("id"), {}).get("lastRound")
        return -1 if last is None else int(last)

    def last_heard(self, seat: dict) -> int:
        return self.last_round(seat)

    def heard(self, seat: dict) -> bool:
        return self.airtime(seat) > 0

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
        return {name: vote["value"] for name, vote in self.reading.votes.items()}

    def last_index(self, kind: str) -> int:
        return max((i for i, p in enumerate(self.points) if p.get("type") == kind), default=-1)

    def open_questions(self) -> list[dict]:
        return [p for p in self.points if p.get("type") == "question" and p.get("open")]

    def open_concerns(self) -> list[dict]:
        return [p for p in self.points if p.get("type") == "concern" and p.get("open")]

    def unanswered_concern(self) -> dict | None:
        concerns = self.open_concerns()
        return concerns[-1] if concerns else None

    @property
    def rejects(self) -> list[dict]:
        return self.reading.rejects

    def latest_point_not_by(self, name: str | None, kinds=("decision", "concern", "question", "todo")) -> dict | None:
        for p in reversed(self.points):
            if p.get("type") in kinds and p.get("speaker") != name and p.get("text"):
                return p
        return None

    def preferred_point(self, name: str | None, *groups) -> dict | None:
        """The latest point not by ``name`` from the first group of kinds that has one (open items first)."""
        for kinds in groups:
            opened = [p for p in self.points if p.get("type") in kinds and p.get("speaker") != name and p.get("open")]
            if opened:
                return opened[-1]
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
        """Distance in seat order after the last speaker (0 = next in turn)."""
        n = len(self.speakers)
        base = self.speakers.index(self.last) if self.last in self.speakers else -1
        return (self.speakers.index(seat) - base - 1) % n

    def candidates(self) -> list[dict]:
        """Who may speak next: the room state's "May speak next", else everyone but the last speaker."""
        if self.allowed:
            return list(self.allowed)
        others = [s for s in self.speakers if s is not self.last]
        return others or list(self.speakers)


__all__ = ["Room", "vote_of"]
