"""Every event the tests see is checked against its schema (``rooms.events.schemas``).

``checked_push`` wraps the realtime push of this process; ``check_received`` is called by the
socket clients of tests/realtime on what arrives over the wire. A payload that does not match
fails the test where it is pushed, and again at teardown (in case a caller swallowed it).
"""
from rooms.events.schemas import EventSchemaError, validate, validate_message

failures: list[str] = []


def check(event_type, payload) -> None:
    try:
        validate(event_type, payload)
    except EventSchemaError as exc:
        failures.append(f"{event_type}: {exc}")
        raise


def checked_push(push):
    def push_checked(event_type, payload, room_id):
        check(event_type, payload)
        return push(event_type, payload, room_id)

    return push_checked


def check_replayed(messages) -> None:
    """The ``missed`` list of a join answer: stored events as ``{type, **payload}``."""
    for message in messages:
        try:
            validate_message(message)
        except EventSchemaError as exc:
            failures.append(str(exc))
            raise


def take_failures() -> list[str]:
    found = list(failures)
    failures.clear()
    return found
