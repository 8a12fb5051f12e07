from facilitation.engine import parse_decision
from facilitation.engine.decision import GENERIC_FOLLOW_UP, GENERIC_OPENING

IDS = [5, 7, 9]


def test_valid_decision_inside_fences_and_prose():
    text = 'Sure.\n```json\n{"decision": "continue", "nextParticipantId": 7, "question": "Cost?", "reasoning": "money"}\n```\nDone.'
    d = parse_decision(text, speaking_ids=IDS, opening=False, rounds_left=2, last_id=5)
    assert (d.decision, d.next_participant_id, d.question, d.fallback) == ("continue", 7, "Cost?", None)


def test_unparsable_opening_falls_back_to_first_participant():
    d = parse_decision("I think we should begin.", speaking_ids=IDS, opening=True, rounds_left=5)
    assert (d.decision, d.next_participant_id, d.question, d.fallback) == ("continue", 5, GENERIC_OPENING, "unparsable")


def test_invalid_participant_falls_back_round_robin():
    text = '{"decision": "continue", "nextParticipantId": 42, "question": "?", "reasoning": ""}'
    d = parse_decision(text, speaking_ids=IDS, opening=False, rounds_left=3, last_id=9)
    assert (d.next_participant_id, d.question, d.fallback) == (5, GENERIC_FOLLOW_UP, "invalid_participant")


def test_unparsable_evaluation_without_rounds_synthesizes():
    d = parse_decision("{broken", speaking_ids=IDS, opening=False, rounds_left=0, last_id=5)
    assert d.decision == "synthesize" and d.fallback == "unparsable"


def test_continue_when_no_rounds_left_is_overridden():
    text = '{"decision": "continue", "nextParticipantId": 7, "question": "more?", "reasoning": "x"}'
    d = parse_decision(text, speaking_ids=IDS, opening=False, rounds_left=0)
    assert d.decision == "synthesize" and d.fallback == "rounds_exhausted"


def test_synthesize_at_opening_is_not_allowed():
    d = parse_decision('{"decision": "synthesize", "reasoning": "done"}', speaking_ids=IDS, opening=True, rounds_left=5)
    assert d.decision == "continue" and d.fallback == "synthesize_at_opening"


def test_string_ids_and_missing_question():
    ok = parse_decision('{"decision":"continue","nextParticipantId":"9","question":"Go"}', speaking_ids=IDS, opening=False, rounds_left=1)
    assert ok.next_participant_id == 9 and ok.fallback is None
    missing = parse_decision('{"decision":"continue","nextParticipantId":9}', speaking_ids=IDS, opening=False, rounds_left=1, last_id=9)
    assert missing.fallback == "missing_question" and missing.next_participant_id == 5
