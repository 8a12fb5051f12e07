"""The push side of realtime: hands committed events to Socket.IO.

Any process (web, worker, management command) emits through a write-only
``socketio.RedisManager`` on the channel the web server's ``AsyncRedisManager``
listens to. Events are stored in ``RoomEvent`` before they are pushed, so a
failed push loses nothing: clients get the event on their next join.
"""
import logging
import threading

from django.conf import settings

log = logging.getLogger("convene.realtime")

_lock = threading.Lock()
_manager = None
# The "memory" backend collects what would have been pushed (used by tests).
sent: list[tuple[str, dict, str]] = []


def room_name(room_id: int) -> str:
    return f"discussion:{room_id}"


def _redis_manager():
    global _manager
    with _lock:
        if _manager is None:
            import socketio

            _manager = socketio.RedisManager(settings.REDIS_URL, channel=settings.SOCKETIO_CHANNEL, write_only=True)
        return _manager


def reset():
    """Forget the cached manager (after the Redis URL changed, e.g. in tests)."""
    global _manager
    with _lock:
        _manager = None
    sent.clear()


def push(event_type: str, payload: dict, room_id: int) -> None:
    backend = settings.REALTIME_BACKEND
    if backend == "memory":
        sent.append((event_type, payload, room_name(room_id)))
        return
    if backend != "redis":
        return
    try:
        _redis_manager().emit(event_type, payload, room=room_name(room_id))
    except Exception:  # the event is stored; a reconnecting client replays it
        log.warning("could not push %s for room %s", event_type, room_id, exc_info=True)
