"""Reading a request's prompt text, as a model would: the rehearsal model sees nothing else.

The prompt builder (``facilitation.prompts``) writes the room brief, the rolling
summaries, the latest turns and the room state in fixed line formats; this module reads
them back. Whatever is not in the text is unknown to the rehearsal model.
"""
import html
import json
import re
from dataclasses import dataclass, field

from facilitation.deliberation import parse_markers

ROLE_KEYS = {"participant": "participant", "devil's advocate": "devil_advocate", "observer": "observer",
             "background": "background"}
KINDS = {"Q": "question", "C": "concern", "D": "decision", "T": "todo"}

_S = r'"(?:[^"\\\n]|\\.)*"'  # a JSON string: how names and quoted items appear inside a line
_SEAT = re.compile(rf"^- \[(\d+)\] ({_S})(?: \(@([\w.-]+)\))?, (participant|devil's advocate|observer|background)(?:: (.*?))?(?: \((absent|never speaks|speaks only to vote)\))?$")
_AIRTIME = re.compile(rf"^- \[(\d+)\] ({_S}): (\d+) turns?, (\d+) words, (?:last heard in round (\d+)|not heard yet); "
                      r"(?:vote (READY|CHANGES|REJECT) \(round (\d+)\)|no vote)$")
_ITEM = re.compile(rf"^- ([QCDT])(\d+) by ({_S}) \(round (\d+)(?:, ([a-z]+)(?:, owner ({_S}))?)?\): ({_S})$")
_TURN = re.compile(r'<turn seat="([^"]*)" speaker="([^"]*)" role="([^"]*)" round="([^"]*)">\n(.*?)\n</turn>', re.DOTALL)
_IDS = re.compile(r"\[(\d+)\]")
_REJECT = re.compile(rf"({_S}) \(round (\d+)\): ({_S})")
_PREVIOUS = re.compile(rf"^Your previous question \(round (\d+), to \[\d+\] ({_S})\): ({_S}): (.+)\.$")
_QUOTED = re.compile(_S)


def _str(token: str | None) -> str:
    """The text of a JSON string token (empty when absent or unreadable)."""
    if not token:
        return ""
    try:
        value = json.loads(token)
    except ValueError:
        return token.strip('"')
    return value if isinstance(value, str) else str(value)


def _ids(line: str) -> list[int]:
    """Seat ids in a line, ignoring anything inside quoted names."""
    return [int(i) for i in _IDS.findall(_QUOTED.sub('""', line))]
_STYLE_NAMES = {
    "the socratic": "socratic", "the contrarian": "contrarian", "the bridge-builder": "bridge-builder", "the spark": "spark",
    "the examiner": "examiner", "the impartial chair": "impartial-chair", "the closer": "closer", "the equalizer": "equalizer",
}


@dataclass
class Seat:
    id: int
    name: str
    alias: str
    role: str
    details: str = ""
    active: bool = True

    def as_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "alias": self.alias, "role": self.role, "details": self.details}


@dataclass
class Reading:
    kind: str = "generic"  # opening | evaluation | synthesis | contribution | generic
    style: str = "generic"
    facilitator_name: str = ""
    me: Seat | None = None
    topic: str = ""
    format: str = "deliberation"
    max_rounds: int = 0
    seats: list[Seat] = field(default_factory=list)
    summaries: list[dict] = field(default_factory=list)  # {round, speaker, gist}
    turns: list[dict] = field(default_factory=list)  # {seatId, speaker, role, round, content}
    round: int = 0
    rounds_left: int = 0
    airtime: dict = field(default_factory=dict)  # seat id -> {turns, words, lastRound}
    votes: dict = field(default_factory=dict)  # speaker name -> {value, round}
    last_id: int | None = None
    mentioned: list[int] = field(default_factory=list)
    items: list[dict] = field(default_factory=list)  # {id, type, speaker, round, status, owner, text, open}
    rejects: list[dict] = field(default_factory=list)  # {speaker, round, text}
    previous: dict | None = None  # {round, to, text, outcome}
    allowed: list[int] | None = None
    must_synthesize: bool = False
    question: str = ""
    reason: str = ""
    omissions: list[str] = field(default_factory=list)
    text: str = ""


def _section_after(text: str, heading: str) -> str:
    start = text.find(heading)
    return text[start + len(heading):] if start >= 0 else ""


def _style(system: str) -> tuple[str, str]:
    """The facilitator's style and name: a preset's policy names both; else the persona's "You are ..."
    (a facilitator written from a preset still introduces itself by the preset's name); else no name."""
    match = re.search(r"^## Your selection policy \((.+?)\)$", system, re.MULTILINE)
    policy = match.group(1).strip() if match else ""
    style = _STYLE_NAMES.get(policy.lower())
    if style is not None:
        return style, policy
    intro = re.search(r"\bYou are (The [A-Z][\w-]*(?: [A-Z][\w-]*)?)", system)
    if intro:
        return _STYLE_NAMES.get(intro.group(1).lower(), "generic"), intro.group(1)
    named = re.search(r"\bYou are ([A-Z][\w-]*(?: [A-Z][\w-]*)?)[,.]", system)
    return "generic", named.group(1) if named else ""


def _kind(task: str) -> str:
    if "## Your turn" in task:
        return "contribution"
    if "Open the discussion:" in task:
        return "opening"
    if "Evaluate the latest turn" in task:
        return "evaluation"
    if "Write the conclusion now" in task:
        return "synthesis"
    return "generic"


def _summary_lines(text: str) -> list[dict]:
    out = []
    for match in re.finditer(r"^- Round (\d+), (.+?): (.*)$", text, re.MULTILINE):
        out.append({"round": int(match.group(1)), "speaker": match.group(2), "gist": match.group(3)})
    return out


def read_prompt(system: str, user: str) -> Reading:
    reading = Reading(text=user)
    reading.kind = _kind(user)
    reading.style, reading.facilitator_name = _style(system)
    topic = re.search(r"<topic>\n(.*?)\n</topic>", system, re.DOTALL)
    reading.topic = topic.group(1).strip() if topic else ""
    fmt = re.search(r"^Format: (\w+)\.", system, re.MULTILINE)
    reading.format = fmt.group(1).lower() if fmt else "deliberation"
    rounds = re.search(r"^Rounds: at most (\d+);", system, re.MULTILINE)
    reading.max_rounds = int(rounds.group(1)) if rounds else 0
    for line in system.splitlines():
        match = _SEAT.match(line)
        if match:
            details = _QUOTED.sub(lambda m: _str(m.group(0)), match.group(5) or "")
            reading.seats.append(Seat(int(match.group(1)), _str(match.group(2)), match.group(3) or "", ROLE_KEYS[match.group(4)],
                                      details, match.group(6) != "absent"))
    me = re.search(r"^You are: \[(\d+)\]", system, re.MULTILINE)
    if me:
        reading.me = next((s for s in reading.seats if s.id == int(me.group(1))), None)

    state_start = user.rfind("## Room state")
    history, state = (user[:state_start], user[state_start:]) if state_start >= 0 else (user, "")
    reading.summaries = _summary_lines(_section_after(history, "## Earlier turns in summary").split("## Latest turns")[0])
    for match in _TURN.finditer(history):
        seat = match.group(1)
        role = html.unescape(match.group(3))
        reading.turns.append({"seatId": int(seat) if seat.isdigit() else None, "speaker": html.unescape(match.group(2)),
                              "role": ROLE_KEYS.get(role, role), "round": int(match.group(4)) if match.group(4).isdigit() else 0,
                              "content": match.group(5)})
    _read_state(reading, state)
    return reading


def _read_state(reading: Reading, state: str) -> None:
    counter = re.search(r"^Round (\d+) of (\d+): (\d+) rounds? left\.", state, re.MULTILINE)
    if counter:
        reading.round, reading.rounds_left = int(counter.group(1)), int(counter.group(3))
    section = ""
    for line in state.splitlines():
        air = _AIRTIME.match(line)
        if air:
            seat_id = int(air.group(1))
            reading.airtime[seat_id] = {"turns": int(air.group(3)), "words": int(air.group(4)),
                                        "lastRound": int(air.group(5)) if air.group(5) else None}
            if air.group(6):
                reading.votes[_str(air.group(2))] = {"value": air.group(6), "round": int(air.group(7))}
            continue
        if line.startswith("Last speaker: ["):
            reading.last_id = (_ids(line) or [None])[0]
        elif line.startswith("Addressed with @ in the latest turn:"):
            reading.mentioned = _ids(line)
        elif line.startswith("May speak next:"):
            reading.allowed = _ids(line)
        elif line.startswith("Standing REJECT votes, unanswered:"):
            reading.rejects = [{"speaker": _str(m.group(1)), "round": int(m.group(2)), "text": _str(m.group(3))}
                               for m in _REJECT.finditer(line)]
        elif line.startswith("Your previous question"):
            prev = _PREVIOUS.match(line)
            if prev:
                reading.previous = {"round": int(prev.group(1)), "to": _str(prev.group(2)), "text": _str(prev.group(3)),
                                    "outcome": prev.group(4)}
        elif re.match(r"^(Open questions|Open concerns|Decisions on record|TODOs)\b", line):
            section = line.split(":")[0].split(" (")[0]
        item = _ITEM.match(line)
        if item and section:
            kind = KINDS[item.group(1)]
            status = item.group(5) or ("recorded" if kind == "decision" else "open")
            reading.items.append({"id": item.group(1) + item.group(2), "type": kind, "speaker": _str(item.group(3)),
                                  "round": int(item.group(4)), "status": status, "owner": _str(item.group(6)),
                                  "text": _str(item.group(7)), "open": kind != "decision" and status in ("open", "assigned")})
    reading.must_synthesize = 'you must decide "synthesize"' in state
    asked = re.search(r"^The facilitator asks you, .+?:\n<question>\n(.*?)\n</question>", state, re.MULTILINE | re.DOTALL)
    reading.question = asked.group(1).strip() if asked else ""
    over = re.search(r"The discussion is over: (.+?)\. Write the conclusion now", state)
    reading.reason = over.group(1) if over else ""
    if "Your previous draft left these items out" in state:
        tail = state.split("Your previous draft left these items out", 1)[1]
        reading.omissions = [_str(m.group(1)) for m in re.finditer(rf"^- .+?: ({_S})$", tail, re.MULTILINE)]


def turn_markers(reading: Reading) -> list[dict]:
    """The markers of the verbatim turns, as points {speaker, type, text, value?, round}."""
    points = []
    for turn in reading.turns:
        for marker in parse_markers(turn["content"]):
            point = {"speaker": turn["speaker"], "type": marker["type"], "text": marker.get("text", ""), "round": turn["round"]}
            if "value" in marker:
                point["value"] = marker["value"]
            points.append(point)
    return points
