"""An in-memory realtime publisher: what would have been pushed, in order."""


class MemoryPublisher:
    """Keeps ``(event type, payload, socket room)`` for every push and access change."""

    def __init__(self):
        self.sent: list[tuple[str, dict, str]] = []

    def emit(self, event_type: str, payload: dict, room: str) -> None:
        self.sent.append((event_type, payload, room))

    def publish_access(self, message: dict, kind: str, room: str) -> None:
        self.sent.append((kind, message, room))

    def close(self) -> None:
        pass
