"""Discussion templates: a sequence of phases, each with its own instructions and voting mode.

Pure Python. A phase's ``voting`` is ``none`` (no votes asked), ``open`` (votes are asked and
everyone sees them) or ``ballot`` (independent ballots: each participant votes without seeing
the ballots already cast in the phase; the tally is revealed when all have voted or the
ballot closes). A phase advances by itself when its ``advance`` condition holds
(``consensus`` or ``all_voted``), or when the owner advances it; ``manual`` waits for the owner
(or for the rounds to run out).
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Phase:
    key: str
    title: str
    instructions: str
    voting: str = "none"  # none | open | ballot
    advance: str = "manual"  # manual | consensus | all_voted

    def as_payload(self) -> dict:
        return {"key": self.key, "title": self.title, "voting": self.voting, "advance": self.advance}


@dataclass(frozen=True)
class Template:
    key: str
    title: str
    phases: tuple[Phase, ...]

    def phase(self, key: str) -> Phase:
        for phase in self.phases:
            if phase.key == key:
                return phase
        raise KeyError(key)

    def next_phase(self, key: str) -> Phase | None:
        keys = [p.key for p in self.phases]
        index = keys.index(key)
        return self.phases[index + 1] if index + 1 < len(self.phases) else None


TEMPLATES = {
    "feature": Template("feature", "Feature proposal", (
        Phase("explore", "Explore the problem",
              "Describe who needs this and why, what they do today, and what would make it worth building. "
              "Raise open questions with Q: and risks with CONCERN:. No votes yet."),
        Phase("shape", "Shape a proposal",
              "Converge on one concrete proposal: scope, what is out of scope, the main risks and how to test it. "
              "Answer the open questions. Record what you settle with DECISION:. Vote when the proposal is clear.",
              voting="open", advance="consensus"),
        Phase("commit", "Commit or not",
              "Each participant votes independently on the proposal as it stands: VOTE: READY, CHANGES or REJECT, "
              "with one sentence of reasons. List follow-up work with TODO:.",
              voting="ballot", advance="all_voted"),
    )),
    "code_review": Template("code_review", "Code review", (
        Phase("read", "Read and report",
              "Report what the change does and what you found: correctness, tests, security, readability. "
              "Mark each problem with CONCERN: and each question to the author with Q:."),
        Phase("resolve", "Resolve findings",
              "Go through the open concerns one by one: fixed, accepted as is (say why), or still blocking. "
              "Record agreed changes with TODO:. Vote when the findings are settled.",
              voting="open", advance="consensus"),
        Phase("verdict", "Verdict",
              "Each reviewer votes independently: READY to merge, CHANGES needed, or REJECT, with the deciding reason.",
              voting="ballot", advance="all_voted"),
    )),
    "adr": Template("adr", "Architecture decision record", (
        Phase("context", "Context and forces",
              "State the forces at play: requirements, constraints, what must not break. Ask with Q: what is unclear."),
        Phase("options", "Options",
              "Put at least two options on the table and weigh them against the forces, with their consequences. "
              "Raise objections with CONCERN:.", voting="none"),
        Phase("decision", "Decision",
              "Each participant votes independently on the preferred option: READY if you accept it, CHANGES with "
              "the condition that would make you accept it, REJECT with the reason. State the outcome with DECISION:.",
              voting="ballot", advance="all_voted"),
    )),
}


def get_template(key: str) -> Template:
    try:
        return TEMPLATES[key]
    except KeyError:
        raise KeyError(f"Unknown template {key!r}; choose one of {', '.join(sorted(TEMPLATES))}.") from None
