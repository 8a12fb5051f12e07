"""How the offline rehearsal model reads plain statements into artifact changes. Pure.

A real model returns the changed slots through a tool call; without one, these deterministic
rules understand the common ways people say it, with speakers told apart:

    "I'll take Scribe" / "I can be the Scribe" / "put me down for Scribe"   -> speaker holds Scribe
    "Ana should be Lead" / "let Ana be Lead" / "Ana takes Lead"               -> Ana holds Lead
    "I drop Scribe" / "I can't do Scribe"                                     -> the speaker lets go of it
    "I choose B" / "let's go with B" / "DECISION: B"  / "I propose C"         -> the decision pattern
    "add: X" / "TODO: X" / "+ X"                                              -> the list pattern
    "confirmed" / "I confirm" / "agreed" / "👍"                                -> a confirmation

Roles are found by the run's own role names (its slots), matched as written: in any case, whole, the
longest first ("Time keeper" before "Time"), so a name of several words or with punctuation
("Q&A host", "C++ dev", "Lead*") is claimed like any other.

What people write is data: nothing here can change the goal, the deadline or who receives the
report; only artifact changes come out. A claim on a role someone else holds is a conflict
(reported, not applied) so the facilitator can mediate it.
"""
import re
from dataclasses import dataclass
from functools import lru_cache

from facilitation.deliberation.names import same_name, visible_text, without_glue
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


@dataclass(frozen=True)
class RemoveItem:
    """An item its author took back (they edited the message that added it)."""

    text: str
    by: str


_ARTICLE = r"(?:the\s+|a\s+|an\s+|our\s+)?"
_APOS = "['\u2019]"  # I'll or I’ll (phones often type the curly apostrophe)
# ``{role}`` is where the run's own role names go (``_role_patterns``): each name as written, whole.
_SELF_CLAIMS = [
    rf"\bI(?:{_APOS}ll| will| can| could| shall)?\s+(?:take|do|handle|cover|be)\s+{_ARTICLE}{{role}}",
    rf"\bI(?:{_APOS}m| am)\s+(?:happy\s+to\s+be\s+|going\s+to\s+be\s+)?{_ARTICLE}{{role}}",
    rf"\bput\s+me\s+(?:down\s+)?(?:for|as)\s+{_ARTICLE}{{role}}",
    rf"\bI\s+volunteer\s+(?:for|as)\s+{_ARTICLE}{{role}}",
    rf"\bme\s+as\s+{_ARTICLE}{{role}}",
]
_OTHER_CLAIMS = [  # case-sensitive: the person is a capitalised name (the role names match in any case)
    rf"\b(?P<person>[A-Z][\w\-]*)\s+(?:should|could|will|can|shall)\s+(?:be|take|do)\s+{_ARTICLE}{{role}}",
    rf"\blet\s+(?P<person>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)*)\s+(?:be|take|do)\s+{_ARTICLE}{{role}}",
    rf"\b(?P<person>[A-Z][\w\-]*)\s+(?:takes|is|as)\s+{_ARTICLE}{{role}}",
    rf"\b(?P<person>[A-Z][\w\-]*)\s+for\s+{_ARTICLE}{{role}}",
]
_RELEASES = [
    rf"\bI\s+(?:drop|give\s+up|can(?:no|{_APOS})t\s+(?:do|take|be))\s+{_ARTICLE}{{role}}",
    rf"\bnot\s+{_ARTICLE}{{role}}\s+for\s+me\b",
]
_CHOOSE = [r"\b(?:I|we)\s+(?:choose|pick|go\s+for|vote\s+for)\s+(?P<opt>.+?)[.!]?$",
           r"\blet'?s\s+go\s+with\s+(?P<opt>.+?)[.!]?$", r"^\s*DECISION:\s*(?P<opt>.+?)\s*$",
           r"\b(?:we\s+)?decide(?:d)?\s+(?:on\s+)?(?P<opt>.+?)[.!]?$"]
_PROPOSE = [r"\bI\s+(?:propose|suggest)\s+(?P<opt>.+?)[.!]?$", r"^\s*PROPOSAL:\s*(?P<opt>.+?)\s*$"]
_ADD = [r"^\s*(?:add|item|TODO)\s*:\s*(?P<item>.+?)\s*$", r"^\s*\+\s+(?P<item>.+?)\s*$"]
_CONFIRM = re.compile(r"^\s*(?:yes[,!.]?\s*)?(?:I\s+)?(?:confirm(?:ed)?|agreed?|approved?|lgtm|looks\s+good|👍|✅)\b[\s.!👍✅]*"
                      r"(?:from\s+me)?[\s.!]*$|^\s*(?:👍|✅)\s*$", re.IGNORECASE)


def _role_slot(roles: tuple[str, ...]) -> str:
    """The run's role names as one group ``role``: each matched as written (any case, any run of spaces between its
    words), whole (not the start of a longer word; a trailing "s" allowed, "Scribes"), the longest first so
    "Time keeper" wins over "Time"."""
    names = sorted({without_glue(r) for r in roles if r.strip()}, key=lambda r: (-len(same_name(r)), same_name(r)))
    alternatives = "|".join(r"\s+".join(re.escape(word) for word in name.split()) for name in names)
    return rf"(?P<role>(?i:{alternatives}))(?i:s)?(?![\w\-])"


@lru_cache(maxsize=256)
def _role_patterns(roles: tuple[str, ...]) -> tuple[list, list, list]:
    """The release, self-claim and other-claim patterns for these role names, compiled once per set of names."""
    slot = _role_slot(roles)

    def build(patterns, flags):
        return [re.compile(p.replace("{role}", slot), flags) for p in patterns]
    return build(_RELEASES, re.IGNORECASE), build(_SELF_CLAIMS, re.IGNORECASE), build(_OTHER_CLAIMS, 0)


def _match_role(raw: str, roles) -> str | None:
    """The slot role a matched name is (its spelling in the slots)."""
    words = same_name(raw)
    return next((role for role in roles if same_name(role) == words), None)


def _person(raw: str, roster: list[str], before: str = "") -> str | None:
    """Who ``raw`` (one capitalised word) names: someone of the roster by full or first name; or, when the words
    ``before`` it end with someone's full name of several words ("Ben Okafor should be Lead", as a Teams @mention
    writes the name), that person."""
    said = before.lower()
    for name in sorted((n for n in roster if len(n.split()) > 1), key=len, reverse=True):
        start = len(said) - len(name)
        if said.endswith(name.lower()) and (start == 0 or not said[start - 1].isalnum()):
            return name
    for name in roster:
        if name.lower() == raw.lower() or name.split()[0].lower() == raw.lower():
            return name
    return None


def _role_changes(speaker: str, line: str, roles: list[str], holders: dict, roster: list[str]) -> list:
    out: list = []
    if not any(r.strip() for r in roles):
        return out
    releases, self_claims, other_claims = _role_patterns(tuple(roles))
    line = without_glue(line)  # an emoji role typed with or without its joiners, as the role patterns are built
    for pattern in releases:
        for m in pattern.finditer(line):
            role = _match_role(m.group("role"), roles)
            if role and holders.get(role) == speaker:
                out.append(Release(role, speaker))
    if out:
        return out
    claims: list[tuple[str, str]] = []
    for pattern in self_claims:
        for m in pattern.finditer(line):
            role = _match_role(m.group("role"), roles)
            if role:
                claims.append((role, speaker))
    for pattern in other_claims:
        for m in pattern.finditer(line):
            role = _match_role(m.group("role"), roles)
            person = _person(m.group("person"), roster, line[:m.end("person")])
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
                    match = next((o for o in options if same_name(o) == same_name(opt)), None)
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


def said(pattern: str, slots: dict, speaker: str, text: str, roster: list[str] | None = None) -> set:
    """What a message says, whatever the artifact holds: the claims, choices, items and confirmations in it,
    read as if nothing were held yet (so two texts can be compared)."""
    empty = {"roles": {}, "proposals": [], "items": []}
    return set(read(pattern, slots, empty, speaker, text, roster))


def withdrawals(pattern: str, artifact: dict, before: set, after: set) -> list:
    """What an edit takes back: what the text before said and the new text no longer says, where the artifact still
    holds it from that person (a role they claimed and still hold, an item they added). A choice stays (someone may
    have chosen the same since); a confirmation taken back is the caller's (it is not in the artifact)."""
    out: list = []
    for c in before - after:
        if isinstance(c, Assign) and pattern == "role_assignment" and artifact.get("roles", {}).get(c.role) == c.person:
            out.append(Release(c.role, c.person))
        elif isinstance(c, AddItem) and pattern == "list" and any(
                i.get("by") == c.by and _same_item(i["text"], c.text) for i in artifact.get("items", [])):
            out.append(RemoveItem(c.text, c.by))
    return out


def _same_item(a: str, b: str) -> bool:
    return " ".join(a.split()).lower() == " ".join(b.split()).lower()


def _listed(items: list, text: str) -> bool:
    return any(_same_item(i["text"], text) for i in items)


def _new_proposal(proposals: list, option: str) -> str:
    """A proposed option as it is kept (without invisible format characters), or "" when it is none or is listed
    already however its case, spaces or joiners differ."""
    option = " ".join(visible_text(option).split())
    return option if option and not any(same_name(p) == same_name(option) for p in proposals) else ""


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
        elif isinstance(c, Propose) and pattern == "decision" and (option := _new_proposal(new["proposals"], c.option)):
            new["proposals"].append(option)
            changed = True
        elif isinstance(c, AddItem) and pattern == "list" and len(new["items"]) < MAX_ITEMS and not _listed(new["items"], c.text):
            new["items"].append({"text": c.text, "by": c.by})
            changed = True
        elif isinstance(c, RemoveItem) and pattern == "list":
            kept = [i for i in new["items"] if not (i.get("by") == c.by and _same_item(i["text"], c.text))]
            changed = changed or len(kept) != len(new["items"])
            new["items"] = kept
    return new, changed
