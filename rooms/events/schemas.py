"""One typed payload per event, and the validator the tests run on every pushed event.

Each payload is a ``TypedDict``: its keys are exactly the wire's (camelCase), a key marked
``NotRequired`` may be absent, and no other key may appear, except in the shapes listed in
``OPEN`` (the nested resources of features still growing: they name the fields every client
may rely on and tolerate more). ``validate(event_type, payload)`` raises ``EventSchemaError``
naming the first path that does not match.

Logged events share the envelope ``{discussionId, seq, ts}``; the direct ones (``REVOKED``,
``SESSION_REVOKED``, ``ACCESS``) carry only what their connection needs.
"""
import types
import typing
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from rooms.events.types import EventType, as_event_type


class OneOf:
    """``Annotated[str, OneOf(values)]``: a string from a fixed set (a model's choices)."""

    def __init__(self, values):
        self.values = frozenset(values)

    def __repr__(self):
        return f"OneOf({sorted(self.values)})"


ROOM_STATUSES = ("draft", "active", "paused", "concluded", "stopped", "failed", "completed", "archived")
TURN_STATUSES = ("ok", "timed_out", "error")
AUTHOR_KINDS = ("agent", "facilitator", "human", "system")
TURN_KINDS = ("contribution", "decision", "synthesis", "message")
TURN_CHANGES = ("edited", "deleted", "restored")

RoomStatus = Annotated[str, OneOf(ROOM_STATUSES)]


# --- shapes shared by several events ------------------------------------------------------

class Speaker(TypedDict):
    id: int | None  # the seat
    name: str
    kind: Annotated[str, OneOf(AUTHOR_KINDS)]
    role: str


class Marker(TypedDict):
    type: str
    text: str
    value: NotRequired[str]
    target: NotRequired[str]
    alias: NotRequired[str]
    line: NotRequired[int]


class Turn(TypedDict):
    id: int
    seq: int
    round: int
    kind: Annotated[str, OneOf(TURN_KINDS)]
    speaker: Speaker
    content: str
    markers: list[Marker]
    status: Annotated[str, OneOf(TURN_STATUSES)]
    provider: str
    rehearsal: bool
    tokens: int
    data: dict[str, Any]
    createdAt: str | None


# What the engine changed in a decision and why (a guardrail, a repair, a salvaged speaker).
Correction = TypedDict("Correction", {"rule": str, "reason": str, "from": NotRequired[int | None], "to": NotRequired[int | None]})


class Decision(TypedDict):
    decision: Literal["continue", "synthesize"]
    nextParticipantId: int | None
    question: str
    reasoning: str
    fallback: str | None
    progress: dict[str, Any]
    corrections: NotRequired[list[Correction]]
    # Several seats asked at once (the speaker first): their turns run in parallel, committed in this order.
    together: NotRequired[list[int]]


class Vote(TypedDict):
    seatId: int | None
    name: str
    value: str
    seq: int


class ObservationShape(TypedDict):
    id: int
    type: str
    content: str
    round: int


class NarrativeShape(TypedDict):
    id: int
    round: int
    content: str
    version: int


class TaskShape(TypedDict):
    id: int
    title: str
    status: str
    version: int


class ArtifactShape(TypedDict):
    done: bool
    missing: list[Any]


class DeliveryShape(TypedDict):
    """Exactly these: who a message went to and why it did not arrive are not in the event (``build.delivery``)."""
    id: int
    kind: str
    platform: str
    status: Literal["sent", "undeliverable", "retrying"]
    state: Literal["queued", "sending", "retrying", "sent", "undeliverable"]
    attempts: int
    chatId: int | None
    sourceSeq: int | None
    createdAt: str
    sentAt: str | None


class LinkShape(TypedDict):
    id: int
    chatId: int
    platform: str
    title: str
    active: bool




class RoundShape(TypedDict):
    number: int
    eventCount: int


class ParticipantShape(TypedDict):
    seatId: int
    personaId: int | None
    roleId: int | None
    version: int


class AdaptationShape(TypedDict):
    id: int
    agentId: int
    personaId: int | None
    version: int



OPEN = frozenset({ObservationShape, NarrativeShape, TaskShape, ArtifactShape, LinkShape, RoundShape,
                  ParticipantShape, AdaptationShape})


# --- the events ------------------------------------------------------------------------

class Logged(TypedDict):
    discussionId: int
    seq: int
    ts: str


class TurnEvent(Logged):
    turn: Turn


class TurnUpdatedEvent(Logged):
    turn: Turn
    change: Annotated[str, OneOf(TURN_CHANGES)]


class ModeratorEvent(Logged):
    decision: Decision
    round: int
    turn: Turn


class ConcludedEvent(Logged):
    conclusion: str
    status: RoomStatus
    turn: Turn


class StatusEvent(Logged):
    status: RoomStatus
    round: int
    maxRounds: int


class PhaseEvent(Logged):
    phase: str
    votes: list[Vote]


class ObservationEvent(Logged):
    observation: ObservationShape


class RoundEvent(Logged):
    round: int
    state: Literal["started", "ended"]
    roundInfo: NotRequired[RoundShape]  # workspace rounds: start, end, event count, snapshot


class ParticipantEvent(Logged):
    participant: ParticipantShape


class AdaptationEvent(Logged):
    adaptation: AdaptationShape


class NarrativeEvent(Logged):
    narrative: NarrativeShape


class TaskEvent(Logged):
    task: TaskShape
    deleted: NotRequired[bool]  # the task as it was before the manager deleted it


class ArtifactEvent(Logged):
    artifact: ArtifactShape


class DeliveryEvent(Logged):
    delivery: DeliveryShape


class LinkEvent(Logged):
    link: LinkShape
    state: Literal["linked", "unlinked"]


class RevokedEvent(TypedDict):
    discussionId: int


class SessionRevokedEvent(TypedDict):
    reason: str


class AccessEvent(TypedDict):
    discussionId: int
    access: str  # viewer | participant


SCHEMAS: dict[EventType, type] = {
    EventType.TURN: TurnEvent,
    EventType.TURN_UPDATED: TurnUpdatedEvent,
    EventType.MODERATOR: ModeratorEvent,
    EventType.CONCLUDED: ConcludedEvent,
    EventType.STATUS: StatusEvent,
    EventType.PHASE: PhaseEvent,
    EventType.OBSERVATION: ObservationEvent,
    EventType.ROUND: RoundEvent,
    EventType.NARRATIVE: NarrativeEvent,
    EventType.TASK: TaskEvent,
    EventType.ARTIFACT: ArtifactEvent,
    EventType.DELIVERY: DeliveryEvent,
    EventType.LINK: LinkEvent,
    EventType.PARTICIPANT: ParticipantEvent,
    EventType.ADAPTATION: AdaptationEvent,
    EventType.REVOKED: RevokedEvent,
    EventType.SESSION_REVOKED: SessionRevokedEvent,
    EventType.ACCESS: AccessEvent,
}


# --- the validator ---------------------------------------------------------------------

class EventSchemaError(ValueError):
    pass


def validate(event_type, payload) -> None:
    """Raise ``EventSchemaError`` unless ``payload`` is exactly the shape of ``event_type``."""
    try:
        kind = as_event_type(event_type)
    except ValueError:
        raise EventSchemaError(f"unknown event type {event_type!r}") from None
    _check(payload, SCHEMAS[kind], kind.value)


def validate_message(message: dict) -> None:
    """A replayed event (``{"type", **payload}``, as ``events_after`` returns it)."""
    if not isinstance(message, dict) or "type" not in message:
        raise EventSchemaError(f"not an event message: {message!r}")
    payload = {k: v for k, v in message.items() if k != "type"}
    validate(message["type"], payload)


def _fail(path: str, expected, value) -> None:
    raise EventSchemaError(f"{path}: expected {getattr(expected, '__name__', expected)}, got {value!r}")


def _check(value, tp, path: str) -> None:  # noqa: C901 - one branch per kind of annotation
    origin = typing.get_origin(tp)
    if tp is Any:
        return
    if origin is Annotated:
        base, *extras = typing.get_args(tp)
        _check(value, base, path)
        for extra in extras:
            if isinstance(extra, OneOf) and value not in extra.values:
                _fail(path, extra, value)
        return
    if origin in (NotRequired, typing.Required):
        _check(value, typing.get_args(tp)[0], path)
        return
    if origin in (typing.Union, types.UnionType):
        for arm in typing.get_args(tp):
            try:
                _check(value, arm, path)
                return
            except EventSchemaError:
                continue
        _fail(path, tp, value)
    if origin is Literal:
        if value not in typing.get_args(tp):
            _fail(path, tp, value)
        return
    if tp is type(None):
        if value is not None:
            _fail(path, "null", value)
        return
    if tp is bool:
        if not isinstance(value, bool):
            _fail(path, tp, value)
        return
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(path, tp, value)
        return
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(path, tp, value)
        return
    if tp is str:
        if not isinstance(value, str):
            _fail(path, tp, value)
        return
    if origin is list:
        if not isinstance(value, list):
            _fail(path, tp, value)
        (item,) = typing.get_args(tp) or (Any,)
        for i, v in enumerate(value):
            _check(v, item, f"{path}[{i}]")
        return
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            _fail(path, tp, value)
        _, item = typing.get_args(tp) or (str, Any)
        for k, v in value.items():
            if not isinstance(k, str):
                _fail(f"{path}.<key>", str, k)
            _check(v, item, f"{path}.{k}")
        return
    if typing.is_typeddict(tp):
        _check_typeddict(value, tp, path)
        return
    raise EventSchemaError(f"{path}: no rule for the annotation {tp!r}")


def _check_typeddict(value, tp, path: str) -> None:
    if not isinstance(value, dict):
        _fail(path, tp, value)
    hints = typing.get_type_hints(tp, include_extras=True)
    missing = sorted(k for k in tp.__required_keys__ if k not in value)
    if missing:
        raise EventSchemaError(f"{path}: missing {', '.join(missing)}")
    if tp not in OPEN:
        extra = sorted(k for k in value if k not in hints)
        if extra:
            raise EventSchemaError(f"{path}: unexpected {', '.join(map(str, extra))}")
    for key, v in value.items():
        if key in hints:
            _check(v, hints[key], f"{path}.{key}")
