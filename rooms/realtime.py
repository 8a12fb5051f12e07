"""The push side of realtime: hands committed events to Socket.IO.

Any process (web, worker, management command) pushes through a **publisher**: by default
``RedisPublisher``, a write-only ``socketio.RedisManager`` on the channel the web server's
``AsyncRedisManager`` listens to, plus one Redis client for access changes. Events are stored
in ``RoomEvent`` before they are pushed, so a failed push loses nothing: clients get the event on
their next join.

Which publisher: the one given to ``use()`` (a command that knows better, e.g. no Redis to reach),
else the one for ``settings.REALTIME_BACKEND`` (``redis``, ``off``, or a backend registered with
``install()``: the tests install an in-memory one from ``tests/fakes``).
"""
import json
import logging
import threading
from typing import Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

log = logging.getLogger("convene.realtime")


class Publisher(Protocol):
    def emit(self, event_type: str, payload: dict, room: str) -> None:
        """Push an event to every connection in the socket room ``room``."""

    def publish_access(self, message: dict, kind: str, room: str) -> None:
        """Tell every web process about an access change (``kind``: access:revoke, access:change, access:disconnect)."""

    def close(self) -> None:
        """Let go of connections (the URL changed, the process ends)."""


class NullPublisher:
    """Pushes nothing: the events are stored and replayed when a client joins."""

    def emit(self, event_type: str, payload: dict, room: str) -> None:
        pass

    def publish_access(self, message: dict, kind: str, room: str) -> None:
        pass

    def close(self) -> None:
        pass


class RedisPublisher:
    """One write-only Socket.IO manager and one Redis client, built on first use and reused."""

    def __init__(self, url: str | None = None, channel: str | None = None):
        self.url = url or settings.REDIS_URL
        self.channel = channel or settings.SOCKETIO_CHANNEL
        self._lock = threading.Lock()
        self._manager = None
        self._client = None

    def _socketio(self):
        with self._lock:
            if self._manager is None:
                import socketio

                self._manager = socketio.RedisManager(self.url, channel=self.channel, write_only=True)
            return self._manager

    def _redis(self):
        with self._lock:
            if self._client is None:
                import redis

                self._client = redis.Redis.from_url(self.url, socket_timeout=2, socket_connect_timeout=2)
            return self._client

    def emit(self, event_type: str, payload: dict, room: str) -> None:
        self._socketio().emit(event_type, payload, room=room)

    def publish_access(self, message: dict, kind: str, room: str) -> None:
        self._redis().publish(self.channel + ACCESS_CHANNEL_SUFFIX, json.dumps(message))

    def close(self) -> None:
        with self._lock:
            client, self._client, self._manager = self._client, None, None
        if client is not None:
            client.close()


BACKENDS = {"redis": RedisPublisher, "off": NullPublisher}

_lock = threading.Lock()
_chosen: Publisher | None = None
_installed: dict[str, Publisher] = {}
_built: dict[str, Publisher] = {}


def use(publisher: Publisher | None) -> None:
    """Push through ``publisher`` in this process (None: back to ``settings.REALTIME_BACKEND``)."""
    global _chosen
    _chosen = publisher


def install(backend: str, publisher: Publisher) -> None:
    """Make ``publisher`` the one for ``settings.REALTIME_BACKEND == backend``."""
    with _lock:
        _installed[backend] = publisher


def publisher() -> Publisher:
    if _chosen is not None:
        return _chosen
    backend = settings.REALTIME_BACKEND
    with _lock:
        found = _installed.get(backend) or _built.get(backend)
        if found is None:
            if backend not in BACKENDS:
                raise ImproperlyConfigured(f"Unknown REALTIME_BACKEND {backend!r}; choose one of {', '.join(BACKENDS)}.")
            found = _built[backend] = BACKENDS[backend]()
        return found


def reset(*, installed: bool = False) -> None:
    """Close and forget the publishers built from settings (after the Redis URL changed); with
    ``installed``, also those given to ``install`` and ``use``."""
    global _chosen
    with _lock:
        built = list(_built.values())
        _built.clear()
        if installed:
            _installed.clear()
            _chosen = None
    for one in built:
        one.close()


def room_name(room_id: int) -> str:
    return f"discussion:{room_id}"


def push(event_type: str, payload: dict, room_id: int) -> None:
    try:
        publisher().emit(event_type, payload, room_name(room_id))
    except ImproperlyConfigured:
        raise
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


def _publish_access(message: dict, kind: str, room: str) -> None:
    try:
        publisher().publish_access(message, kind, room)
    except ImproperlyConfigured:
        raise
    except Exception:
        log.warning("could not publish the access change %s", message, exc_info=True)


def revoke(room_id: int, user_id: int | None = None) -> None:
    """Take a user's live connections (or everybody's, for a deleted room) out of the room."""
    _publish_access({"discussionId": room_id, "userId": user_id}, "access:revoke", room_name(room_id))


def access_changed(room_id: int, user_id: int, access: str) -> None:
    """Tell a member's live connections in the room that their access changed (the page shows what it now allows)."""
    _publish_access({"discussionId": room_id, "userId": user_id, "access": access}, "access:change", room_name(room_id))


def session_digest(session_key: str) -> str:
    """How an access change names a session: never its key, which would sign in whoever read the channel."""
    import hashlib

    return hashlib.sha256(session_key.encode("utf-8")).hexdigest()


def disconnect(user_id: int, token_id: int | None = None, session_key: str | None = None) -> None:
    """Close a user's live connections: those made with one token, or with one session, or all of them."""
    message = {"disconnect": True, "userId": user_id, "tokenId": token_id}
    if session_key:
        message["session"] = session_digest(session_key)
    _publish_access(message, "access:disconnect", user_room(user_id))
