"""The room as structured state, replayed from its record: the one source of room state.

Pure Python, no Django. A ``RoomState`` is built from the seats and then fed the
room's record in ``seq`` order:

    state = RoomState(seats)
    state.record_question(seq, round, seat_id, "the facilitator's question")   # a decision
    state.record_turn(seq, round, seat_id, content, markers, status="ok")      # a contribution
    state.start_phase("consensus_vote")                                        # votes start over

What it tracks, for prompts, guardrails, the conclusion check and analytics:

- airtime per seat: turns given the floor, words spoken, the round last heard;
- votes: the latest per voter in the current phase (and every vote in ``vote_history``);
  a REJECT "stands unanswered" until another seat's turn names the voter (by name or
  ``@alias``, in the turn or in the question put to it) or the voter votes again;
- items raised with markers, each with a stable id in order of appearance (Q1, C1, D1, T1)
  and who raised it: questions are open until answered, concerns until addressed (or
  accepted by their own raiser with a later ``VOTE: READY``), decisions are recorded,
  TODOs go ``open -> assigned -> done`` (``ASSIGNED:`` and ``DONE:`` match a TODO by
  its words, or start one);
- the seats addressed with ``@alias`` in the latest turn, and every seat asked for the floor with
  ``@alias`` (``@all``: every speaking seat) that has not had it since (``requested``, in the order asked):
  a participant's ``@alias`` asks for the very next decision only, a person's (a comment) and ``@all``
  stand until that seat has had the floor;
- passes: a turn that is exactly ``NO_RESPONSE`` is a pass, counted apart from airtime;
- every question the facilitator asked, and whether its turn answered it.

A question or concern counts as answered/addressed by a later successful turn of
another seat when the facilitator's question for that turn took it up (half its
significant words), or the turn itself takes it up (most of its significant words,
or its whole text for a short item).
"""
import re
from dataclasses import dataclass, field
from functools import lru_cache

from facilitation.deliberation.markers import mention_forms, mention_targets

VOTE_VALUES = ("READY", "CHANGES", "REJECT")
ITEM_PREFIX = {"question": "Q", "concern": "C", "decision": "D", "todo": "T"}
SPEAKING_ROLES = ("participant", "devil_advocate")
ALL = "all"  # ``@all`` asks every speaking seat

_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_STOP = frozenset("""
about above after again against also among an and any are around because been before being below between both
but can could did does doing down during each even every from further had has have having here how into its
just like make many more most much must need needs only other ought over same shall should some such than that
their them then there these they this those through under until upon very want was were what when where which
while who whom whose why will with within without would your yours you our ours the for not yes one two get
it's let's we're they're isn't aren't don't doesn't won't can't
""".split())


def significant_words(text: str) -> frozenset[str]:
    """Lower-cased content words of four letters or more (or numbers), with a plural 's' dropped."""
    return _significant_words(str(text or ""))


@lru_cache(maxsize=2048)  # the room state is replayed from the same turns at every step
def _significant_words(text: str) -> frozenset[str]:
    words = set()
    for word in _WORD.findall(text.lower()):
        word = word.strip("'-")
        if word in _STOP or (len(word) < 4 and not word.isdigit()):
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return frozenset(words)


@lru_cache(maxsize=2048)
def _normal_text(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _normal(text: str) -> str:
    return _normal_text(str(text or ""))


def takes_up(text: str, item_text: str, share: float) -> bool:
    """Does ``text`` take up ``item_text``: at least ``share`` of its significant words, or all of a short one."""
    wanted = significant_words(item_text)
    if len(wanted) < 2:
        needle = _normal(item_text)
        return bool(needle) and needle in _normal(text)
    return len(wanted & significant_words(text)) / len(wanted) >= share


def word_count(text: str) -> int:
    return len(str(text or "").split())


@dataclass(frozen=True)
class SeatRef:
    """A seat as the state knows it."""

    id: int
    name: str
    role: str = "participant"
    alias: str = ""
    active: bool = True
    asked_to_vote: bool = False  # a ``background`` seat speaks only when asked for a vote

    @property
    def speaks(self) -> bool:
        return self.active and (self.role in SPEAKING_ROLES or (self.role == "background" and self.asked_to_vote))


@dataclass
class Airtime:
    turns: int = 0
    words: int = 0
    spoken: int = 0  # turns with something said (not timed out, not failed)
    passes: int = 0  # times given the floor and passed (NO_RESPONSE): not airtime
    last_round: int | None = None
    last_seq: int | None = None


@dataclass
class Vote:
    seat_id: int | None
    speaker: str
    value: str
    text: str
    round: int
    seq: int
    phase: str = ""
    answered: bool = False


@dataclass
class Item:
    id: str
    kind: str  # question | concern | decision | todo
    text: str
    seat_id: int | None
    speaker: str
    round: int
    seq: int
    status: str = "open"  # open | answered | addressed | accepted | recorded | assigned | done
    closed_by: str = ""
    closed_round: int | None = None
    owner: str = ""
    also_raised_by: list[str] = field(default_factory=list)

    @property
    def is_open(self) -> bool:
        return self.status in ("open", "assigned")

    def as_dict(self) -> dict:
        out = {"id": self.id, "kind": self.kind, "text": self.text, "seatId": self.seat_id, "by": self.speaker,
               "round": self.round, "seq": self.seq, "status": self.status}
        if self.closed_by:
            out["closedBy"] = self.closed_by
            out["closedRound"] = self.closed_round
        if self.owner:
            out["owner"] = self.owner
        return out


@dataclass
class Asked:
    """A question the facilitator put to a seat, and what became of it."""

    seq: int
    round: int
    seat_id: int | None
    text: str
    answered: bool | None = None  # None: that seat has not taken its turn yet
    turn_status: str = ""


class RoomState:
    def __init__(self, seats: list[SeatRef]):
        self.seats = list(seats)
        self.by_id = {s.id: s for s in self.seats}
        self.airtime: dict[int, Airtime] = {s.id: Airtime() for s in self.seats}
        self.votes: dict[int, Vote] = {}
        self.vote_history: list[Vote] = []
        self.items: list[Item] = []
        self.asked: list[Asked] = []
        self.mentions: list[int] = []
        self.requested: list[int] = []
        self._standing: set[int] = set()  # requests that outlive the next decision
        self.phase = ""
        self.turns = 0
        self.last_seat_id: int | None = None
        self.round = 0
        self._counters = {k: 0 for k in ITEM_PREFIX}

    # -- seats --------------------------------------------------------------------------

    @property
    def speakers(self) -> list[SeatRef]:
        return [s for s in self.seats if s.speaks]

    def _names_of(self, seat: SeatRef) -> list[str]:
        return [n for n in (seat.name, seat.alias) if n]

    def _named_in(self, text: str, seat: SeatRef) -> bool:
        low = str(text or "").lower()
        for name in self._names_of(seat):
            if re.search(r"(?<![\w@])@?" + re.escape(name.lower()) + r"(?![\w-])", low):
                return True
        return False

    # -- recording ------------------------------------------------------------------------

    def record_question(self, seq: int, round: int, seat_id: int | None, text: str) -> None:
        """The facilitator put ``text`` to ``seat_id`` (a decision to continue)."""
        if text:
            self.asked.append(Asked(seq=seq, round=round, seat_id=seat_id, text=" ".join(str(text).split())))
        self.requested = [i for i in self.requested if i in self._standing]

    def start_phase(self, name: str) -> None:
        """A new phase: votes start over (the history keeps the earlier ones)."""
        self.phase = name
        self.votes = {}

    def record_turn(self, seq: int, round: int, seat_id: int | None, content: str, markers: list[dict] | None = None,
                    status: str = "ok", speaker: str = "", passed: bool = False) -> None:
        seat = self.by_id.get(seat_id) if seat_id is not None else None
        name = speaker or (seat.name if seat else "Someone")
        content = str(content or "")
        ok = status == "ok" and bool(content.strip())
        self.turns += 1
        self.round = max(self.round, round)
        if seat_id in self.requested:
            self.requested.remove(seat_id)
            self._standing.discard(seat_id)
        if passed and seat_id is not None:
            air = self.airtime.setdefault(seat_id, Airtime())
            air.passes += 1
            self.last_seat_id = seat_id
            asked = self._pending_question(seat_id)
            if asked is not None:
                asked.answered, asked.turn_status = False, "passed"
            self.mentions = []
            return
        if seat_id is not None:
            air = self.airtime.setdefault(seat_id, Airtime())
            air.turns += 1
            air.last_round, air.last_seq = round, seq
            if ok:
                air.spoken += 1
                air.words += word_count(content)
            self.last_seat_id = seat_id
        asked = self._pending_question(seat_id)
        if asked is not None:
            asked.answered, asked.turn_status = ok, status
        self.mentions = []
        if not ok:
            return
        question = asked.text if asked is not None else ""
        markers = list(markers or [])
        # Raising a question or concern again is not an answer to it: those lines do not count.
        raised = {m.get("line") for m in markers if m.get("type") in ("question", "concern") and m.get("line") is not None}
        answer = "\n".join(line for n, line in enumerate(content.splitlines()) if n not in raised)
        self._close_items(seat_id, name, round, answer, question)
        self._answer_rejects(seat_id, content, question)
        for marker in markers:
            self._apply_marker(marker, seat_id, name, round, seq)
        self.mentions = self._mentioned(markers, seat_id)
        self.requested += [i for i in self.mentions if i not in self.requested]
        everyone = any(m.get("type") == "mention" and self._names_all(m.get("target")) for m in markers)
        if seat_id is None or everyone:  # a person's request, or @all: it stands until served
            self._standing.update(self.mentions)

    def _pending_question(self, seat_id) -> Asked | None:
        for asked in reversed(self.asked):
            if asked.answered is None:
                return asked if asked.seat_id == seat_id else None
        return None

    def _close_items(self, seat_id, name: str, round: int, content: str, question: str) -> None:
        for item in self.items:
            if item.status != "open" or item.kind not in ("question", "concern") or item.seat_id == seat_id:
                continue
            if (question and takes_up(question, item.text, 0.5)) or takes_up(content, item.text, 0.6):
                item.status = "answered" if item.kind == "question" else "addressed"
                item.closed_by, item.closed_round = name, round

    def _answer_rejects(self, seat_id, content: str, question: str) -> None:
        for vote in self.votes.values():
            if vote.value != "REJECT" or vote.answered or vote.seat_id == seat_id:
                continue
            voter = self.by_id.get(vote.seat_id)
            if voter is not None and (self._named_in(question, voter) or self._named_in(content, voter)):
                vote.answered = True

    def _new_item(self, kind: str, text: str, seat_id, name: str, round: int, seq: int, status: str = "open") -> Item:
        self._counters[kind] += 1
        item = Item(id=f"{ITEM_PREFIX[kind]}{self._counters[kind]}", kind=kind, text=text, seat_id=seat_id, speaker=name,
                    round=round, seq=seq, status=status)
        self.items.append(item)
        return item

    def _apply_marker(self, marker: dict, seat_id, name: str, round: int, seq: int) -> None:
        kind = marker.get("type")
        text = " ".join(str(marker.get("text") or "").split())
        if kind == "vote":
            value = str(marker.get("value") or "").upper()
            if value not in VOTE_VALUES:
                return
            vote = Vote(seat_id=seat_id, speaker=name, value=value, text=text, round=round, seq=seq, phase=self.phase)
            self.vote_history.append(vote)
            if seat_id is not None:
                self.votes[seat_id] = vote
            if value == "READY":  # the raiser accepts the outcome their own concerns are part of
                for item in self.items:
                    if item.kind == "concern" and item.status == "open" and item.seat_id == seat_id and seat_id is not None:
                        item.status, item.closed_by, item.closed_round = "accepted", name, round
            return
        if not text:
            return
        if kind in ("question", "concern", "decision"):
            key = _normal(text)
            for item in self.items:
                if item.kind == kind and _normal(item.text) == key and (item.is_open or kind == "decision"):
                    if name != item.speaker and name not in item.also_raised_by:
                        item.also_raised_by.append(name)
                    return
            self._new_item(kind, text, seat_id, name, round, seq, "recorded" if kind == "decision" else "open")
        elif kind == "todo":
            self._new_item("todo", text, seat_id, name, round, seq)
        elif kind in ("assigned", "done"):
            todo = self._matching_todo(text, done=kind == "done")
            if todo is None:
                todo = self._new_item("todo", text, seat_id, name, round, seq)
            if kind == "assigned":
                todo.status, todo.owner = "assigned", self._owner_in(text) or name
            else:
                todo.status, todo.closed_by, todo.closed_round = "done", name, round
                todo.owner = todo.owner or name

    def _matching_todo(self, text: str, done: bool) -> Item | None:
        open_todos = [i for i in self.items if i.kind == "todo" and i.status in (("open", "assigned") if done else ("open",))]
        for todo in reversed(open_todos):
            if takes_up(text, todo.text, 0.5) or takes_up(todo.text, text, 0.5):
                return todo
        return None

    def _owner_in(self, text: str) -> str:
        for target in mention_targets(text):
            seat = self.mentioned_seat(target)
            return seat.name if seat is not None else target
        return ""

    def mentioned_seat(self, target) -> SeatRef | None:
        """The seat an ``@target`` names: the first seat (in seat order) whose alias or name it is, in any casing.
        Never a seat id: an alias may be all digits (``@42`` is the agent whose alias is 42)."""
        for form in mention_forms(target):
            low = form.lower()
            for seat in self.seats:
                if low in (seat.alias.lower(), seat.name.lower()):
                    return seat
        return None

    @staticmethod
    def _names_all(target) -> bool:
        return any(form.lower() == ALL for form in mention_forms(target))

    def _mentioned(self, markers: list[dict], seat_id) -> list[int]:
        found = []
        for marker in markers:
            if marker.get("type") != "mention":
                continue
            target = marker.get("target") or marker.get("alias") or marker.get("text")
            seat = self.mentioned_seat(target)
            if seat is None and self._names_all(target):
                seats = self.speakers
            else:
                seats = [seat] if seat is not None else []
            found += [s.id for s in seats if s.id != seat_id and s.speaks and s.id not in found]
        return found

    # -- views ----------------------------------------------------------------------------

    def of_kind(self, kind: str) -> list[Item]:
        return [i for i in self.items if i.kind == kind]

    @property
    def open_questions(self) -> list[Item]:
        return [i for i in self.items if i.kind == "question" and i.status == "open"]

    @property
    def open_concerns(self) -> list[Item]:
        return [i for i in self.items if i.kind == "concern" and i.status == "open"]

    @property
    def decisions(self) -> list[Item]:
        return self.of_kind("decision")

    @property
    def todos(self) -> list[Item]:
        return self.of_kind("todo")

    @property
    def standing_rejects(self) -> list[Vote]:
        """REJECT votes nobody has answered yet (each voter's latest vote)."""
        return [v for v in self.votes.values() if v.value == "REJECT" and not v.answered]

    @property
    def unheard(self) -> list[SeatRef]:
        return [s for s in self.speakers if self.floor_of(s.id) == 0]

    def floor_of(self, seat_id: int) -> int:
        """Times the seat had the floor: its turns and its passes."""
        air = self.airtime.get(seat_id, Airtime())
        return air.turns + air.passes

    @property
    def last_asked(self) -> Asked | None:
        return self.asked[-1] if self.asked else None

    def turns_of(self, seat_id: int) -> int:
        return self.airtime.get(seat_id, Airtime()).turns

    def words_of(self, seat_id: int) -> int:
        return self.airtime.get(seat_id, Airtime()).words

    def tally(self) -> dict:
        counts = {v.lower(): 0 for v in VOTE_VALUES}
        for vote in self.votes.values():
            counts[vote.value.lower()] += 1
        return counts


def replay(seats: list[SeatRef], records: list[dict]) -> RoomState:
    """A state from plain records in seq order.

    Each record is ``{"kind": "decision", "seq", "round", "seatId" (asked), "question"}``,
    ``{"kind": "contribution", "seq", "round", "seatId", "speaker", "content", "markers", "status"}``
    or ``{"kind": "phase", "name"}``; anything else is ignored.
    """
    return replay_onto(RoomState(seats), records)


def replay_onto(state: RoomState, records: list[dict]) -> RoomState:
    """``state`` fed ``records`` (as ``replay`` feeds them), changed in place and returned."""
    for rec in records:
        kind = rec.get("kind")
        if kind == "decision":
            state.record_question(rec.get("seq", 0), rec.get("round", 0), rec.get("seatId"), rec.get("question") or "")
        elif kind == "contribution":
            state.record_turn(rec.get("seq", 0), rec.get("round", 0), rec.get("seatId"), rec.get("content") or "",
                              rec.get("markers") or [], rec.get("status") or "ok", rec.get("speaker") or "",
                              passed=bool(rec.get("passed")))
        elif kind == "phase":
            state.start_phase(rec.get("name") or "")
    return state
