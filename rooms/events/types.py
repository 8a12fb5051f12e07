"""The names of everything that travels over Socket.IO, in one place.

``EventType`` names what the server pushes, ``Command`` what a client sends. The values
are the public contract's names; the frontend reads them from the page (see
``frontend/context_processors.py``), the socket handlers register under them and the
actions record them. A new event needs a member here, a payload shape in
``schemas.py`` and a builder in ``build.py``.
"""
from enum import StrEnum


class EventType(StrEnum):
    """Server -> client. Logged events are stored with the room's next ``seq`` and replayed on join."""

    TURN = "discussion:turn"
    # A person's turn changed after it was recorded: its chat message was edited, deleted or restored.
    TURN_UPDATED = "discussion:turn_updated"
    MODERATOR = "discussion:moderator"
    CONCLUDED = "discussion:concluded"
    STATUS = "discussion:status"
    PHASE = "discussion:phase"
    OBSERVATION = "discussion:observation"
    ROUND = "discussion:round"
    NARRATIVE = "discussion:narrative"
    TASK = "discussion:task"
    ARTIFACT = "discussion:artifact"
    # Chat bridges: a message to a chat or a person queued, sent or undeliverable; a chat linked or unlinked.
    DELIVERY = "discussion:delivery"
    LINK = "discussion:link"
    # Workspace rooms: a seat's persona or role swapped; an adaptation learned or tuned.
    PARTICIPANT = "discussion:participant"
    ADAPTATION = "discussion:adaptation"
    # Sent to particular connections only, never stored: access to a room (or the session) ended.
    REVOKED = "discussion:revoked"
    SESSION_REVOKED = "session:revoked"
    # Sent to a member's connections only, never stored: the owner changed their access (the page redraws).
    ACCESS = "discussion:access"

    @property
    def logged(self) -> bool:
        return self not in DIRECT


DIRECT = frozenset({EventType.REVOKED, EventType.SESSION_REVOKED, EventType.ACCESS})
LOGGED = tuple(t for t in EventType if t not in DIRECT)


class Command(StrEnum):
    """Client -> server; each is answered through an acknowledgement ``{ok, error?, ...}``."""

    JOIN = "discussion:join"
    LEAVE = "discussion:leave"
    PAUSE = "discussion:pause"
    RESUME = "discussion:resume"
    STOP = "discussion:stop"
    CONCLUDE = "discussion:conclude"
    COMMENT = "discussion:comment"


def as_event_type(value) -> EventType:
    """An ``EventType`` from itself or its string value (``ValueError`` for anything else)."""
    return value if isinstance(value, EventType) else EventType(value)


def client_names() -> dict:
    """What the browser needs: ``{"events": {"TURN": "discussion:turn", ...}, "logged": [...], "commands": {...}}``."""
    return {
        "events": {t.name: t.value for t in EventType},
        "logged": [t.value for t in LOGGED],
        "commands": {c.name: c.value for c in Command},
    }
