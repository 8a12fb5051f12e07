"""The facilitator loop as a pure state machine: no I/O, no Django."""
from facilitation.engine.decision import Decision, DecisionRead, decide_from, parse_decision, read_decision
from facilitation.engine.guardrails import Blocker, Facts, apply_guardrails, eligible, pick_speaker
from facilitation.engine.machine import (
    EngineState, SeatInfo, after_decision, after_parallel, after_synthesis, after_turn, force_synthesis, next_step,
)
from facilitation.engine.steps import Concluded, Evaluation, Opening, ParallelTurns, ParticipantTurn, Step, Synthesis

__all__ = [
    "Decision", "DecisionRead", "decide_from", "parse_decision", "read_decision",
    "Blocker", "Facts", "apply_guardrails", "eligible", "pick_speaker", "EngineState", "SeatInfo", "next_step", "after_decision", "after_parallel", "after_turn",
    "after_synthesis", "force_synthesis", "Step", "Opening", "ParallelTurns", "ParticipantTurn", "Evaluation", "Synthesis", "Concluded",
]
