"""The pure state machine: no Django, no I/O."""
from facilitation.engine import (
    Decision, EngineState, Evaluation, Opening, ParticipantTurn, SeatInfo, Synthesis, after_decision, after_turn,
    force_synthesis, next_step,
)

SEATS = [SeatInfo(1, "A", "participant"), SeatInfo(2, "O", "observer"), SeatInfo(3, "D", "devil_advocate")]


def test_opening_then_chosen_speaker_then_evaluation():
    state = EngineState(maxRounds=3)
    assert isinstance(next_step(state, SEATS), Opening)
    state = after_decision(state, Decision("continue", 3, "Why?", "r"))
    step = next_step(state, SEATS)
    assert step == ParticipantTurn(seat_id=3, question="Why?")
    state = after_turn(state, 3)
    assert state.round == 1 and state.airtime == {"3": 1}
    assert next_step(state, SEATS) == Evaluation(rounds_left=2, must_synthesize=False)


def test_max_rounds_is_a_hard_ceiling():
    state = EngineState(maxRounds=1)
    state = after_decision(state, Decision("continue", 1, "Q", "r"))
    state = after_turn(state, 1)
    step = next_step(state, SEATS)
    assert step == Evaluation(rounds_left=0, must_synthesize=True)
    # Even a "continue" after the last round goes to synthesis.
    state = after_decision(state, Decision("continue", 3, "more", "r"))
    assert state.phase == "synthesis" and state.synthesisReason == "max_rounds"
    assert isinstance(next_step(state, SEATS), Synthesis)


def test_turn_phase_past_ceiling_synthesizes():
    state = EngineState(phase="turn", round=2, maxRounds=2, nextSeatId=1, question="q")
    assert next_step(state, SEATS) == Synthesis("max_rounds")


def test_observers_never_speak_even_if_stored_as_next():
    state = EngineState(phase="turn", round=0, maxRounds=5, nextSeatId=2, question="q", lastSeatId=1)
    step = next_step(state, SEATS)
    assert isinstance(step, ParticipantTurn) and step.seat_id == 3


def test_no_speaking_seats_goes_straight_to_synthesis():
    only_observers = [SeatInfo(2, "O", "observer"), SeatInfo(4, "X", "participant", active=False)]
    assert next_step(EngineState(), only_observers) == Synthesis("no_speakers")


def test_force_synthesis_and_state_roundtrip():
    state = force_synthesis(EngineState(phase="turn", nextSeatId=1, question="q"), "forced")
    loaded = EngineState.load(state.dump(), max_rounds=5)
    assert loaded.phase == "synthesis" and loaded.synthesisReason == "forced" and loaded.nextSeatId is None


def test_dump_holds_every_field_and_shares_nothing_with_the_state():
    from dataclasses import asdict, fields

    staged = {"0": {"seatId": 1, "markers": [{"type": "vote", "value": "yes"}], "data": {"pass": True}}}
    state = EngineState(phase="parallel", round=2, maxRounds=6, nextSeatId=3, question="q", lastSeatId=1,
                        synthesisReason="", airtime={"1": 2}, parallelSeatIds=[1, 3], staged=staged)
    dumped = state.dump()
    assert dumped == asdict(state) and set(dumped) == {f.name for f in fields(EngineState)}
    dumped["staged"]["0"]["markers"].append("x")
    dumped["airtime"]["1"] = 9
    dumped["parallelSeatIds"].append(4)
    assert state.staged["0"]["markers"] == [{"type": "vote", "value": "yes"}]
    assert state.airtime == {"1": 2} and state.parallelSeatIds == [1, 3]
