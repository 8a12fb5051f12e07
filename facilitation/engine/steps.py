"""The steps the engine can ask for next."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    kind = "step"


@dataclass(frozen=True)
class Opening(Step):
    kind = "opening"


@dataclass(frozen=True)
class ParticipantTurn(Step):
    seat_id: int
    question: str
    kind = "turn"


@dataclass(frozen=True)
class ParallelTurns(Step):
    """Several seats asked at once (``@all``, a ballot, a brainstorm's opening round): one slot per seat,
    committed in this order once every slot has answered."""

    seat_ids: tuple
    question: str
    kind = "parallel_turns"


@dataclass(frozen=True)
class Evaluation(Step):
    rounds_left: int
    must_synthesize: bool
    kind = "evaluation"


@dataclass(frozen=True)
class Synthesis(Step):
    reason: str  # decided | max_rounds | budget | forced | no_speakers
    kind = "synthesis"


@dataclass(frozen=True)
class Concluded(Step):
    kind = "concluded"
