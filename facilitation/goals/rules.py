"""How the offline rehearsal model reads plain statements into artifact changes. Pure.

A real model returns the changed slots through a tool call; without one, these deterministic
rules understand the common ways people say it, with speakers told apart:

    "I'll take Scribe" / "I can be the Scribe" / "put me down for Scribe"   -> speaker holds Scribe
    "Ana should be Lead" / "let Ana be Lead" / "Ana takes Lead"               -> Ana holds Lead
    "I drop Scribe" / "I can't do Scribe"                                     -> the speaker lets go of it
    "I choose B" / "let's go with B" / "DECISION: B"  / "I propose C"         -> the decision pattern
    "add: X" / "TODO: X" / "+ X"                                              -> the list pattern
    "confirmed" / "I confirm" / "agreed" / "👍"                                -> a confirmation

What people write is data: nothing here can change the goal, the deadline or who receives the
report; only artifact changes come out. A claim on a role someone else holds is a conflict
(reported, not applied) so the facilitator can mediate it.
"""
import re
from dataclasses import dataclass

from facilitation.goals.patterns import MAX_ITEMS


@dataclass(frozen=True)
class Assign:
    role: str
    person: str
    by: str


@dataclass(frozen=True)
class Release:
    role: str
    person: str


@dataclass(frozen=True)
class Conflict:
    role: str
    holder: str
    claimant: str


@dataclass(frozen=True)
class Choose:
    option: str
    by: str


@dataclass(frozen=True)
class Propose:
    option: str
    by: str


@dataclass(frozen=True)
class AddItem:
    text: str
    by: str


@dataclass(frozen=True)
class Confirm:
    person: str


_ARTICLE = r"(?:the\s+|a\s+|an\s+|our\s+)?"
_SELF_CLAIMS = [
    rf"\bI(?:'ll| will| can| could| shall)?\s+(?:take|do|handle|cover|be)\s+{_ARTICLE}(?P<role>[\w\- ]+?)(?:\s+role)?\b",
    rf"\bI(?:'m| am)\s+(?:happy\s+to\s+be\s+|going\s+to\s+be\s+)?{_ARTICLE}(?P<role>[\w\- ]+?)(?:\s+role)?\b",
    rf"\bput\s+me\s+(?:down\s+)?(?:for|as)\s+{_ARTICLE}(?P<role>[\w\- ]+?)(?:\s+role)?\b",
    rf"\bI\s+volunteer\s+(?:for|as)\s+{_ARTICLE}(?P<role>[\w\- ]+?)(?:\s+role)?\b",
    rf"\bme\s+as\s+{_ARTICLE}(?P<role>[\w\- ]+?)\b",
]
_OTHER_CLAIMS = [
    rf"\b(?P<person>[A-Z][\w\-]*)\s+(?:should|could|will|can|shall)\s+(?:be|take|do)\s+{_ARTICLE}(?P<role>[\w\- ]+?)(?:\s+role)?\b",
    rf"\blet\s+(?P<person>[A-Z][\w\-]*)\s+(?:be|take|do)\s+{_ARTICLE}(?P<role>[\w\- ]+?)\b",
    rf"\b(?P<person>[A-Z][\w\-]*)\s+(?:takes|is|as)\s+{_ARTICLE}(?P<role>[\w\- ]+?)(?:\s+role)?\b",
    rf"\b(?P<person>[A-Z][\w\-]*)\s+for\s+{_ARTICLE}(?P<role>[\w\- ]+?)\b",
]
_RELEASES = [
    rf"\bI\s+(?:drop|give\s+up|can(?:no|')t\s+(?:do|take|be))\s+{_ARTICLE}(?P<role>[\w\- ]+?)\b",
    rf"\bnot\s+{_ARTICLE}(?P<role>[\w\- ]+?)\s+for\s+me\b",
]
_CHOOSE = [r"\b(?:I|we)\s+(?:choose|pick|go\s+for|vote\s+for)\s+(?P<opt>.+?)[.!]?$",
           r"\blet'?s\s+go\s+with\s+(?P<opt>.+?)[.!]?$", r"^\s*DECISION:\s*(?P<opt>.+?)\s*$",
           r"\b(?:we\s+)?decide(?:d)?\s+(?:on\s+)?(?P<opt>.+?)[.!]?$"]
_PROPOSE = [r"\bI\s+(?:propose|suggest)\s+(?P<opt>.+?)[.!]?$", r"^\s*PROPOSAL:\s*(?P<opt>.+?)\s*$"]
_ADD = [r"^\s*(?:add|item|TODO)\s*:\s*(?P<item>.+?)\s*$", r"^\s*\+\s+(?P<item>.+?)\s*$"]
_CONFIRM = re.compile(r"^\s*(?:yes[,!.]?\s*)?(?:I\s+)?(?:confirm(?:ed)?|agreed?|approved?|lgtm|looks\s+good|👍|✅)\b[\s.!👍✅]*"
                      r"(?:from\s+me)?[\s.!]*$|^\s*(?:👍|✅)\s*$", re.IGNORECASE)


def _match_role(raw: str, roles: list[str]) -> str | None:
    """The slot role a phrase names: the longest role whose words start the phrase."""
    words = raw.strip().lower()
    best = None
    for role in roles:
        r = role.lower()
        if words == r or words.startswith(r + " ") or words == r + "s":
            if best is None or len(r) > len(best):
                best = role
    return best


def _person(raw: str, roster: list[str]) -> str | None:
    for name in roster:
        if name.lower() == raw.lower() or name.split()[0].lower() == raw.lower():
            return name
    return None


def _role_changes(speaker: str, line: str, roles: list[str], holders: dict, roster: list[str]) -> list:
    out: list = []
    for pattern in _RELEASES:
        for m in re.finditer(pattern, line, re.IGNORECASE):
            role = _match_role(m.group("role"), roles)
            if role and holders.get(role) == speaker:
                out.append(Release(role, speaker))
    if out:
        return out
    claims: list[tuple[str, str]] = []
    for pattern in _SELF_CLAIMS:
        for m in re.finditer(pattern, line, re.IGNORECASE):
            role = _match_role(m.group("role"), roles)
            if role:
                claims.append((role, speaker))
    for pattern in _OTHER_CLAIMS:
        for m in re.finditer(pattern, line):
            role = _match_role(m.group("role"), roles)
            person = _person(m.group("person"), roster)
            if role and person:
                claims.append((role, person))
    seen = set()
    for role, person in claims:
        if role in seen:
            continue
        seen.add(role)
        holder = holders.get(role)
        if holder and holder != person:
            out.append(Conflict(role, holder, person))
        elif holder != person:
            out.append(Assign(role, person, speaker))
    return out


def read(pattern: str, slots: dict, artifact: dict, speaker: str, text: str, roster: list[str] | None = None) -> list:
    """The artifact changes and confirmations one message carries (possibly none)."""
    roster = list(roster or [])
    if speaker not in roster:
        roster.append(speaker)
    out: list = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        if _CONFIRM.match(line):
            out.append(Confirm(speaker))
            continue
        if pattern == "role_assignment":
            out += _role_changes(speaker, line, slots["roles"], artifact.get("roles", {}), roster)
        elif pattern == "decision":
            options = slots.get("options") or []
            for rx in _CHOOSE:
                m = re.search(rx, line, re.IGNORECASE)
                if m:
                    opt = m.group("opt").strip().strip("\"'")
                    match = next((o for o in options if o.lower() == opt.lower()), None)
                    out.append(Choose(match or opt, speaker))
                    break
            else:
                for rx in _PROPOSE:
                    m = re.search(rx, line, re.IGNORECASE)
                    if m:
                        out.append(Propose(m.group("opt").strip().strip("\"'"), speaker))
                        break
        else:
            for rx in _ADD:
                m = re.search(rx, line, re.IGNORECASE)
                if m:
                    out.append(AddItem(m.group("item")[:300], speaker))
                    break
    return out


def _listed(items: list, text: str) -> bool:
    return any(" ".join(i["text"].split()).lower() == " ".join(text.split()).lower() for i in items)


def apply(pattern: str, artifact: dict, changes: list) -> tuple[dict, bool]:
    """The artifact after ``changes`` (a new dict) and whether it changed. Conflicts and
    confirmations do not change it, nor does saying again what it already holds (the same holder,
    the same choice, a proposal or an item already listed)."""
    new = {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v) for k, v in artifact.items()}
    changed = False
    for c in changes:
        if isinstance(c, Assign) and pattern == "role_assignment" and new["roles"].get(c.role) != c.person:
            new["roles"][c.role] = c.person
            changed = True
        elif isinstance(c, Release) and pattern == "role_assignment" and new["roles"].get(c.role) == c.person:
            new["roles"][c.role] = None
            changed = True
        elif isinstance(c, Choose) and pattern == "decision" and new.get("choice") != c.option:
            new["choice"] = c.option
            changed = True
        elif isinstance(c, Propose) and pattern == "decision" and c.option not in new["proposals"]:
            new["proposals"].append(c.option)
            changed = True
        elif isinstance(c, AddItem) and pattern == "list" and len(new["items"]) < MAX_ITEMS and not _listed(new["items"], c.text):
            new["items"].append({"text": c.text, "by": c.by})
            changed = True
    return new, changed
