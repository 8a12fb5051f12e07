"""Socket.IO event handlers (discussion:join, leave and the controls)."""


def register(sio) -> None:
    """Attach the handlers to the server."""
