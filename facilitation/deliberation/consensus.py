"""Consensus rules over the latest votes of a phase. Pure Python: no Django.

A discussion carries ``ConsensusRules``: the share of READY votes among the eligible voters
that counts as consensus (``threshold``, default 0.67), whether a standing REJECT blocks it
(``reject_blocks``, default true) and whether a person's vote is required
(``human_required``, default false). ``evaluate`` answers whether consensus is reached and
why (or why not), from the latest vote of each voter in the current phase.
"""
from dataclasses import asdict, dataclass

from facilitation.wording import counted

VALUES = ("READY", "CHANGES", "REJECT")
PERSON = "person:"  # the voter key of a person without a seat
_CAMEL = {"reject_blocks": "rejectBlocks", "human_required": "humanRequired"}


class RulesError(ValueError):
    """Consensus settings that make no sense (the message says which)."""


@dataclass(frozen=True)
class ConsensusRules:
    threshold: float = 0.67
    reject_blocks: bool = True
    human_required: bool = False

    @classmethod
    def parse(cls, raw: dict | None) -> "ConsensusRules":
        """From the API's camelCase object (``threshold``, ``rejectBlocks``, ``humanRequired``)."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise RulesError("consensus must be an object with threshold, rejectBlocks and humanRequired.")
        raw = {_CAMEL.get(k, k): v for k, v in raw.items()}  # the API's parser may have snake-cased the keys
        unknown = set(raw) - {"threshold", "rejectBlocks", "humanRequired"}
        if unknown:
            raise RulesError(f"Unknown consensus field(s): {', '.join(sorted(unknown))}.")
        threshold = raw.get("threshold", cls.threshold)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise RulesError("consensus.threshold must be a number from 0 to 1.")
        flags = {}
        for key in ("rejectBlocks", "humanRequired"):
            value = raw.get(key, getattr(cls, "reject_blocks" if key == "rejectBlocks" else "human_required"))
            if not isinstance(value, bool):
                raise RulesError(f"consensus.{key} must be true or false.")
            flags[key] = value
        return cls(threshold=float(threshold), reject_blocks=flags["rejectBlocks"], human_required=flags["humanRequired"])

    def as_payload(self) -> dict:
        return {"threshold": self.threshold, "rejectBlocks": self.reject_blocks, "humanRequired": self.human_required}

    def dump(self) -> dict:
        return asdict(self)

    @classmethod
    def load(cls, data: dict | None) -> "ConsensusRules":
        return cls(**(data or {}))


@dataclass(frozen=True)
class Ballot:
    """One voter's latest vote in the phase."""

    voter: str  # a seat id as text, or PERSON + their name for a person without a seat
    value: str
    human: bool = False
    seq: int = 0
    name: str = ""  # who voted, as the room shows them

    @property
    def seated(self) -> bool:
        return not self.voter.startswith(PERSON)


@dataclass(frozen=True)
class Verdict:
    reached: bool
    reason: str
    tally: dict

    def as_payload(self) -> dict:
        return {"reached": self.reached, "reason": self.reason}


def tally(ballots: list[Ballot]) -> dict:
    counts = {v.lower(): 0 for v in VALUES}
    for ballot in ballots:
        counts[ballot.value.lower()] += 1
    return counts


def evaluate(rules: ConsensusRules, ballots: list[Ballot], eligible: int) -> Verdict:
    """Is there consensus among the voters given their latest ``ballots``? The voters are the ``eligible``
    seats (the speaking ones), whether they voted or not, and every person without a seat who voted: a
    person's vote adds a voice, it does not stand in for a seat that has not voted."""
    counts = tally(ballots)
    if not ballots:
        return Verdict(False, "No votes yet in this phase.", counts)
    if rules.reject_blocks and counts["reject"]:
        who = ", ".join(b.name or b.voter for b in ballots if b.value == "REJECT")
        return Verdict(False, f"A REJECT stands ({who}); it blocks consensus until withdrawn.", counts)
    if rules.human_required and not any(b.human for b in ballots):
        return Verdict(False, "A person's vote is required and none has been cast.", counts)
    voters = max(eligible + sum(1 for b in ballots if not b.seated), len(ballots))
    share = counts["ready"] / voters if voters else 0.0
    reached = share + 1e-9 >= rules.threshold
    shown, needed = _percents(share, rules.threshold)
    ready = counts["ready"]
    verb = "is" if ready == 1 or voters == 1 else "are"  # "1 of 3 voters is READY", "2 of 3 voters are READY"
    return Verdict(reached, f"{ready} of {counted(voters, 'voter')} {verb} READY ({shown} {'>=' if reached else '<'} "
                            f"{needed}).", counts)


def _percents(share: float, threshold: float) -> tuple[str, str]:
    """The share and the threshold as percentages, with as many decimals as it takes for a share short of the
    threshold not to read as equal to it (2 of 3 against 0.67: "66.7%" and "67%", not "67% < 67%")."""
    needed = f"{threshold:.{_decimals(threshold)}%}"
    for digits in range(7):
        shown = f"{share:.{digits}%}"
        if share + 1e-9 >= threshold or float(shown[:-1]) < float(needed[:-1]):
            break
    return shown, needed


def _decimals(fraction: float) -> int:
    """How many decimals a threshold needs as a percentage (0.67: none, 0.675: one)."""
    return next((d for d in range(5) if abs(round(fraction * 100, d) - fraction * 100) < 1e-9), 4)
