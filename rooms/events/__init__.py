"""Room events: their names (``types``), their typed payloads (``schemas``), the builders of
their data (``build``) and the log that stores and pushes them (``log``).

Record one from an action, inside its transaction::

    from rooms.events import EventType, build, record_event
    record_event(room, EventType.STATUS, build.status(room))
"""
from rooms.events import build
from rooms.events.log import event_message, events_after, next_seq, record_event, written_together
from rooms.events.types import Command, EventType

__all__ = ["Command", "EventType", "build", "event_message", "events_after", "next_seq", "record_event",
           "written_together"]
