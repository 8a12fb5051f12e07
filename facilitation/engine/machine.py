"""Given the room's persisted engine state, the next step; given a step's outcome, the next state.

The state is a small JSON object stored on the room::

    {"phase": "opening" | "turn" | "parallel" | "evaluation" | "synthesis" | "done",
     "round": int, "maxRounds": int,
     "nextSeatId": int | None, "question": str,       # the upcoming turn (kept across pause)
     "parallelSeatIds": [int], "staged": {slot: turn}, # several seats asked at once, and the answers in so far
     "lastSeatId": int | None, "synthesisReason": str,
     "airtime": {"<seatId>": turns}}
"""
from copy import deepcopy
from dataclasses import dataclass, field

from facilitation.engine.decision import Decision
from facilitation.engine.steps import Concluded, Evaluation, Opening, ParallelTurns, ParticipantTurn, Step, Synthesis


@dataclass(frozen=True)
class SeatInfo:
    id: int
    name: str
    role: str
    active: bool = True
    #: A ``background`` seat speaks only when asked for a vote: while the phase takes votes and it has not voted.
    asked_to_vote: bool = False

    @property
    def speaks(self) -> bool:
        return self.active and (self.role in ("participant", "devil_advocate") or (self.role == "background" and self.asked_to_vote))


@dataclass
class EngineState:
    phase: str = "opening"
    round: int = 0
    maxRounds: int = 5
    nextSeatId: int | None = None
    question: str = ""
    lastSeatId: int | None = None
    synthesisReason: str = ""
    airtime: dict = field(default_factory=dict)
    parallelSeatIds: list = field(default_factory=list)
    staged: dict = field(default_factory=dict)

    @classmethod
    def load(cls, data: dict | None, max_rounds: int, round: int = 0) -> "EngineState":
        data = dict(data or {})
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        state = cls(**known)
        state.maxRounds = max_rounds
        state.round = round if "round" not in data else state.round
        return state

    def dump(self) -> dict:
        """The state as stored, sharing nothing with this object (what ``dataclasses.asdict`` gives, written out:
        every step stores it, and ``asdict`` walks each value through its generic copy)."""
        return {
            "phase": self.phase, "round": self.round, "maxRounds": self.maxRounds, "nextSeatId": self.nextSeatId,
            "question": self.question, "lastSeatId": self.lastSeatId, "synthesisReason": self.synthesisReason,
            "airtime": dict(self.airtime), "parallelSeatIds": list(self.parallelSeatIds),
            "staged": deepcopy(self.staged) if self.staged else {},
        }

    @property
    def rounds_left(self) -> int:
        return max(0, self.maxRounds - self.round)


def speaking(seats: list[SeatInfo]) -> list[SeatInfo]:
    return [s for s in seats if s.speaks]


def round_robin_after(seats: list[SeatInfo], last_id: int | None) -> SeatInfo | None:
    """The speaking seat after ``last_id`` in seat order (the first one when there is no last)."""
    speakers = speaking(seats)
    if not speakers:
        return None
    ids = [s.id for s in speakers]
    if last_id not in ids:
        return speakers[0]
    return speakers[(ids.index(last_id) + 1) % len(ids)]


def next_step(state: EngineState, seats: list[SeatInfo]) -> Step:
    if state.phase == "done":
        return Concluded()
    if state.phase == "synthesis":
        return Synthesis(state.synthesisReason or "decided")
    if not speaking(seats):
        return Synthesis("no_speakers")
    if state.phase == "opening":
        return Opening()
    if state.phase == "evaluation":
        return Evaluation(rounds_left=state.rounds_left, must_synthesize=state.rounds_left <= 0)
    if state.phase == "parallel" and state.parallelSeatIds:
        return ParallelTurns(seat_ids=tuple(state.parallelSeatIds), question=state.question)
    # phase "turn": max rounds is a hard ceiling whatever was decided before
    if state.round >= state.maxRounds:
        return Synthesis("max_rounds")
    speakers = {s.id: s for s in speaking(seats)}
    seat_id = state.nextSeatId if state.nextSeatId in speakers else round_robin_after(seats, state.lastSeatId).id
    return ParticipantTurn(seat_id=seat_id, question=state.question)


def after_decision(state: EngineState, decision: Decision, together: tuple = ()) -> EngineState:
    """Apply a facilitator decision (opening or evaluation). ``together``: several seats asked at once
    (the decision's speaker first), their turns run in parallel; at most the rounds left."""
    if decision.decision == "synthesize" or state.round >= state.maxRounds:
        state.phase = "synthesis"
        state.synthesisReason = "max_rounds" if state.round >= state.maxRounds else "decided"
        state.nextSeatId, state.question = None, ""
        return state
    state.question = decision.question
    seats = list(together)[: state.rounds_left]
    if len(seats) > 1:
        state.phase = "parallel"
        state.parallelSeatIds, state.staged, state.nextSeatId = seats, {}, seats[0]
        return state
    state.phase = "turn"
    state.nextSeatId = decision.next_participant_id
    return state


def after_parallel(state: EngineState, seat_ids: list) -> EngineState:
    """Every parallel turn is committed, in order: each is a round, as a single turn is."""
    for seat_id in seat_ids:
        after_turn(state, seat_id)
    state.parallelSeatIds, state.staged = [], {}
    return state


def after_turn(state: EngineState, seat_id: int) -> EngineState:
    """A participant turn was recorded (whatever its status): the round advances."""
    state.round += 1
    state.lastSeatId = seat_id
    key = str(seat_id)
    state.airtime[key] = state.airtime.get(key, 0) + 1
    state.nextSeatId, state.question = None, ""
    state.phase = "evaluation"
    return state


def force_synthesis(state: EngineState, reason: str) -> EngineState:
    state.phase = "synthesis"
    state.synthesisReason = reason
    state.nextSeatId, state.question = None, ""
    return state


def after_synthesis(state: EngineState) -> EngineState:
    state.phase = "done"
    return state
