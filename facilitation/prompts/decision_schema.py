"""The facilitator's decision as a JSON schema: a tool's input (Anthropic) or a response format (OpenAI).

The schema enumerates the room's speaking seat ids, so a model that honours it cannot
name anyone else. It lists every speaking seat (stable for the room, so the request
prefix stays cacheable); the guardrails decide who may speak at this moment.
"""

DECISION_TOOL = "record_decision"
DECISION_TOOL_DESCRIPTION = (
    "Record the facilitator's decision: continue with the next speaker and the question for them, "
    "or synthesize the conclusion."
)


def decision_schema(speaking_ids: list[int]) -> dict:
    """Strict-mode compatible: every property required, no extra properties."""
    ids = sorted({int(i) for i in speaking_ids})
    speaker = {"anyOf": [{"type": "integer", "enum": ids}, {"type": "null"}]} if ids else {"type": "null"}
    return {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["continue", "synthesize"]},
            "nextParticipantId": {**speaker, "description": "The speaking participant's seat id; null to synthesize."},
            "question": {"type": "string", "description": "The focused question for the next speaker; empty to synthesize."},
            "reasoning": {"type": "string", "description": "One or two sentences on why."},
            "progress": {
                "type": "object",
                "properties": {"coverage": {"type": "number"}, "openQuestions": {"type": "integer"}},
                "required": ["coverage", "openQuestions"],
                "additionalProperties": False,
            },
        },
        "required": ["decision", "nextParticipantId", "question", "reasoning", "progress"],
        "additionalProperties": False,
    }
