"""What an export says, gathered once: the facts, the decisions, the action items and the transcript.

Decisions come from ``DECISION:`` markers and action items from ``TODO:`` and
``ASSIGNED:`` markers, in the contributions and in the conclusion. A "Decisions" section
the facilitator wrote into its conclusion is folded into the export's one Decisions
section (what it adds is kept, attributed to the facilitator), so a reader finds the
decisions in one place, worded one way. The facilitator's own steering decisions (who
speaks next and why) stay in the transcript. Roles, formats and statuses are shown with
their human labels.
"""
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from facilitation.deliberation.markers import parse_markers
from facilitation.exports.markdown_docx import parse
from rooms.models import Observation, Room, Seat

REHEARSAL_NOTICE = ("Offline rehearsal: some or all of this text was produced by the offline rehearsal model, "
                    "not by a language model. It shows how the discussion runs; it is not real advice.")
STATUS_TEXT = {"ok": "", "timed_out": "timed out, no response", "error": "error"}
NO_DECISIONS = "No decision was recorded."
NO_ACTIONS = "No action item was recorded."
ROLE_LABELS = {"participant": "Participant", "observer": "Observer", "devil_advocate": "Devil's advocate",
               "facilitator": "Facilitator", "human": "Person", "system": "System"}
FORMAT_LABELS = {"brainstorm": "Brainstorm", "review": "Review", "deliberation": "Deliberation"}
ROOM_STATUS_LABELS = {"draft": "Draft", "active": "Active", "paused": "Paused", "concluded": "Concluded",
                      "stopped": "Stopped", "failed": "Failed", "completed": "Completed", "archived": "Archived"}


def label(table: dict, value: str) -> str:
    """The human label of an internal value (``devil_advocate`` -> ``Devil's advocate``)."""
    if value in table:
        return table[value]
    return (value or "").replace("_", " ").capitalize()


@dataclass
class Item:
    text: str
    who: str
    round: int


@dataclass
class Entry:
    seq: int
    round: int
    kind: str  # contribution | decision | synthesis | message | system
    who: str
    role: str
    content: str
    status: str
    markers: list = field(default_factory=list)
    data: dict = field(default_factory=dict)
    next_speaker: str = ""
    repeats_conclusion: bool = False  # a synthesis whose text is the conclusion shown above it


@dataclass
class Minutes:
    title: str
    topic: str
    format: str
    kind: str
    status: str
    round: int
    max_rounds: int
    facilitator: str
    participants: list[tuple[str, str]]
    created_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    conclusion: str  # the conclusion without its own "Decisions" section (folded into ``decisions``)
    rehearsal: bool
    decisions: list[Item]
    action_items: list[Item]
    entries: list[Entry]
    tokens: int


def _role_of(obs: Observation) -> str:
    if obs.seat is not None:
        return obs.seat.role
    return "facilitator" if obs.author_kind == Observation.AuthorKind.FACILITATOR else obs.author_kind


def _collect_items(entries: list[Entry], conclusion: str, facilitator: str, final_round: int):
    decisions: list[Item] = []
    actions: list[Item] = []
    seen: set[tuple[str, str]] = set()

    def add(marker: dict, who: str, rnd: int) -> None:
        kind = marker.get("type")
        text = (marker.get("text") or "").strip()
        if not text or kind not in ("decision", "todo", "assigned") or (kind, text.lower()) in seen:
            return
        seen.add((kind, text.lower()))
        (decisions if kind == "decision" else actions).append(Item(text, who, rnd))

    for entry in entries:
        markers = entry.markers or (parse_markers(entry.content) if entry.kind == "synthesis" else [])
        for marker in markers:
            add(marker, entry.who, entry.round)
    if not any(e.kind == "synthesis" for e in entries):
        for marker in parse_markers(conclusion):
            add(marker, facilitator, final_round)
    return decisions, actions


_DECISIONS_HEADING = re.compile(r"^\s*(?:key\s+)?decisions(?:\s+(?:made|taken|recorded))?\s*:?\s*$", re.IGNORECASE)
_NOTHING = re.compile(r"^(?:_)?(?:no|none)\b", re.IGNORECASE)
_ATTRIBUTION = re.compile(r"\s*\((?:[^()]{1,80})\)\s*$")


def _normal(text: str) -> str:
    text = _ATTRIBUTION.sub("", text or "")
    return " ".join(re.sub(r"[*_`]", "", text).lower().split()).rstrip(".…")


def split_decisions(conclusion: str) -> tuple[str, list[str]]:
    """(the conclusion without its "Decisions" section, that section's items)."""
    tokens = parse(conclusion)
    lines = (conclusion or "").split("\n")
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or not token.map or not _DECISIONS_HEADING.match(tokens[i + 1].content):
            continue
        level = int(token.tag[1])
        start = token.map[0]
        end = len(lines)
        items: list[str] = []
        for later in tokens[i + 3:]:
            if later.type == "heading_open" and int(later.tag[1]) <= level and later.map:
                end = later.map[0]
                break
            if later.type == "inline" and later.content.strip():
                items.append(later.content.strip())
        body = "\n".join(lines[:start] + lines[end:]).strip()
        return body, [item for item in items if not _NOTHING.match(item)]
    return (conclusion or "").strip(), []


def _fold_decisions(decisions: list[Item], written: list[str], facilitator: str, final_round: int) -> list[Item]:
    known = [_normal(d.text) for d in decisions]
    out = list(decisions)
    for text in written:
        norm = _normal(text)
        if not norm or any(norm in k or k in norm for k in known):
            continue
        known.append(norm)
        out.append(Item(_ATTRIBUTION.sub("", text).strip(), facilitator, final_round))
    return out


def seat_names(seats: list[Seat]) -> dict[int, str]:
    """Each seat's name in the minutes: its agent's or person's name, and for agents of one name (without case)
    the agent's @alias too, "Architect (@3d-architect)", as the pages tell them apart."""
    fold = {s.pk: s.display_name.strip().lower() for s in seats}
    shared = {name for name, count in Counter(fold.values()).items() if count > 1}
    return {s.pk: f"{s.display_name} (@{s.agent.alias})" if s.agent_id and s.agent.alias and fold[s.pk] in shared
            else s.display_name for s in seats}


def _participants(seats: list[Seat], names: dict[int, str], rows: list[Observation]) -> list[tuple[str, str]]:
    """Who took part: the seats but the facilitator's, then the people who spoke without a seat (from a linked chat, or
    a comment), each once, in the order they first spoke."""
    out = [(names[s.pk], label(ROLE_LABELS, s.role)) for s in seats if s.role != Seat.Role.FACILITATOR]
    known = {name.casefold() for name, _ in out}
    for o in rows:
        name = (o.author_name or "").strip()
        if o.author_kind == Observation.AuthorKind.HUMAN and o.seat_id is None and name and name.casefold() not in known:
            known.add(name.casefold())
            out.append((name, ROLE_LABELS["human"]))
    return out


def collect(room: Room) -> Minutes:
    seats = list(room.seats.select_related("agent", "user").order_by("position", "id"))
    names = seat_names(seats)
    facilitator = next((names[s.pk] for s in seats if s.role == Seat.Role.FACILITATOR), None)
    if facilitator is None:
        facilitator = room.moderator.name if room.moderator_id else "-"
    rows = list(Observation.objects.filter(room=room).select_related("seat", "seat__agent", "seat__user").order_by("seq"))
    # a turn keeps the name it was written under, with the agent's @alias where another agent has that name
    told_apart = {s.pk: names[s.pk] for s in seats if names[s.pk] != s.display_name}
    entries = [Entry(o.seq, o.round, o.kind, told_apart.get(o.seat_id, o.author_name), label(ROLE_LABELS, _role_of(o)), o.content, o.status, list(o.markers or []),
                     dict(o.data or {}), names.get((o.data or {}).get("nextParticipantId"), "")) for o in rows]
    final = (room.conclusion or "").strip()
    for entry in entries:
        entry.repeats_conclusion = entry.kind == "synthesis" and bool(final) and entry.content.strip() == final
    decisions, actions = _collect_items(entries, room.conclusion, facilitator, room.round)
    conclusion, written = split_decisions(room.conclusion)
    decisions = _fold_decisions(decisions, written, facilitator, room.round)
    return Minutes(
        title=room.name, topic=room.topic, format=label(FORMAT_LABELS, room.format), kind=room.kind,
        status=label(ROOM_STATUS_LABELS, room.status), round=room.round,
        max_rounds=room.max_rounds, facilitator=facilitator,
        participants=_participants(seats, names, rows),
        created_at=room.created_at, started_at=room.started_at, ended_at=room.ended_at,
        conclusion=conclusion, rehearsal=any(o.provider == "rehearsal" for o in rows),
        decisions=decisions, action_items=actions, entries=entries, tokens=room.tokens_used,
    )


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "-"


def marker_label(marker: dict) -> str:
    kind = marker.get("type", "")
    if kind == "mention":
        return f"@{marker.get('target') or marker.get('text')}"
    if kind == "vote":
        return f"VOTE {marker.get('value', '')}".strip()
    return f"{kind.upper()}: {marker.get('text', '')}"


def decision_line(data: dict) -> str:
    """The facilitator's steering decision in one line."""
    verdict = data.get("decision") or "decision"
    parts = [verdict]
    if data.get("fallback"):
        parts.append(f"fallback: {data['fallback']}")
    return " · ".join(parts)
