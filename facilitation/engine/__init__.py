"""The facilitator loop as a pure state machine: no I/O, no Django."""
from facilitation.engine.decision import Decision, parse_decision
from facilitation.engine.machine import (
    EngineState, SeatInfo, after_decision, after_synthesis, after_turn, force_synthesis, next_step,
)
from facilitation.engine.steps import Concluded, Evaluation, Opening, ParticipantTurn, Step, Synthesis

__all__ = [
    "Decision", "parse_decision", "EngineState", "SeatInfo", "next_step", "after_decision", "after_turn",
    "after_synthesis", "force_synthesis", "Step", "Opening", "ParticipantTurn", "Evaluation", "Synthesis", "Concluded",
]
