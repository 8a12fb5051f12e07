import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from facilitation.engine import parse_decision, read_decision
from facilitation.engine.decision import GENERIC_OPENING

IDS = [5, 7, 9]


def test_valid_decision_inside_fences_and_prose():
    text = 'Sure.\n```json\n{"decision": "continue", "nextParticipantId": 7, "question": "Cost?", "reasoning": "money"}\n```\nDone.'
    d = parse_decision(text, speaking_ids=IDS, opening=False, rounds_left=2, last_id=5)
    assert (d.decision, d.next_participant_id, d.question, d.fallback) == ("continue", 7, "Cost?", None)


def test_unparsable_opening_falls_back_to_first_participant():
    d = parse_decision("I think we should begin.", speaking_ids=IDS, opening=True, rounds_left=5)
    assert (d.decision, d.next_participant_id, d.question, d.fallback) == ("continue", 5, GENERIC_OPENING, "unparsable")


def test_invalid_participant_keeps_the_question_and_goes_round_robin():
    text = '{"decision": "continue", "nextParticipantId": 42, "question": "What breaks first?", "reasoning": ""}'
    d = parse_decision(text, speaking_ids=IDS, opening=False, rounds_left=3, last_id=9)
    assert (d.next_participant_id, d.question, d.fallback) == (5, "What breaks first?", "invalid_participant")


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


NAMES = {"architect": 5, "security": 7, "sec": 7, "pragmatist": 9}


@pytest.mark.parametrize("ref", ["Security", "SECURITY", "security", "@security", "@Sec", "Security [id 7]", "Security (sec)", "id 7", 7.0])
def test_a_speaker_named_by_name_or_alias_is_salvaged(ref):
    text = json.dumps({"decision": "continue", "nextParticipantId": ref, "question": "Is it safe?", "reasoning": "r"})
    read = read_decision(text, speaking_ids=IDS, opening=False, rounds_left=2, names=NAMES)
    assert read.ok and read.decision.next_participant_id == 7
    if not isinstance(ref, float):
        assert read.decision.corrections[0]["rule"] == "speaker_named" and "seat 7" in read.decision.corrections[0]["reason"]


def test_other_speaker_keys_are_understood():
    read = read_decision('{"decision": "continue", "nextSpeaker": "Pragmatist", "question": "Q?"}', speaking_ids=IDS,
                         opening=False, rounds_left=2, names=NAMES)
    assert read.decision.next_participant_id == 9


def test_read_reports_what_is_wrong():
    cases = {
        "no json here": "unparsable",
        '{"decision": "maybe"}': "invalid_decision",
        '{"decision": "continue", "nextParticipantId": 5}': "missing_question",
        '{"decision": "continue", "nextParticipantId": 42, "question": "Why?"}': "invalid_participant",
    }
    for text, code in cases.items():
        read = read_decision(text, speaking_ids=IDS, opening=False, rounds_left=2)
        assert not read.ok and read.code == code and read.error, text
    assert "5, 7, 9" in read_decision('{"decision":"continue","nextParticipantId":1,"question":"x"}', speaking_ids=IDS,
                                      opening=False, rounds_left=1).error


def test_two_objects_and_trailing_prose():
    text = 'Thinking {not json} then {"decision": "synthesize", "reasoning": "done"} and more {"x": 1}'
    d = parse_decision(text, speaking_ids=IDS, opening=False, rounds_left=3, last_id=5)
    assert d.decision == "synthesize" and d.fallback is None


def test_no_speakers_never_raises():
    d = parse_decision("garbage", speaking_ids=[], opening=True, rounds_left=3)
    assert d.decision == "synthesize" and d.next_participant_id is None


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 50) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
_decision_objects = st.fixed_dictionaries(
    {}, optional={
        "decision": st.sampled_from(["continue", "synthesize", "CONTINUE", " Synthesize ", "stop", ""]) | _json_values,
        "nextParticipantId": st.sampled_from([5, 7, 9, 42, "7", "security", "@SEC", "Watcher", None, True, -1]) | _json_values,
        "question": st.text(max_size=40) | _json_values,
        "reasoning": st.text(max_size=20) | _json_values,
        "progress": _json_values,
    })
_texts = st.one_of(
    st.text(max_size=200),
    _decision_objects.map(json.dumps),
    st.tuples(st.text(max_size=30), _decision_objects.map(json.dumps), st.text(max_size=30)).map(lambda t: f"{t[0]}```json\n{t[1]}\n```{t[2]}"),
    st.binary(max_size=50),
    st.none(),
)


@settings(max_examples=400, deadline=None)
@given(text=_texts, ids=st.lists(st.integers(1, 12), unique=True, max_size=4), opening=st.booleans(),
       rounds_left=st.integers(-1, 5), last=st.none() | st.integers(1, 12))
def test_fuzzed_parser_never_raises_and_never_returns_a_seat_that_may_not_speak(text, ids, opening, rounds_left, last):
    names = {"security": 7, "sec": 7, "watcher": 11}
    d = parse_decision(text, speaking_ids=ids, opening=opening, rounds_left=rounds_left, last_id=last, names=names)
    assert d.decision in ("continue", "synthesize")
    if d.decision == "continue":
        assert d.next_participant_id in ids and d.question
    else:
        assert d.next_participant_id is None
    json.dumps(d.as_payload())
