"""What an export says, gathered once: the facts, the decisions, the action items and the transcript.

Decisions come from ``DECISION:`` markers and action items from ``TODO:`` and
``ASSIGNED:`` markers, in the contributions and in the conclusion. The facilitator's
own steering decisions (who speaks next and why) stay in the transcript.
"""
from dataclasses import dataclass, field
from datetime import datetime

from facilitation.deliberation.markers import parse_markers
from rooms.models import Observation, Room, Seat

REHEARSAL_NOTICE = ("Offline rehearsal: some or all of this text was produced by the offline rehearsal model, "
                    "not by a language model. It shows how the discussion runs; it is not real advice.")
STATUS_TEXT = {"ok": "", "timed_out": "timed out, no response", "error": "error"}


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
    conclusion: str
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


def collect(room: Room) -> Minutes:
    seats = list(room.seats.select_related("agent", "user").order_by("position", "id"))
    facilitator = next((s.display_name for s in seats if s.role == Seat.Role.FACILITATOR), None)
    if facilitator is None:
        facilitator = room.moderator.name if room.moderator_id else "-"
    rows = list(Observation.objects.filter(room=room).select_related("seat", "seat__agent", "seat__user").order_by("seq"))
    names = {s.pk: s.display_name for s in seats}
    entries = [Entry(o.seq, o.round, o.kind, o.author_name, _role_of(o), o.content, o.status, list(o.markers or []),
                     dict(o.data or {}), names.get((o.data or {}).get("nextParticipantId"), "")) for o in rows]
    decisions, actions = _collect_items(entries, room.conclusion, facilitator, room.round)
    return Minutes(
        title=room.name, topic=room.topic, format=room.format, kind=room.kind, status=room.status, round=room.round,
        max_rounds=room.max_rounds, facilitator=facilitator,
        participants=[(s.display_name, s.role) for s in seats if s.role != Seat.Role.FACILITATOR],
        created_at=room.created_at, started_at=room.started_at, ended_at=room.ended_at,
        conclusion=room.conclusion, rehearsal=any(o.provider == "rehearsal" for o in rows),
        decisions=decisions, action_items=actions, entries=entries, tokens=room.tokens_used,
    )


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "-"


def marker_label(marker: dict) -> str:
    kind = marker.get("type", "")
    if kind == "mention":
        return f"@{marker.get('alias') or marker.get('text')}"
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
