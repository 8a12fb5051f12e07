"""How the offline rehearsal model reads plain statements into artifact changes. Pure.

A real model returns the changed slots through a tool call; without one, these deterministic
rules understand the common ways people say it, with speakers told apart:

    "I'll take Scribe" / "I can be the Scribe" / "put me down for Scribe"   -> speaker holds Scribe
    "Ana should be Lead" / "let Ana be Lead" / "Ana takes Lead"               -> Ana holds Lead
    "let Dan be Lead" (nobody called Dan here) / "let Ben be Lead" (two Bens)  -> nothing, said back (``unplaced``)
    "let Ana be Emperor" (no such role in the run)                            -> nothing, said back (``unplaced``)
    "I drop Scribe" / "I can't do Scribe"                                     -> the speaker lets go of it
    "I choose B" / "let's go with B" / "DECISION: B"  / "I propose C"         -> the decision pattern
    "add: X" / "TODO: X" / "+ X"                                              -> the list pattern
    "confirmed" / "I confirm" / "agreed" / "👍"                                -> a confirmation

Roles are found by the run's own role names (its slots), matched as written: in any case, whole, the
longest first ("Time keeper" before "Time"), so a name of several words or with punctuation
("Q&A host", "C++ dev", "Lead*") is claimed like any other.

A person is named by full or first name as the run knows them (the people of the room and of its linked chats):
a name that fits nobody, or the first name of several people, places nobody (no guess); ``unplaced`` says which
(for the facilitator to answer), and a role the run does not have too. A name is written in any script: it starts
with a letter that is no lowercase one (a capital where the script has case, "Élodie", "Анна"; any letter where it
has none, "李娜", "ליאור"), and holds letters, digits, combining marks (Indic vowel signs, an accent typed apart),
hyphens and apostrophes between letters ("Anne-Marie", "O'Brien", not the "'s" of "Ana's"). Names are compared
case-folded and in one Unicode form (``_key``), so an accent typed as a combining mark names the same person.

What people write is data: nothing here can change the goal, the deadline or who receives the
report; only artifact changes come out. A claim on a role someone else holds is a conflict
(reported, not applied) so the facilitator can mediate it.
"""
import re
import unicodedata
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
class Unknown:
    """Someone named for a role whom the run does not know (nobody of that name has written, joined or been mentioned
    where the run is): ``name`` as written (cut to ``NAME_SHOWN``)."""

    name: str
    role: str


@dataclass(frozen=True)
class Ambiguous:
    """A name given a role that fits several people of the run (``people``: each as the run knows them)."""

    name: str
    role: str
    people: tuple[str, ...]


@dataclass(frozen=True)
class NoSuchRole:
    """A role the run does not have, given to someone ("let Ana be Emperor"): ``role`` and ``person`` as written
    (cut to ``NAME_SHOWN``)."""

    role: str
    person: str


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
# ``{name}`` is where a person's name goes (``_name``: a word that starts with a letter that is no lowercase one).
_OTHER_CLAIMS = [  # case-sensitive: the person's name starts with a capital (the role names match in any case)
    rf"{{start}}(?P<person>{{name}})\s+(?:should|could|will|can|shall)\s+(?:be|take|do)\s+{_ARTICLE}{{role}}",
    rf"\b[Ll]et\s+(?P<person>{{name}}(?:\s+{{name}})*)\s+(?:be|take|do)\s+{_ARTICLE}{{role}}",
    rf"{{start}}(?P<person>{{name}})\s+(?:takes|is|as)\s+{_ARTICLE}{{role}}",
    rf"{{start}}(?P<person>{{name}})\s+for\s+{_ARTICLE}{{role}}",
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


#: Unicode's direction controls: embeddings, overrides, isolates and their ends, and the direction marks.
_DIRECTION_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def without_direction(text: str) -> str:
    """``text`` without direction controls (invisible: they only order what is shown)."""
    return _DIRECTION_CONTROLS.sub("", text)


def _one_of(codes: list[int]) -> str:
    """A regular expression for one of the characters ``codes`` (ascending). The set is split at U+10000: the engine
    tests a set that reaches past it range by range, one below it at once."""
    sets: list[list[list[int]]] = [[], []]
    for code in codes:
        spans = sets[code > 0xFFFF]
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    low, high = ("".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in spans)
                 for spans in sets)
    return f"(?:[{low}]|(?=[\U00010000-\U0010ffff])[{high}])"


@lru_cache(maxsize=1)
def _letters() -> tuple[str, str]:
    """One letter that may start a name and one combining mark, as regular expressions worked out once. A name starts
    with a capital (or title-case) letter, or a letter of a script without case; ``\\w`` holds no mark (a Devanagari
    vowel sign, an accent typed as a character of its own). Letters and marks are found only in Unicode's planes 0
    to 3 and 14 (variation selectors)."""
    capitals, marks = [], []
    for code in (*range(0x40000), *range(0xE0000, 0xE1000)):
        char = chr(code)
        kind = unicodedata.category(char)
        if kind in ("Lu", "Lt") or (kind in ("Lo", "Lm") and not char.islower()):
            capitals.append(code)
        elif kind[0] == "M":
            marks.append(code)
    return _one_of(capitals), _one_of(marks)


def _name() -> str:
    """A word of a person's name: a letter that may start one (``_letters``), then letters, digits, marks and hyphens,
    and apostrophes between letters ("O'Brien", "O’Brien"; not the "'s" of "Ana's")."""
    first, mark = _letters()
    return rf"{first}(?:[\w\-]|{mark}|{_APOS}(?!s\b)(?=\w))*"


def _start() -> str:
    """Where a name may start: not inside a word (after a letter, a mark, a hyphen, or "d'")."""
    return rf"(?<![\w\-])(?<!{_letters()[1]})(?<!\w{_APOS})"


def _word_end() -> str:
    """Where a name or a role ends: no letter, digit, mark or hyphen follows."""
    return rf"(?![\w\-]|{_letters()[1]})"


def _role_slot(roles: tuple[str, ...]) -> str:
    """The run's role names as one group ``role``: each matched as written (any case, any run of spaces between its
    words), whole (not the start of a longer word; a trailing "s" allowed, "Scribes"), the longest first so
    "Time keeper" wins over "Time"."""
    names = sorted({without_glue(r) for r in roles if r.strip()}, key=lambda r: (-len(same_name(r)), same_name(r)))
    alternatives = "|".join(r"\s+".join(re.escape(word) for word in name.split()) for name in names)
    return rf"(?P<role>(?i:{alternatives}))(?i:s)?{_word_end()}"


@lru_cache(maxsize=256)
def _role_patterns(roles: tuple[str, ...]) -> tuple[list, list, list]:
    """The release, self-claim and other-claim patterns for these role names, compiled once per set of names."""
    slot, name, start = _role_slot(roles), _name(), _start()

    def build(patterns, flags):
        return [re.compile(p.replace("{name}", name).replace("{start}", start).replace("{role}", slot), flags)
                for p in patterns]  # the role names last: their text is theirs, whatever it holds
    return build(_RELEASES, re.IGNORECASE), build(_SELF_CLAIMS, re.IGNORECASE), build(_OTHER_CLAIMS, 0)


@lru_cache(maxsize=256)
def _slot(roles: tuple[str, ...]) -> re.Pattern:
    """The run's role names (``_role_slot``), compiled once per set of names."""
    return re.compile(_role_slot(roles))


def _match_role(raw: str, roles) -> str | None:
    """The slot role a matched name is (its spelling in the slots)."""
    words = same_name(raw)
    return next((role for role in roles if same_name(role) == words), None)


_APOSTROPHES = str.maketrans("\u2019\u02bc", "''")


def _key(name: str) -> str:
    """What two ways of writing one name share: case-folded (``same_name``), without invisible format characters,
    composed the one Unicode way ("E" + a combining acute accent is "É"), with one apostrophe ("O’Brien" is
    "O'Brien")."""
    return unicodedata.normalize("NFC", same_name(visible_text(name).translate(_APOSTROPHES)))


def _inside_a_name(text: str, at: int) -> bool:
    """Whether ``text[at]`` belongs to the word before it: a letter, digit, mark or hyphen, or the apostrophe of
    "O'Brien"."""
    char = text[at]
    if char.isalnum() or char == "-" or unicodedata.category(char).startswith("M"):
        return True
    return char in "'\u2019" and at > 0 and text[at - 1].isalnum()


def _people(raw: str, roster: list[str], before: str = "") -> tuple[str, ...]:
    """Whom ``raw`` (a name's word, or the words after "let") may name: when the words ``before`` it end with
    someone's full name of several words ("Ben Okafor should be Lead", as a Teams @mention writes the name; not the
    end of a longer one, "Jean-Marie Curie"), that person; else whoever is called ``raw`` in full; else everyone
    whose first name it is (possibly several). Names compare as ``_key`` reads them."""
    said = _key(before)
    for name in sorted((n for n in roster if len(n.split()) > 1), key=len, reverse=True):
        key = _key(name)
        start = len(said) - len(key)
        if key and said.endswith(key) and (start == 0 or not _inside_a_name(said, start - 1)):
            return (name,)
    raw = _key(raw)
    whole = tuple(dict.fromkeys(n for n in roster if _key(n) == raw))
    return whole or tuple(dict.fromkeys(n for n in roster if n.split() and _key(n.split()[0]) == raw))


def _person(raw: str, roster: list[str], before: str = "") -> str | None:
    """The one person ``raw`` names (``_people``); None when it fits nobody, or several people (no guess)."""
    people = _people(raw, roster, before)
    return people[0] if len(people) == 1 else None


def _role_changes(speaker: str, line: str, roles: list[str], holders: dict, roster: list[str]) -> list:
    out: list = []
    if not any(r.strip() for r in roles):
        return out
    releases, self_claims, other_claims = _role_patterns(tuple(roles))
    # An emoji role typed with or without its joiners, as the role patterns are built; a name with or without the
    # direction marks a keyboard may put around a word written right to left.
    line = without_direction(without_glue(line))
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


#: How much of a name or a role as someone wrote it the facilitator says back (a longer one is cut, ending with "…").
NAME_SHOWN = 40
#: Words that start a sentence the way a name would, and are none: "Who should be Lead?", "Nobody can take Scribe".
_NOT_NAMES = frozenset("""
    i me we us you he him she her they them it who whom whoever what which whichever someone somebody anyone anybody
    everyone everybody nobody none no one each either neither both all this that these those there here then maybe
    perhaps so and but or also still yes ok okay well now why how when where if let please surely probably really just
    only else another other others
""".split())
#: Capitalised words after "be" that are no role: "Ana should be OK", "let Cy be Fine".
_NOT_ROLES = _NOT_NAMES | frozenset("a an the our my your their his its fine sure done ready free back able available "
                                    "away late off on in out not here there around".split())


@lru_cache(maxsize=1)
def _given() -> tuple[list, re.Pattern]:
    """The patterns of a role given that the run may not have (words that start like names after "be", whole, not
    "Ana's"), and of the words of a name that end where a claim's person does, compiled once."""
    name, start = _name(), _start()
    role = rf"{_ARTICLE}(?P<role>{name}(?:[ \t]+{name}){{0,3}}){_word_end()}(?!{_APOS})"
    given = [re.compile(p) for p in (
        rf"\b[Ll]et\s+(?P<person>{name}(?:\s+{name})*)\s+be\s+{role}",
        rf"{start}(?P<person>{name})\s+(?:should|could|can|shall)\s+be\s+{role}",
    )]
    return given, re.compile(rf"{start}(?:{name}\s+){{0,3}}{name}$")


def _shown(text: str) -> str:
    """A name or a role as someone wrote it, to be said back: on one line, cut to ``NAME_SHOWN`` (not between a
    letter and the marks that go with it)."""
    text = " ".join(text.split())
    if len(text) <= NAME_SHOWN:
        return text
    cut = NAME_SHOWN - 1
    while cut > 1 and unicodedata.category(text[cut]).startswith("M"):
        cut -= 1
    return text[:cut].rstrip() + "\u2026"


def _words_start(text: str, end: int, words: int) -> int:
    """Where the last ``words`` words (runs of characters other than white space) of ``text[:end]`` start."""
    at = end
    for _ in range(words):
        while at > 0 and text[at - 1].isspace():
            at -= 1
        while at > 0 and not text[at - 1].isspace():
            at -= 1
    return at


def _named_before(line: str, end: int) -> str:
    """The name a claim gives, as written: the words of a name ending at ``end`` ("Dan Okafor should be Lead"; four
    at most, so only those are searched), without words that only start the sentence ("Maybe Dan should be Lead")."""
    found = _given()[1].search(line, _words_start(line, end, 4), end)
    words = found.group().split() if found else []
    while len(words) > 1 and words[0].lower() in _NOT_NAMES:
        words.pop(0)
    return " ".join(words)


def unplaced(pattern: str, slots: dict, speaker: str, text: str, roster: list[str] | None = None) -> list:
    """What a message asks of the roles that cannot be done as said, for the facilitator to answer: a role given to
    someone the run does not know (``Unknown``: "let Dan be Lead", "Dan should be Lead") or to a first name several
    people share (``Ambiguous``), or a role the run does not have (``NoSuchRole``: "let Ana be Emperor"). One note a
    role, in the order written; none for a role the message does place (``read``). Names and roles are as written,
    cut to ``NAME_SHOWN``."""
    if pattern != "role_assignment":
        return []
    roster = list(roster or [])
    if speaker not in roster:
        roster.append(speaker)
    roles = [r for r in slots.get("roles") or [] if r.strip()]
    notes: dict = {}  # role (or the unknown role as written) -> (where it was written, its note)
    placed: set = set()
    for number, line in enumerate((text or "").splitlines()):
        line = without_direction(without_glue(line))
        if roles:
            _, self_claims, other_claims = _role_patterns(tuple(roles))
            placed |= {_match_role(m.group("role"), roles) for p in self_claims for m in p.finditer(line)}
            for index, claim in enumerate(other_claims):
                for m in claim.finditer(line):
                    role, raw = _match_role(m.group("role"), roles), m.group("person")
                    people = _people(raw, roster, line[:m.end("person")])
                    if role is None or len(people) == 1:
                        placed.add(role)
                    elif people:
                        notes.setdefault(role, ((number, m.start()), Ambiguous(_shown(raw), role, people)))
                    elif index < 2 and raw.split()[0].lower() not in _NOT_NAMES:  # "should/could..." and "let" only
                        name = raw if index == 1 else _named_before(line, m.end("person"))
                        notes.setdefault(role, ((number, m.start()), Unknown(_shown(name), role)))
        slot = _slot(tuple(roles)) if roles else None
        patterns_given = _given()[0]
        for given in patterns_given:
            for m in given.finditer(line):
                said, person = m.group("role"), m.group("person")
                if ((slot is not None and slot.match(line, m.start("role"))) or said.split()[0].lower() in _NOT_ROLES
                        or person.split()[0].lower() in _NOT_NAMES or _people(said.split()[0], roster)):
                    continue
                name = person if given is patterns_given[0] else _named_before(line, m.end("person"))
                notes.setdefault(same_name(said), ((number, m.start()), NoSuchRole(_shown(said), _shown(name))))
    return [note for role, (_, note) in sorted(notes.items(), key=lambda item: item[1][0]) if role not in placed]


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
