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


# --- access changes ------------------------------------------------------------------
# Socket rooms know nothing of permissions: when someone loses access to a room, every
# web process must take that person's connections out of it. Revocations travel on a
# channel of their own; ``facilitation.sockets`` listens to it.
ACCESS_CHANNEL_SUFFIX = "-access"


def access_channel() -> str:
    return settings.SOCKETIO_CHANNEL + ACCESS_CHANNEL_SUFFIX


def user_room(user_id: int) -> str:
    return f"user:{user_id}"


def revoke(room_id: int, user_id: int | None = None) -> None:
    """Take a user's live connections (or everybody's, for a deleted room) out of the room."""
    if settings.REALTIME_BACKEND == "memory":
        sent.append(("access:revoke", {"discussionId": room_id, "userId": user_id}, room_name(room_id)))
        return
    if settings.REALTIME_BACKEND != "redis":
        return
    import json

    import redis

    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        client.publish(access_channel(), json.dumps({"discussionId": room_id, "userId": user_id}))
    except Exception:
        log.warning("could not publish the revocation for room %s", room_id, exc_info=True)
