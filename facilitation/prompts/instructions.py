"""Standing instructions woven into every prompt: formats, seat roles, markers, decisions."""

FORMATS = {
    "brainstorm": "Format: brainstorm. Aim for breadth and novelty. Build on other ideas, combine them, "
                  "and hold back judgement until the options are on the table.",
    "review": "Format: review. Give a balanced critique: name strengths and weaknesses, back them with "
              "reasons, and rank what matters most.",
    "deliberation": "Format: deliberation. Reason from evidence, weigh the arguments for and against each "
                    "option, and work toward a position the group can defend.",
}

SEAT_ROLES = {
    "participant": "Your seat: participant. Give your own perspective plainly and build on what others said.",
    "observer": "Your seat: observer. Note what you see without advocating; stay analytical and neutral.",
    "devil_advocate": "Your seat: devil's advocate. Challenge the view that is gaining ground, expose the "
                      "assumptions under it and test the arguments until they hold or break.",
    "facilitator": "Your seat: facilitator. You steer the room; you do not argue a side yourself.",
}

MARKERS = (
    "Mark structure on its own line where it applies: `Q:` for a question you want answered, "
    "`CONCERN:` for a risk, `DECISION:` for a decision you propose, `TODO:` for an action item, "
    "`@name` to address someone. In review and deliberation formats end with `VOTE: READY`, "
    "`VOTE: CHANGES` or `VOTE: REJECT`."
)

DECISION_FORMAT = (
    "Answer with one JSON object and nothing else:\n"
    '{"decision": "continue" | "synthesize", "nextParticipantId": <id of a speaking participant>, '
    '"question": "<the focused question for them>", "reasoning": "<one or two sentences>", '
    '"progress": {"coverage": <0..1>, "openQuestions": <count>}}\n'
    "Only the participants listed as speaking may be chosen; observers never speak."
)

SYNTHESIS_FORMAT = (
    "Write the conclusion in plain prose with short headed sections: the key perspectives (naming who "
    "held them), where the group agreed, where it disagreed, the decisions reached, open questions, and "
    "your recommendations."
)
