"""The rules the engine enforces on the facilitator's decisions (pure)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from facilitation.engine import Blocker, Decision, Facts, apply_guardrails, eligible

NAMES = {1: "Ana", 2: "Ben", 3: "Cy", 4: "Obs"}


def facts(**kw):
    base = {"speaking_ids": (1, 2, 3), "names": NAMES, "turns": {}, "words": {}, "last_id": None, "rounds_left": 5}
    base.update(kw)
    return Facts(**base)


def go(seat, question="Ana, what next?"):
    return Decision("continue", seat, question, "because")


def test_never_the_same_speaker_twice_in_a_row():
    d = apply_guardrails(go(1), facts(last_id=1, turns={1: 1}))
    assert d.next_participant_id == 2 and d.corrections[-1]["rule"] == "no_repeat"
    assert "Ana spoke last" in d.corrections[-1]["reason"] and d.question.startswith("Ben, ")


def test_a_lone_speaker_may_speak_again():
    d = apply_guardrails(go(1), facts(speaking_ids=(1,), last_id=1, turns={1: 3}))
    assert d.next_participant_id == 1 and d.corrections == []


def test_everyone_is_heard_before_anyone_speaks_a_third_time():
    d = apply_guardrails(go(1), facts(last_id=2, turns={1: 2, 2: 2, 3: 0}))
    assert d.next_participant_id == 3 and d.corrections[-1]["rule"] == "fair_share"
    assert "Cy has not been heard yet" in d.corrections[-1]["reason"]
    # a second turn is fine while someone is still waiting (loose fairness)
    assert apply_guardrails(go(1), facts(last_id=2, turns={1: 1, 2: 1, 3: 0})).corrections == []


def test_strict_fairness_lets_nobody_get_ahead():
    loose = apply_guardrails(go(1), facts(last_id=2, turns={1: 1, 2: 1, 3: 0}))
    strict = apply_guardrails(go(1), facts(last_id=2, turns={1: 1, 2: 1, 3: 0}, strict=True))
    assert loose.next_participant_id == 1 and strict.next_participant_id == 3
    assert strict.corrections[-1]["rule"] == "strict_share"
    assert "has had 1 turn while others have had 0" in strict.corrections[-1]["reason"]


def test_observers_and_unknown_seats_never_speak():
    for seat in (4, 99, None):
        d = apply_guardrails(go(seat), facts(last_id=1, turns={1: 1}))
        assert d.next_participant_id in (2, 3) and d.corrections[-1]["rule"] == "not_speaking"


def test_replacement_prefers_the_seat_asked_for_with_at():
    d = apply_guardrails(go(1), facts(last_id=1, turns={1: 1, 2: 0, 3: 0}, mentioned=(3,)))
    assert d.next_participant_id == 3 and d.corrections[-1]["rule"] == "floor_request"
    # ... but not past the rules: an addressed seat that may not speak is not chosen
    d = apply_guardrails(go(1), facts(last_id=1, turns={1: 1, 2: 0, 3: 0}, mentioned=(1,)))
    assert d.next_participant_id == 2


def test_replacement_is_the_least_heard_then_fewest_words():
    d = apply_guardrails(go(1), facts(last_id=1, turns={1: 1, 2: 1, 3: 1}, words={2: 300, 3: 100}))
    assert d.next_participant_id == 3


def test_no_conclusion_while_a_reject_stands():
    blocker = Blocker("reject", 2, "Ben", "REJECT no threat model")
    d = apply_guardrails(Decision("synthesize", None, "", "done"), facts(last_id=2, turns={1: 1, 2: 1, 3: 1}, blockers=(blocker,)))
    assert d.decision == "continue" and d.next_participant_id in (1, 3)
    assert d.corrections[-1]["rule"] == "open_objection" and "Ben's REJECT vote" in d.corrections[-1]["reason"]
    assert "Ben votes REJECT" in d.question


def test_no_conclusion_while_a_concern_is_open_and_the_raiser_is_not_asked_to_answer_it():
    blocker = Blocker("concern", 1, "Ana", "Stale sessions after a password change", "C1")
    d = apply_guardrails(Decision("synthesize", None, "", "done"), facts(last_id=3, turns={1: 1, 2: 1, 3: 1}, blockers=(blocker,)))
    assert d.next_participant_id == 2 and "Stale sessions after a password change" in d.question
    assert "concern C1" in d.corrections[-1]["reason"]


def test_a_conclusion_with_no_rounds_left_stands_despite_blockers():
    blocker = Blocker("concern", 1, "Ana", "x", "C1")
    d = apply_guardrails(Decision("synthesize", None, "", "done"), facts(rounds_left=0, blockers=(blocker,)))
    assert d.decision == "synthesize" and d.corrections == []


def test_a_valid_decision_is_untouched():
    d = go(2, "Ben, why?")
    assert apply_guardrails(d, facts(last_id=1, turns={1: 1})) is d


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.integers(1, 8), min_size=1, max_size=5, unique=True), chosen=st.none() | st.integers(0, 9),
       turns=st.dictionaries(st.integers(1, 8), st.integers(0, 4)), last=st.none() | st.integers(1, 8), strict=st.booleans(),
       mentioned=st.lists(st.integers(1, 8), max_size=2))
def test_fuzzed_guardrails_only_choose_allowed_seats(ids, chosen, turns, last, strict, mentioned):
    f = Facts(speaking_ids=tuple(ids), names={}, turns=turns, last_id=last, strict=strict, mentioned=tuple(mentioned), rounds_left=3)
    d = apply_guardrails(go(chosen), f)
    assert d.next_participant_id in eligible(f)
    if len(ids) > 1:
        assert d.next_participant_id != last


def test_a_seat_asked_for_with_at_gets_the_floor_over_the_facilitators_choice():
    # The facilitator chose Ben (allowed); Cy was asked for: Cy speaks, and the question is readdressed.
    d = apply_guardrails(go(2, "Ben, what next?"), facts(last_id=1, turns={1: 1, 2: 1, 3: 1}, mentioned=(3,)))
    assert d.next_participant_id == 3 and d.question == "Cy, what next?"
    assert d.corrections[-1] == {"rule": "floor_request", "from": 2, "to": 3,
                                 "reason": "Cy was asked for with @ and has not had the floor since; Cy speaks instead of Ben."}
    # Choosing one of the seats asked for is kept as is; several asked are served in the order asked.
    kept = apply_guardrails(go(3), facts(last_id=1, turns={1: 1, 2: 1, 3: 1}, mentioned=(2, 3)))
    assert kept.next_participant_id == 3 and kept.corrections == []
    first = apply_guardrails(go(1), facts(last_id=1, turns={1: 1, 2: 1, 3: 1}, mentioned=(3, 2)))
    assert first.next_participant_id == 3
    # Within the rules: the last speaker asked for again does not speak twice in a row.
    d = apply_guardrails(go(2), facts(last_id=3, turns={1: 1, 2: 1, 3: 1}, mentioned=(3,)))
    assert d.next_participant_id == 2 and d.corrections == []
    # A synthesis is not overridden by a request.
    assert apply_guardrails(Decision("synthesize", None, "", "done"), facts(last_id=1, turns={1: 1, 2: 1, 3: 1}, mentioned=(3,), rounds_left=3)).decision == "synthesize"
