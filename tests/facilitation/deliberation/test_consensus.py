"""Consensus rules and templates (pure)."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from facilitation.deliberation.consensus import Ballot, ConsensusRules, RulesError, evaluate, tally
from facilitation.deliberation.templates import TEMPLATES, get_template


def ballots(*values, human=()):
    return [Ballot(voter=str(i), value=v, human=i in human, seq=i) for i, v in enumerate(values)]


def test_default_rules_are_two_thirds_ready_reject_blocks_no_person_needed():
    rules = ConsensusRules.parse(None)
    assert (rules.threshold, rules.reject_blocks, rules.human_required) == (0.67, True, False)


def test_threshold_counts_ready_among_all_eligible_voters_not_only_those_who_voted():
    rules = ConsensusRules()
    assert not evaluate(rules, ballots("READY", "READY"), eligible=4).reached  # 2 of 4
    assert evaluate(rules, ballots("READY", "READY", "READY"), eligible=4).reached  # 3 of 4
    assert evaluate(rules, ballots("READY", "READY", "CHANGES"), eligible=3).reached is False  # 2 of 3 = 0.666


def test_a_standing_reject_blocks_unless_the_rules_say_otherwise():
    votes = ballots("READY", "READY", "READY", "REJECT")
    blocked = evaluate(ConsensusRules(threshold=0.5), votes, eligible=4)
    assert not blocked.reached and "REJECT" in blocked.reason
    assert evaluate(ConsensusRules(threshold=0.5, reject_blocks=False), votes, eligible=4).reached


def test_a_persons_vote_adds_a_voice_and_does_not_stand_in_for_a_seat_that_has_not_voted():
    rules = ConsensusRules()
    people = [Ballot(voter=f"person:{name}", value="READY", human=True, seq=i, name=name)
              for i, name in enumerate(("Ana", "Ben"))]
    verdict = evaluate(rules, people, eligible=2)  # two seats, neither has voted
    assert not verdict.reached and "2 of 4 voters" in verdict.reason
    seats = [Ballot(voter=str(i), value="READY", seq=10 + i) for i in (7, 8)]
    assert evaluate(rules, people + seats, eligible=2).reached  # 4 of 4
    one_seat = evaluate(rules, people + seats[:1], eligible=2)
    assert one_seat.reached and one_seat.reason.startswith("3 of 4")
    assert not evaluate(rules, people[:1] + seats[:1], eligible=2).reached  # 2 of 3


def test_a_standing_reject_names_who_cast_it():
    votes = [Ballot(voter="4", value="REJECT", seq=1, name="Security"), Ballot(voter="5", value="READY", seq=2, name="Lead")]
    verdict = evaluate(ConsensusRules(), votes, eligible=2)
    assert "(Security)" in verdict.reason and "4" not in verdict.reason


def test_human_required_needs_a_persons_vote():
    rules = ConsensusRules(threshold=0.5, human_required=True)
    assert not evaluate(rules, ballots("READY", "READY"), eligible=2).reached
    assert evaluate(rules, ballots("READY", "READY", human={1}), eligible=2).reached


def test_no_votes_is_no_consensus_even_at_threshold_zero():
    assert not evaluate(ConsensusRules(threshold=0.0), [], eligible=3).reached


@pytest.mark.parametrize("raw, message", [
    ({"threshold": 1.5}, "0 to 1"), ({"threshold": -0.1}, "0 to 1"), ({"threshold": "high"}, "0 to 1"),
    ({"threshold": True}, "0 to 1"), ({"rejectBlocks": "yes"}, "true or false"), ({"quorum": 3}, "Unknown"),
    ("0.5", "object"),
])
def test_bad_rules_are_refused_with_a_clear_message(raw, message):
    with pytest.raises(RulesError, match=message):
        ConsensusRules.parse(raw)


def test_rules_round_trip_through_the_payload():
    rules = ConsensusRules(threshold=0.8, reject_blocks=False, human_required=True)
    assert ConsensusRules.parse(rules.as_payload()) == rules
    assert ConsensusRules.load(rules.dump()) == rules


@given(st.lists(st.sampled_from(["READY", "CHANGES", "REJECT"]), max_size=8), st.integers(0, 10),
       st.floats(0, 1), st.booleans(), st.booleans())
def test_evaluation_is_total_and_consistent(values, eligible, threshold, reject_blocks, human_required):
    votes = ballots(*values)
    verdict = evaluate(ConsensusRules(threshold, reject_blocks, human_required), votes, eligible)
    assert sum(verdict.tally.values()) == len(values) == sum(tally(votes).values())
    if verdict.reached:
        assert values and (not reject_blocks or "REJECT" not in values) and not human_required
    assert verdict.reason


def test_templates_have_phases_with_instructions_and_a_known_voting_mode():
    assert set(TEMPLATES) == {"feature", "code_review", "adr"}
    for template in TEMPLATES.values():
        assert len(template.phases) >= 2
        assert len({p.key for p in template.phases}) == len(template.phases)
        for phase in template.phases:
            assert phase.instructions and phase.voting in {"none", "open", "ballot"}
            assert phase.advance in {"manual", "consensus", "all_voted"}
        assert template.next_phase(template.phases[-1].key) is None
        assert template.next_phase(template.phases[0].key) == template.phases[1]
    with pytest.raises(KeyError, match="Unknown template"):
        get_template("waterfall")


@pytest.mark.parametrize(("values", "eligible", "threshold", "says"), [
    (("READY", "READY", "CHANGES"), 3, 0.67, "2 of 3 voters are READY (66.7% < 67%)."),  # was "67% < 67%"
    (("READY", "READY", "READY"), 4, 0.67, "3 of 4 voters are READY (75% >= 67%)."),
    (("READY", "READY"), 4, 0.5, "2 of 4 voters are READY (50% >= 50%)."),
    (("READY", "READY", "CHANGES"), 3, 0.6667, "2 of 3 voters are READY (66.667% < 66.67%)."),
    (("READY", "CHANGES", "CHANGES"), 3, 0.67, "1 of 3 voters is READY (33% < 67%)."),
    (("CHANGES", "CHANGES"), 2, 0.5, "0 of 2 voters are READY (0% < 50%)."),
    (("READY",), 1, 0.67, "1 of 1 voter is READY (100% >= 67%)."),
])
def test_the_reason_never_shows_a_share_short_of_the_threshold_as_equal_to_it(values, eligible, threshold, says):
    verdict = evaluate(ConsensusRules(threshold=threshold), ballots(*values), eligible=eligible)
    assert verdict.reason == says
