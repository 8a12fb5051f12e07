"""The moderator's narrative answer, parsed: each key decision, next step and blocker once."""
import json

from facilitation.workspace.prompts import parse_narrative_answer


def test_repeated_items_are_kept_once_in_their_order():
    answer = json.dumps({"summary": "Round 1 in short.",
                         "keyDecisions": ["Ship in small steps.", "Keep the cron job.", " Ship in small steps. ", "Keep the cron job."],
                         "blockers": [4, 2, 4, True], "nextSteps": ["Measure.", "Measure."]})
    parsed = parse_narrative_answer(answer)
    assert parsed["keyDecisions"] == ["Ship in small steps.", "Keep the cron job."]
    assert parsed["blockers"] == [4, 2] and parsed["nextSteps"] == ["Measure."]


def test_an_answer_without_a_summary_is_none():
    assert parse_narrative_answer(json.dumps({"keyDecisions": ["x"]})) is None
    assert parse_narrative_answer("not json") is None
