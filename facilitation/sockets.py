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

Rate limits. Every event a connection sends counts against ``CONVENE_RATE_LIMITS["socket_events_connection"]``
(that connection) and ``["socket_events_user"]`` (all of its user's connections); past either, the event is
answered ``throttled`` with ``retryAfter`` and nothing else is done. Controls and comments also count against
``["socket_writes_user"]``.
"""
import asyncio
import logging
from http.cookies import SimpleCookie

from channels.db import database_sync_to_async as db
from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist

from facilitation.actions import lifecycle
from rooms import ratelimit
from rooms.events import Command, EventType, build
from rooms.realtime import access_channel, session_digest, user_room

log = logging.getLogger("convene.sockets")

REPLAY_PAGE = 500


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


def client_address(environ: dict) -> str:
    """The address a connection comes from, as the REST API sees it (``rooms.ratelimit.client_ip``). The ASGI
    environ's ``REMOTE_ADDR`` is always 127.0.0.1: the peer is in the ASGI scope."""
    client = (environ.get("asgi.scope") or {}).get("client")
    peer = str(client[0]) if client else environ.get("REMOTE_ADDR") or "unknown"
    return ratelimit.client_ip({"REMOTE_ADDR": peer, "HTTP_X_FORWARDED_FOR": environ.get("HTTP_X_FORWARDED_FOR", "")})


def authenticate(environ: dict, auth) -> tuple[object | None, dict]:
    """The user a connection speaks for and the credential it used: a token in ``auth`` first, else the session cookie.

    Bad tokens count against the address as on the REST API (``CONVENE_RATE_LIMITS["bad_token_ip"]``, one
    counter for both); past the limit every token from that address is refused, and the credential says
    ``{"throttled": seconds}``."""
    from rooms.tokens import token_for_key

    if isinstance(auth, dict) and auth.get("token"):
        address = client_address(environ)
        limit, window = ratelimit.rate("bad_token_ip")
        wait = ratelimit.wait_if_over("bad-token", address, limit, window)
        if wait:
            return None, {"throttled": wait}
        token = token_for_key(auth.get("token"))
        if token is None:
            ratelimit.hit("bad-token", address, window)
            return None, {}
        return token.user, {"auth": "token", "token_id": token.pk}
    session_key = _cookie(environ, settings.SESSION_COOKIE_NAME)
    user = user_from_session_key(session_key)
    return (user, {"auth": "session", "session_key": session_key}) if user else (None, {})


def _active_user(who: dict | None):
    """The connection's user if its credential still stands, checked on every event: a revoked or
    expired token, a session that ended (sign-out, password change) or a deactivated account
    authorises nothing more."""
    from django.contrib.auth import get_user_model

    from rooms.tokens import is_live

    user_id = (who or {}).get("user_id")
    if not user_id:
        return None
    if who.get("auth") == "token":
        if not is_live(who.get("token_id"), user_id):
            return None
        return get_user_model().objects.filter(pk=user_id, is_active=True).first()
    user = user_from_session_key(who.get("session_key"))
    return user if user is not None and user.pk == user_id else None


# --- reads and actions (sync; called through sync_to_async) ---------------------------

MAX_INT = 2**63 - 1  # the database's bigint
_DIGITS = frozenset("0123456789")


def _parse_int(value, lo: int) -> int | None:
    """A whole number from lo to MAX_INT: an int, or a string of ASCII digits ("²", "١", "1e3", " 1" are not)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and 0 < len(value) <= 19 and set(value) <= _DIGITS:
        value = int(value)
    if isinstance(value, int) and lo <= value <= MAX_INT:
        return value
    return None


def _parse_id(value) -> int | None:
    return _parse_int(value, 1)


def _discussion_id(data) -> int | None:
    """The ``discussionId`` of an event's payload, or None when missing or malformed."""
    return _parse_id(data.get("discussionId")) if isinstance(data, dict) else None


def _parse_seq(value) -> int | None:
    """``lastSeq``: absent means 0; anything but a whole number from 0 is None (refused)."""
    if value is None:
        return 0
    return _parse_int(value, 0)


def _refusal(error: str, code: str, **extra) -> dict:
    return {"ok": False, "error": error, "code": code, **extra}


NOT_VISIBLE = "Discussion not found, or you may not view it."
MISSING_ID = {"ok": False, "error": "discussionId is required (a whole number).", "code": "invalid"}
BAD_SEQ = {"ok": False, "error": "lastSeq must be a whole number from 0.", "code": "invalid"}
UNKNOWN_EVENT = {"ok": False, "error": "Unknown event.", "code": "unknown_event"}
ONE_PAYLOAD = {"ok": False, "error": "Send one payload object with the event.", "code": "invalid"}
FAILED = {"ok": False, "error": "The server could not handle this event.", "code": "server_error"}


def _throttled(wait: int, what: str = "events", **extra) -> dict:
    return _refusal(f"Too many {what}; wait {wait} seconds before sending more.", "throttled", retryAfter=wait, **extra)


#: (limit name, counter scope) per key an event counts against: its connection, then its user.
EVENT_LIMITS = (("socket_events_connection", "socket-events"), ("socket_events_user", "socket-events-user"))


def event_wait(sid: str, user_id: int | None) -> int:
    """Count one event of the connection ``sid`` and of its user: the seconds to wait when either is over its
    limit, else 0."""
    return max((ratelimit.hit_over(scope, key, name) for (name, scope), key in zip(EVENT_LIMITS, (sid, user_id))
                if key is not None), default=0)


def _writes_wait(user) -> int:
    """Count one control or comment of ``user``: the seconds to wait when over ``socket_writes_user``, else 0."""
    return ratelimit.hit_over("socket-writes", user.pk, "socket_writes_user")


def check_view(who, discussion_id) -> dict | None:
    """None when the user may view the discussion, else the refusal to answer with."""
    from rooms.access import can_view
    from rooms.models import Room

    user = _active_user(who)
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
    seq = room.seq  # never the client's own lastSeq, which may be anything
    if missed:
        seq = missed[-1]["seq"] if more else max(seq, missed[-1]["seq"])
    return {"ok": True, "status": room.status, "round": room.round, "maxRounds": room.max_rounds,
            "seq": seq, "missed": missed, "more": more}


def read_state_if_visible(who, discussion_id: int, last_seq: int) -> dict:
    """``read_state`` for a connection that has just entered the room, after checking its access again.

    Access withdrawn between the first check and entering was announced while the connection was
    not in the room yet, so that notice took it out of nothing; checked now, a withdrawal is either
    seen here or announced after this point, when the notice finds the connection in the room."""
    return check_view(who, discussion_id) or read_state(discussion_id, last_seq)


def run_control(who, discussion_id, verb: str) -> dict:
    from rooms.access import can_control, can_view
    from rooms.errors import ActionError
    from rooms.models import Room

    user = _active_user(who)
    room = Room.objects.filter(pk=discussion_id).first()
    if user is None or room is None or not can_view(user, room):
        return _refusal(NOT_VISIBLE, "not_found")
    if not can_control(user, room):
        return _refusal("You may view this discussion but not control it.", "forbidden", status=room.status)
    wait = _writes_wait(user)
    if wait:
        return _throttled(wait, "requests", status=room.status)
    try:
        from facilitation.controls import control_room

        room = control_room(room, verb, user)
    except ObjectDoesNotExist:  # deleted by someone else since the access check
        return _refusal(NOT_VISIBLE, "not_found")
    except ActionError as exc:
        current = Room.objects.filter(pk=discussion_id).values_list("status", flat=True).first()
        return _refusal(exc.message, exc.code, status=current)
    return {"ok": True, "status": room.status, "round": room.round, "maxRounds": room.max_rounds}


def run_comment(who, discussion_id, content) -> dict:
    """``discussion:comment``: the same rule as POST /api/discussions/{id}/comments."""
    from facilitation.actions.comments import do_post_comment
    from rooms.errors import ActionError, NotFound
    from rooms.payloads import turn_payload

    user = _active_user(who)
    if user is None:
        return _refusal(NOT_VISIBLE, "not_found")
    wait = _writes_wait(user)
    if wait:
        return _throttled(wait, "requests")
    try:
        obs = do_post_comment(discussion_id, user, content)
    except NotFound:
        return _refusal(NOT_VISIBLE, "not_found")
    except ActionError as exc:
        return _refusal(exc.message, exc.code, **({"details": exc.details} if exc.details else {}))
    return {"ok": True, "turn": turn_payload(obs, role="participant")}


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


def standing_access(user_id, discussion_id) -> str | None:
    """The user's access to the room as it stands now: ``owner`` or ``staff`` (whatever a membership says),
    their membership's access, or None when they may not view it (or it is gone)."""
    from django.contrib.auth import get_user_model

    from rooms.models import Room, RoomMember

    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    room = Room.objects.filter(pk=discussion_id).only("owner_id").first()
    if user is None or room is None:
        return None
    if room.owner_id == user.pk:
        return "owner"
    if user.is_staff:
        return "staff"
    return RoomMember.objects.filter(room=room, user=user).values_list("access", flat=True).first()


async def _apply_revocation(sio, data: dict) -> None:
    if data.get("disconnect"):
        await _disconnect(sio, data.get("userId"), data.get("tokenId"), data.get("session"))
        return
    room = socket_room(data.get("discussionId"))
    user_id = data.get("userId")
    holders = user_room(user_id) if user_id else room
    sids = [sid for sid, _ in sio.manager.get_participants("/", holders) if user_id is None or room in sio.rooms(sid)]
    if sids and user_id:
        # A member's access changed or ended: what they may see now decides. Staff (and the owner) see the room
        # whatever their membership says, so neither touches their pages; someone shared with again since still
        # sees it. Only those who may no longer view the room leave its live channel.
        standing = await db(standing_access)(user_id, data.get("discussionId"))
        if standing in ("owner", "staff") or (standing is not None and not data.get("access")):
            return
    for sid in sids:
        if data.get("access"):  # changed, not taken away: the connection stays in the room
            await sio.emit(EventType.ACCESS.value, build.access(data.get("discussionId"), data["access"]), to=sid)
            continue
        await sio.leave_room(sid, room)
        await sio.emit(EventType.REVOKED.value, build.revoked(data.get("discussionId")), to=sid)


async def _disconnect(sio, user_id, token_id, session=None) -> None:
    """Close the user's connections (only those made with ``token_id``, or with the session whose
    ``rooms.realtime.session_digest`` is ``session``)."""
    if not user_id:
        return
    for sid, _ in list(sio.manager.get_participants("/", user_room(user_id))):
        if token_id is not None or session:
            try:
                credential = await sio.get_session(sid)
            except KeyError:
                continue
            if token_id is not None and credential.get("token_id") != token_id:
                continue
            if session and (credential.get("auth") != "session"
                            or session_digest(credential.get("session_key") or "") != session):
                continue
        await sio.emit(EventType.SESSION_REVOKED.value, build.session_revoked("Your access was withdrawn; sign in again."), to=sid)
        await sio.disconnect(sid)


# --- credentials that lapse without a notice ----------------------------------------------
# A token that expires, a session that expires or is cut by a password change elsewhere: no
# notice is published, and a connection that sends nothing would keep receiving its rooms.
# Every web process checks its connections' credentials every ``SOCKET_RECHECK_SECONDS``.

_checkers: dict[int, object] = {}


def recheck_seconds() -> float:
    return float(settings.CONVENE.get("SOCKET_RECHECK_SECONDS", 30))


def _start_credential_check(sio) -> None:
    if id(sio) not in _checkers:
        _checkers[id(sio)] = sio.start_background_task(_follow_credentials, sio)


async def _follow_credentials(sio) -> None:
    while True:
        await asyncio.sleep(recheck_seconds())
        try:
            await recheck_connections(sio)
        except asyncio.CancelledError:
            raise
        except Exception:  # the database went away: check again next time
            log.warning("checking the sockets' credentials failed", exc_info=True)


def _lapsed(credentials: list[dict]) -> list[bool]:
    """For each credential, whether it no longer stands (one check per distinct credential)."""
    seen: dict[tuple, bool] = {}
    answers = []
    for who in credentials:
        key = (who.get("user_id"), who.get("auth"), who.get("token_id"), who.get("session_key"))
        if key not in seen:
            seen[key] = _active_user(who) is None
        answers.append(seen[key])
    return answers


async def recheck_connections(sio) -> int:
    """Disconnect this process's connections whose credential lapsed; returns how many."""
    connections = []
    for sid, _ in list(sio.manager.get_participants("/", None)):
        if not sio.manager.is_connected(sid, "/"):
            continue
        try:
            connections.append((sid, dict(await sio.get_session(sid))))
        except KeyError:
            continue
    if not connections:
        return 0
    lapsed = await db(_lapsed)([who for _, who in connections])
    closed = 0
    for (sid, _), gone in zip(connections, lapsed):
        if gone:
            await sio.emit(EventType.SESSION_REVOKED.value, build.session_revoked("Your sign-in has ended; sign in again."), to=sid)
            await sio.disconnect(sid)
            closed += 1
    return closed


# --- registration --------------------------------------------------------------------

def register(sio) -> None:
    """Attach the handlers to the server (default namespace)."""
    import socketio

    @sio.event
    async def connect(sid, environ, auth=None, *extra):
        if sio.manager.is_connected(sid, "/"):
            # An event a client named "connect" on its open connection (python-socketio hands it to this
            # handler with the client's own data as ``environ``): the handshake happens once, never again.
            return await over_limit(sio, sid) or UNKNOWN_EVENT
        user, credential = await db(authenticate)(environ, auth)
        if credential.get("throttled"):
            raise socketio.exceptions.ConnectionRefusedError("throttled", {
                "code": "throttled", "message": "Too many invalid tokens from your address; try again later.",
                "retryAfter": credential["throttled"]})
        if user is None:
            raise socketio.exceptions.ConnectionRefusedError("unauthenticated", {"code": "unauthenticated", "message": "Sign in or pass a valid token."})
        await sio.save_session(sid, {"user_id": user.pk, "username": user.get_username(), **credential})
        await sio.enter_room(sid, user_room(user.pk))
        _start_access_listener(sio)
        _start_credential_check(sio)

    @sio.event
    async def disconnect(sid, reason=None, *extra):
        # A connection that is really going is no longer connected here; one that is, sent an event
        # named "disconnect", which ends nothing and gets the answer of any unknown event.
        if sio.manager.is_connected(sid, "/"):
            return await over_limit(sio, sid) or UNKNOWN_EVENT
        return None

    async def _credential(sid):
        """The connection's credential (checked again by every handler through ``_active_user``)."""
        try:
            return dict(await sio.get_session(sid))
        except KeyError:
            return None

    @sio.on(Command.JOIN.value)
    async def join(sid, data=None):
        discussion_id = _discussion_id(data)
        if discussion_id is None:
            return MISSING_ID
        credential = await _credential(sid)
        refusal = await db(check_view)(credential, discussion_id)
        if refusal:
            return refusal
        last_seq = _parse_seq(data.get("lastSeq"))
        if last_seq is None:
            return BAD_SEQ
        # Enter first, then read: an event committed meanwhile is replayed, pushed, or both.
        await sio.enter_room(sid, socket_room(discussion_id))
        state = await db(read_state_if_visible)(credential, discussion_id, last_seq)
        if not state["ok"]:
            await sio.leave_room(sid, socket_room(discussion_id))
        return state

    @sio.on(Command.LEAVE.value)
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
            return await db(run_control)(await _credential(sid), discussion_id, verb)

        handler.__name__ = f"discussion_{verb}"
        return handler

    for transition in lifecycle.TRANSITIONS.values():
        if transition.command is not None:
            sio.on(transition.command.value, _control(transition.verb))

    @sio.on("discussion:comment")
    async def comment(sid, data=None):
        discussion_id = _discussion_id(data)
        if discussion_id is None:
            return MISSING_ID
        return await db(run_comment)(await _credential(sid), discussion_id, data.get("content"))

    @sio.on("*")
    async def unknown_event(event, sid, *data):
        return await over_limit(sio, sid) or UNKNOWN_EVENT

    _answer_always(sio)


async def over_limit(sio, sid) -> dict | None:
    """Count an event of the connection ``sid``: the ``throttled`` answer when it or its user sent too many, else
    None."""
    try:
        user_id = (await sio.get_session(sid)).get("user_id")
    except KeyError:  # not connected (any more)
        user_id = None
    wait = await asyncio.to_thread(event_wait, sid, user_id)  # the counters may be in Redis: off the event loop
    return _throttled(wait) if wait else None


def _answer_always(sio) -> None:
    """Every event gets an acknowledgement: one over the rate limits answers ``throttled``, one sent with more
    than one payload ``invalid``, a handler that fails ``server_error``."""
    import functools

    namespace = sio.handlers.get("/", {})
    for name, handler in list(namespace.items()):
        if name in ("connect", "disconnect", "*"):
            continue

        @functools.wraps(handler)
        async def guarded(*args, _handler=handler, _name=name):
            refusal = await over_limit(sio, args[0])
            if refusal:
                return refusal
            if len(args) > 2:  # (sid, payload) and more: a client's mistake, not the server's
                return ONE_PAYLOAD
            try:
                return await _handler(*args)
            except Exception:
                log.exception("socket event %s failed", _name)
                return FAILED

        namespace[name] = guarded
