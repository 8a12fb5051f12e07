"""Socket.IO event handlers: authentication, ``discussion:join``/``leave`` and the controls.

Handlers are thin: parse, authorize with ``rooms.access`` (the rule the REST API uses),
call an action, answer through the acknowledgement. Names follow the public contract.

Exactly-once replay. A client sends the last ``seq`` it applied. The handler first
enters the socket room ``discussion:{id}`` and only then reads the stored events after
that seq, so an event committed while the client joins is either in ``missed``, or
pushed live after entering, or both; never neither. The client drops anything whose
seq it has already applied, which removes the "both" case. ``seq`` in the answer is
the room's sequence read *before* the events, so every event up to it is in
``missed`` (a client may advance its last seq to it even across numbering gaps).
"""
import logging
from http.cookies import SimpleCookie

from channels.db import database_sync_to_async as db
from django.conf import settings

from rooms.realtime import access_channel, user_room

log = logging.getLogger("convene.sockets")

REPLAY_PAGE = 500
CONTROLS = ("pause", "resume", "stop", "conclude")


def socket_room(discussion_id: int) -> str:
    return f"discussion:{discussion_id}"


# --- authentication ----------------------------------------------------------------

def _cookie(environ: dict, name: str) -> str | None:
    raw = environ.get("HTTP_COOKIE") or ""
    if not raw:
        return None
    jar = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header authenticates nobody
        return None
    morsel = jar.get(name)
    return morsel.value if morsel else None


class _SessionRequest:
    """Just enough of a request for ``django.contrib.auth.get_user``."""

    def __init__(self, session):
        self.session = session


def user_from_session_key(session_key: str | None):
    if not session_key:
        return None
    from importlib import import_module

    from django.contrib.auth import get_user

    engine = import_module(settings.SESSION_ENGINE)
    user = get_user(_SessionRequest(engine.SessionStore(session_key)))
    return user if user.is_authenticated and user.is_active else None


def user_from_token(key) -> object | None:
    if not isinstance(key, str) or not key:
        return None
    from rest_framework.authtoken.models import Token

    token = Token.objects.select_related("user").filter(key=key).first()
    if token is None or not token.user.is_active:
        return None
    return token.user


def authenticate(environ: dict, auth) -> tuple[object | None, str]:
    """The user a connection speaks for: a token in ``auth`` first, else the session cookie."""
    if isinstance(auth, dict) and auth.get("token"):
        return user_from_token(auth.get("token")), "token"
    return user_from_session_key(_cookie(environ, settings.SESSION_COOKIE_NAME)), "session"


def _active_user(user_id):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(pk=user_id, is_active=True).first() if user_id else None


# --- reads and actions (sync; called through sync_to_async) ---------------------------

def _parse_id(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.isdigit():
        return int(value) or None
    return None


def _discussion_id(data) -> int | None:
    """The ``discussionId`` of an event's payload, or None when missing or malformed."""
    return _parse_id(data.get("discussionId")) if isinstance(data, dict) else None


def _parse_seq(value) -> int:
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return 0


def _refusal(error: str, code: str, **extra) -> dict:
    return {"ok": False, "error": error, "code": code, **extra}


NOT_VISIBLE = "Discussion not found, or you may not view it."
MISSING_ID = {"ok": False, "error": "discussionId is required.", "code": "invalid"}


def check_view(user_id, discussion_id) -> dict | None:
    """None when the user may view the discussion, else the refusal to answer with."""
    from rooms.access import can_view
    from rooms.models import Room

    user = _active_user(user_id)
    room = Room.objects.filter(pk=discussion_id).first()
    if user is None or room is None or not can_view(user, room):
        return _refusal(NOT_VISIBLE, "not_found")
    return None


def read_state(discussion_id: int, last_seq: int) -> dict:
    """The room's status and the events after ``last_seq``; the room's seq is read first."""
    from rooms.events import events_after
    from rooms.models import Room

    room = Room.objects.filter(pk=discussion_id).only("status", "round", "max_rounds", "seq").first()
    if room is None:
        return _refusal(NOT_VISIBLE, "not_found")
    missed = events_after(discussion_id, last_seq, limit=REPLAY_PAGE)
    more = len(missed) >= REPLAY_PAGE
    seq = room.seq
    if missed:
        seq = missed[-1]["seq"] if more else max(seq, missed[-1]["seq"])
    elif last_seq > seq:
        seq = last_seq
    return {"ok": True, "status": room.status, "round": room.round, "maxRounds": room.max_rounds,
            "seq": seq, "missed": missed, "more": more}


def run_control(user_id, discussion_id, verb: str) -> dict:
    from facilitation.actions import lifecycle
    from rooms.access import can_control, can_view
    from rooms.errors import ActionError
    from rooms.models import Room

    user = _active_user(user_id)
    room = Room.objects.filter(pk=discussion_id).first()
    if user is None or room is None or not can_view(user, room):
        return _refusal(NOT_VISIBLE, "not_found")
    if not can_control(user, room):
        return _refusal("You may view this discussion but not control it.", "forbidden", status=room.status)
    action = getattr(lifecycle, f"do_{verb}_discussion")
    try:
        room = action(room)
    except ActionError as exc:
        current = Room.objects.filter(pk=discussion_id).values_list("status", flat=True).first()
        return _refusal(exc.message, exc.code, status=current)
    return {"ok": True, "status": room.status, "round": room.round, "maxRounds": room.max_rounds}


# --- revocations ------------------------------------------------------------------------

# The listener task per server. Holding it here matters: the event loop keeps only a weak
# reference to a task, and a collected listener would silently stop the revocations.
_listeners: dict[int, object] = {}


def _start_access_listener(sio) -> None:
    """Once per server: follow revocations and take the connections concerned out of the room."""
    if id(sio) in _listeners or settings.REALTIME_BACKEND != "redis":
        return
    _listeners[id(sio)] = sio.start_background_task(_follow_revocations, sio)


async def _follow_revocations(sio) -> None:
    import asyncio
    import json

    import redis.asyncio as aioredis

    while True:
        try:
            client = aioredis.Redis.from_url(settings.REDIS_URL)
            async with client.pubsub() as pubsub:
                await pubsub.subscribe(access_channel())
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        await _apply_revocation(sio, json.loads(message["data"]))
        except asyncio.CancelledError:
            raise
        except Exception:  # Redis went away: follow again once it is back
            log.warning("revocation listener lost Redis; retrying", exc_info=True)
            await asyncio.sleep(1.0)


async def _apply_revocation(sio, data: dict) -> None:
    room = socket_room(data.get("discussionId"))
    user_id = data.get("userId")
    holders = user_room(user_id) if user_id else room
    sids = [sid for sid, _ in sio.manager.get_participants("/", holders)]
    for sid in sids:
        if user_id is None or room in sio.rooms(sid):
            await sio.leave_room(sid, room)
            await sio.emit("discussion:revoked", {"discussionId": data.get("discussionId")}, to=sid)


# --- registration --------------------------------------------------------------------

def register(sio) -> None:
    """Attach the handlers to the server (default namespace)."""
    import socketio

    @sio.event
    async def connect(sid, environ, auth=None):
        user, how = await db(authenticate)(environ, auth)
        if user is None:
            raise socketio.exceptions.ConnectionRefusedError("unauthenticated", {"code": "unauthenticated", "message": "Sign in or pass a valid token."})
        await sio.save_session(sid, {"user_id": user.pk, "username": user.get_username(), "auth": how})
        await sio.enter_room(sid, user_room(user.pk))
        _start_access_listener(sio)

    async def _user_id(sid):
        try:
            session = await sio.get_session(sid)
        except KeyError:
            return None
        return session.get("user_id")

    @sio.on("discussion:join")
    async def join(sid, data=None):
        discussion_id = _discussion_id(data)
        if discussion_id is None:
            return MISSING_ID
        refusal = await db(check_view)(await _user_id(sid), discussion_id)
        if refusal:
            return refusal
        # Enter first, then read: an event committed meanwhile is replayed, pushed, or both.
        await sio.enter_room(sid, socket_room(discussion_id))
        state = await db(read_state)(discussion_id, _parse_seq(data.get("lastSeq")))
        if not state["ok"]:
            await sio.leave_room(sid, socket_room(discussion_id))
        return state

    @sio.on("discussion:leave")
    async def leave(sid, data=None):
        discussion_id = _discussion_id(data)
        if discussion_id is None:
            return MISSING_ID
        await sio.leave_room(sid, socket_room(discussion_id))
        return {"ok": True}

    def _control(verb: str):
        async def handler(sid, data=None):
            discussion_id = _discussion_id(data)
            if discussion_id is None:
                return MISSING_ID
            return await db(run_control)(await _user_id(sid), discussion_id, verb)

        handler.__name__ = f"discussion_{verb}"
        return handler

    for verb in CONTROLS:
        sio.on(f"discussion:{verb}", _control(verb))
