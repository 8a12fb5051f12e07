"""The discussion file: a discussion as one Markdown document, and back. Pure Python.

Layout::

    ---
    name: "Caching the catalogue"          <- header: one ``key: <JSON value>`` per line
    topic: "..."
    ...
    ---

    # Caching the catalogue

    ### Turn 3 · round 1 · Architect (participant)  <!-- convene:turn {"seq": 3, ...} -->
    The turn's text, as written.

A turn the offline rehearsal model wrote carries ``"rehearsal": true`` in its data (and says
"offline rehearsal" in its heading), so a discussion imported from the file is labelled as a
rehearsal wherever the original was; the key is absent for every other turn.

Each turn's exact data travels in the HTML comment of its heading (invisible when the
Markdown is rendered); the visible part is for people. A content line that would read as
a turn heading or a header fence is escaped with a backslash, so any text round-trips:
``render(parse(text)) == text`` for every file ``render`` wrote.

``parse`` takes only what ``render`` could have written: header values of the right type (text, a number,
the participants as a list of objects), turn data with whole-number ``seq`` (from 1) and ``round`` (from 0)
and text fields, and no number JSON lacks (NaN, Infinity, or one too large for a float). It records the
line of each header key and turn heading, so a check made later (what a database can store) can name it.
"""
import json
import math
import re
from dataclasses import dataclass, field

MAGIC = "<!-- convene discussion file v1 -->"
HEADER_KEYS = ("name", "topic", "format", "template", "phase", "maxRounds", "consensus", "facilitator", "participants",
               "status", "conclusion")
_TURN = re.compile(r"^### .*<!-- convene:turn (?P<data>\{.*\}) -->$")
_ESCAPABLE = re.compile(r"^\\*(### |---$|<!-- convene)")
_HEADER_LINE = re.compile(r"^(?P<key>[A-Za-z]+): (?P<value>.*)$")
#: Header keys whose value is text (or null); ``maxRounds`` and ``consensus`` are checked where they are used.
TEXT_KEYS = ("name", "topic", "format", "template", "phase", "facilitator", "status", "conclusion")
PARTICIPANT_KEYS = ("name", "alias", "role")
#: A turn's data fields that are text; ``seq`` and ``round`` are whole numbers, ``rehearsal`` true or false.
TURN_TEXT_KEYS = ("speaker", "role", "kind", "author", "status")


class FileError(ValueError):
    """A malformed discussion file; ``line`` is 1-based."""

    def __init__(self, message: str, line: int):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message


@dataclass
class FileTurn:
    seq: int
    round: int
    speaker: str
    role: str
    kind: str = "contribution"  # contribution | decision | synthesis | message
    author: str = "agent"  # agent | facilitator | human | system
    status: str = "ok"
    content: str = ""
    rehearsal: bool = False  # written by the offline rehearsal model
    line: int = field(default=0, compare=False)  # the heading's line in the file parse read it from

    def data(self) -> dict:
        data = {"seq": self.seq, "round": self.round, "speaker": self.speaker, "role": self.role, "kind": self.kind,
                "author": self.author, "status": self.status}
        if self.rehearsal:
            data["rehearsal"] = True
        return data


@dataclass
class DiscussionFile:
    header: dict
    turns: list[FileTurn] = field(default_factory=list)
    header_lines: dict = field(default_factory=dict, compare=False)  # header key -> its line, as parse read it


def _finite(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError("a number too large")
    return number


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _load(text: str):
    """A JSON value as a file may carry one: NaN, Infinity and numbers too large (1e400) are refused."""
    return json.loads(text, parse_float=_finite, parse_constant=_no_constant)


def _reason(exc: ValueError) -> str:
    return exc.msg if isinstance(exc, json.JSONDecodeError) else "a number out of range"


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text_or_null(value) -> bool:
    return value is None or isinstance(value, str)


def _header_type_error(key: str, value) -> str | None:
    if key in TEXT_KEYS and not _text_or_null(value):
        return f"the value of {key!r} must be text"
    if key == "participants" and value is not None and not (
            isinstance(value, list) and all(isinstance(p, dict) and all(_text_or_null(p.get(k)) for k in PARTICIPANT_KEYS)
                                            for p in value)):
        return "'participants' must be a list of objects whose name, alias and role are text"
    return None


def _escape(line: str) -> str:
    return "\\" + line if _ESCAPABLE.match(line) else line


def _unescape(line: str) -> str:
    return line[1:] if line.startswith("\\") and _ESCAPABLE.match(line) else line


def _visible(turn: FileTurn) -> str:
    speaker = turn.speaker.replace("\n", " ")
    mark = " · offline rehearsal" if turn.rehearsal else ""
    return f"### Turn {turn.seq} · round {turn.round} · {speaker} ({turn.role.replace('_', ' ')}){mark}"


def render(doc: DiscussionFile) -> str:
    lines = [MAGIC, "---"]
    for key in HEADER_KEYS:
        if key in doc.header:
            lines.append(f"{key}: {json.dumps(doc.header[key], ensure_ascii=False, sort_keys=True)}")
    lines += ["---", "", f"# {str(doc.header.get('name', 'Discussion')).splitlines()[0] if doc.header.get('name') else 'Discussion'}", ""]
    for turn in doc.turns:
        lines.append(f"{_visible(turn)}  <!-- convene:turn {json.dumps(turn.data(), ensure_ascii=False, sort_keys=True)} -->")
        lines += [_escape(line) for line in turn.content.split("\n")]
        lines.append("")
    return "\n".join(lines)


def parse(text: str) -> DiscussionFile:
    """Read a file ``render`` wrote. Raises ``FileError`` naming the line of the first problem.

    A file an editor saved with a byte-order mark or with Windows line ends (its first line ends in CR)
    is read as the file it was: the mark is dropped and every CR LF read as LF."""
    text = text.removeprefix("\ufeff")
    if text.split("\n", 1)[0].endswith("\r"):
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].strip() != MAGIC:
        raise FileError(f"the file must start with {MAGIC}", 1)
    if len(lines) < 2 or lines[1] != "---":
        raise FileError("the header must start with a line '---'", 2)
    header: dict = {}
    header_lines: dict = {}
    index = 2
    while True:
        if index >= len(lines) or not lines[index].strip():
            raise FileError("the header is not closed with a line '---'", index + 1)
        line = lines[index]
        if line == "---":
            break
        match = _HEADER_LINE.match(line)
        if not match:
            raise FileError("expected 'key: value' in the header", index + 1)
        key = match.group("key")
        if key not in HEADER_KEYS:
            raise FileError(f"unknown header key {key!r}", index + 1)
        try:
            header[key] = _load(match.group("value"))
        except ValueError as exc:
            raise FileError(f"the value of {key!r} is not valid JSON ({_reason(exc)})", index + 1) from None
        problem = _header_type_error(key, header[key])
        if problem:
            raise FileError(problem, index + 1)
        header_lines[key] = index + 1
        index += 1
    for required in ("name", "topic"):
        if not isinstance(header.get(required), str) or not header[required].strip():
            raise FileError(f"the header needs a non-empty {required!r}", 2)
    turns: list[FileTurn] = []
    current: list[str] | None = None
    for number in range(index + 1, len(lines)):
        line = lines[number]
        match = _TURN.match(line)
        if match:
            if current is not None:
                turns[-1].content = _body(current)
            try:
                data = _load(match.group("data"))
                turn = FileTurn(seq=data["seq"], round=data["round"], speaker=data["speaker"], role=data["role"],
                                kind=data.get("kind", "contribution"), author=data.get("author", "agent"),
                                status=data.get("status", "ok"), rehearsal=data.get("rehearsal", False), line=number + 1)
            except (KeyError, TypeError, ValueError):
                raise FileError("a turn heading carries malformed data", number + 1) from None
            if not (_whole(turn.seq) and turn.seq >= 1 and _whole(turn.round) and turn.round >= 0):
                raise FileError("a turn's seq and round must be whole numbers (seq from 1, round from 0)", number + 1)
            if not all(isinstance(getattr(turn, key), str) for key in TURN_TEXT_KEYS):
                raise FileError(f"a turn's {', '.join(TURN_TEXT_KEYS)} must be text", number + 1)
            if not isinstance(turn.rehearsal, bool):
                raise FileError("a turn's \"rehearsal\" must be true or false", number + 1)
            if turns and turn.seq <= turns[-1].seq:
                raise FileError("turns must be in increasing seq order", number + 1)
            turns.append(turn)
            current = []
        elif current is not None:
            current.append(_unescape(line))
    if current is not None:
        turns[-1].content = _body(current)
    return DiscussionFile(header=header, turns=turns, header_lines=header_lines)


def _body(lines: list[str]) -> str:
    # render() writes the content, then one empty separator line
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return "\n".join(lines)
