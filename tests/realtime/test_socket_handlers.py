"""The socket handlers driven in process (no live stack): races and events a browser never sends."""
import asyncio

import pytest
import socketio

from facilitation.sockets import _apply_revocation, register, socket_room
from rooms.models import ApiToken, Room, RoomEvent, RoomMember
from rooms.realtime import user_room
from tests.factories import make_discussion, make_token, make_user
from tests.realtime.conftest import run_async

pytestmark = pytest.mark.django_db(transaction=True)


def server_with_connection(user):
    """A Socket.IO server with our handlers and one connection of ``user``, authenticated by a live token."""
    make_token(user)
    token = ApiToken.objects.filter(user=user).latest("pk")
    sio = socketio.AsyncServer(async_mode="asgi")
    register(sio)
    credential = {"user_id": user.pk, "username": user.get_username(), "auth": "token", "token_id": token.pk}

    async def get_session(sid, namespace=None):
        return dict(credential)

    sio.get_session = get_session
    return sio


async def connect(sio, user) -> str:
    sid = await sio.manager.connect("eio-1", "/")
    await sio.enter_room(sid, user_room(user.pk))
    return sid


def test_access_withdrawn_while_joining_leaves_the_connection_outside_the_room():
    """The owner removes a member just as the member's page joins: the removal's notice finds the connection not yet
    in the room, so the join itself must notice, or the former member would receive the room's events from then on."""
    from rooms.actions.rooms import do_unshare_room

    owner, member = make_user("owner"), make_user("member")
    room = make_discussion(owner)
    RoomMember.objects.create(room=room, user=member, access="viewer")
    sio = server_with_connection(member)
    enter_room = sio.enter_room

    async def enter_after_the_removal(sid, name, namespace=None):
        if name == socket_room(room.pk):  # the access check passed; the owner removes the member now
            await asyncio.to_thread(do_unshare_room, room, username="member")
            await _apply_revocation(sio, {"discussionId": room.pk, "userId": member.pk})  # the notice, arriving now
        await enter_room(sid, name, namespace)

    sio.enter_room = enter_after_the_removal

    async def scenario():
        sid = await connect(sio, member)
        answer = await sio.handlers["/"]["discussion:join"](sid, {"discussionId": room.pk})
        return answer, sio.rooms(sid)

    answer, rooms = run_async(scenario())
    assert answer["ok"] is False and answer["code"] == "not_found" and "missed" not in answer
    assert socket_room(room.pk) not in rooms, "a former member's connection stayed in the room"
    assert not RoomMember.objects.filter(room=room, user=member).exists()
    assert Room.objects.filter(pk=room.pk).exists() and RoomEvent.objects.filter(room=room).count() == 1


def test_an_event_with_several_payloads_is_invalid_and_changes_nothing(caplog):
    """A client that sends an event with more than one argument made a mistake the server can name: ``invalid``, not
    ``server_error`` with a failure in the server's log."""
    owner = make_user("owner")
    room = make_discussion(owner)
    sio = server_with_connection(owner)
    handlers = sio.handlers["/"]

    async def scenario():
        sid = await connect(sio, owner)
        answers = {event: await handlers[event](sid, {"discussionId": room.pk}, {"discussionId": room.pk})
                   for event in ("discussion:join", "discussion:leave", "discussion:start", "discussion:stop",
                                 "discussion:comment") if event in handlers}
        answers["unknown"] = await handlers["*"]("discussion:explode", sid, 1, 2, 3)
        return answers, sio.rooms(sid)

    answers, rooms = run_async(scenario())
    assert set(answers) == {"discussion:join", "discussion:leave", "discussion:stop", "discussion:comment", "unknown"}
    for event, answer in answers.items():
        if event == "unknown":
            assert answer["code"] == "unknown_event"
        else:
            assert answer["ok"] is False and answer["code"] == "invalid", event
    assert socket_room(room.pk) not in rooms
    assert Room.objects.get(pk=room.pk).status == "draft" and RoomEvent.objects.filter(room=room).count() == 1
    assert not [r for r in caplog.records if r.name == "convene.sockets" and r.levelname == "ERROR"]


def _environ(address: str) -> dict:
    """What python-engineio's ASGI driver gives a handshake: REMOTE_ADDR is always loopback, the peer is in the scope."""
    return {"REMOTE_ADDR": "127.0.0.1", "asgi.scope": {"type": "websocket", "client": (address, 50000)}}


def test_bad_tokens_on_the_socket_count_against_the_address_as_on_the_rest_api(client, settings):
    from django.core.cache import cache

    from facilitation.sockets import authenticate

    cache.clear()
    settings.CONVENE_RATE_LIMITS = {**settings.CONVENE_RATE_LIMITS, "bad_token_ip": (2, 60)}
    owner = make_user("owner")
    sio = server_with_connection(owner)
    key = make_token(owner)
    guesser, neighbour = "203.0.113.7", "198.51.100.2"
    assert authenticate(_environ(guesser), {"token": key})[0] == owner
    assert [authenticate(_environ(guesser), {"token": f"cvn_guess{i}"}) for i in range(2)] == [(None, {})] * 2
    # Past the limit even a valid key waits, from that address only; and the REST API counts the same guesses.
    user, credential = authenticate(_environ(guesser), {"token": key})
    assert user is None and credential["throttled"] > 0
    assert authenticate(_environ(neighbour), {"token": key})[0] == owner
    assert client.get("/api/discussions", HTTP_AUTHORIZATION=f"Token {key}", REMOTE_ADDR=guesser).status_code == 429

    async def handshake():
        sid = await sio.manager.pre_connect("eio-2", "/")
        with pytest.raises(socketio.exceptions.ConnectionRefusedError) as refused:
            await sio.handlers["/"]["connect"](sid, _environ(guesser), {"token": key})
        return refused.value.error_args

    refusal = run_async(handshake())
    assert refusal["message"] == "throttled" and refusal["data"]["code"] == "throttled" and refusal["data"]["retryAfter"] > 0
    cache.clear()


def test_connections_whose_credential_lapsed_without_a_notice_are_closed_by_the_periodic_check():
    """A token that expired and a session cut by a password change elsewhere publish no notice: the check every web
    process runs closes those connections (a connection that sends nothing would otherwise keep its rooms' events);
    a live token's and a live session's stay."""
    from datetime import timedelta

    from django.conf import settings
    from django.test import Client
    from django.utils import timezone

    from facilitation.sockets import recheck_connections

    owner, other = make_user("owner"), make_user("other")
    expiring, live = make_token(owner, name="expiring"), make_token(owner, name="live")
    tokens = {t.name: t for t in ApiToken.objects.filter(user=owner)}
    browsers = {}
    for user in (owner, other):
        browser = Client()
        browser.force_login(user)
        browsers[user.username] = browser.cookies[settings.SESSION_COOKIE_NAME].value
    credentials = {
        "expired token": {"user_id": owner.pk, "auth": "token", "token_id": tokens["expiring"].pk},
        "live token": {"user_id": owner.pk, "auth": "token", "token_id": tokens["live"].pk},
        "session cut by a password change": {"user_id": other.pk, "auth": "session", "session_key": browsers["other"]},
        "live session": {"user_id": owner.pk, "auth": "session", "session_key": browsers["owner"]},
    }
    assert expiring and live
    sio = socketio.AsyncServer(async_mode="asgi")
    register(sio)
    by_sid = {}

    async def get_session(sid, namespace=None):
        return dict(by_sid[sid])

    sio.get_session = get_session

    async def scenario():
        for n, (what, credential) in enumerate(credentials.items()):
            sid = await sio.manager.connect(f"eio-{n}", "/")
            by_sid[sid] = credential
            credentials[what] = sid
        assert await recheck_connections(sio) == 0  # every credential stands
        await asyncio.to_thread(ApiToken.objects.filter(pk=tokens["expiring"].pk).update,
                                expires_at=timezone.now() - timedelta(seconds=1))
        other.set_password("a-new-password-123")
        await asyncio.to_thread(other.save)
        closed = await recheck_connections(sio)
        return closed, {what: sio.manager.is_connected(sid, "/") for what, sid in credentials.items()}

    closed, connected = run_async(scenario())
    assert closed == 2
    assert connected == {"expired token": False, "live token": True, "session cut by a password change": False,
                         "live session": True}


def test_removing_a_member_takes_out_of_the_room_only_those_who_may_no_longer_view_it():
    """Staff may view every room: removing a membership they also had, or changing its access, changes nothing of
    what they see, so their pages stay in the room's live channel and are told nothing. A member who is not staff
    leaves it and is told; one shared with again before the notice arrives still sees the room and stays."""
    from rooms.actions.rooms import do_share_room, do_unshare_room
    from rooms.events import EventType

    owner = make_user("owner")
    staff, member, back = make_user("staff", is_staff=True), make_user("member"), make_user("back")
    room = make_discussion(owner)
    for user in (staff, member, back):
        RoomMember.objects.create(room=room, user=user, access="viewer")
    sio = socketio.AsyncServer(async_mode="asgi")
    register(sio)
    by_sid, told = {}, []

    async def get_session(sid, namespace=None):
        return dict(by_sid[sid])

    async def emit(event, data=None, to=None, **kwargs):
        told.append((to, event))

    sio.get_session, sio.emit = get_session, emit

    async def scenario():
        sids = {}
        for n, user in enumerate((staff, member, back)):
            sid = await sio.manager.connect(f"eio-{n}", "/")
            await sio.enter_room(sid, user_room(user.pk))
            by_sid[sid] = {"user_id": user.pk, "auth": "token", "token_id": token_ids[user.pk]}
            assert (await sio.handlers["/"]["discussion:join"](sid, {"discussionId": room.pk}))["ok"] is True
            sids[user.username] = sid
        await asyncio.to_thread(do_share_room, room, username="staff", access="participant")
        await _apply_revocation(sio, {"discussionId": room.pk, "userId": staff.pk, "access": "participant"})
        for username in ("staff", "member", "back"):
            await asyncio.to_thread(do_unshare_room, room, username=username)
        await asyncio.to_thread(do_share_room, room, username="back", access="viewer")  # before its notice arrives
        for user in (staff, member, back):
            await _apply_revocation(sio, {"discussionId": room.pk, "userId": user.pk})
        return {name: socket_room(room.pk) in sio.rooms(sid) for name, sid in sids.items()}, sids

    for user in (staff, member, back):
        make_token(user)
    token_ids = {user.pk: ApiToken.objects.get(user=user).pk for user in (staff, member, back)}
    in_room, sids = run_async(scenario())
    assert in_room == {"staff": True, "member": False, "back": True}
    assert told == [(sids["member"], EventType.REVOKED.value)]


def _server_with_connections(users) -> tuple[socketio.AsyncServer, dict]:
    """A server with our handlers and ``connections()``: one connection per entry of ``users``, by token."""
    sio = socketio.AsyncServer(async_mode="asgi")
    register(sio)
    by_sid = {}
    tokens = {}
    for user in users:
        if user.pk not in tokens:
            make_token(user)
            tokens[user.pk] = ApiToken.objects.filter(user=user).latest("pk").pk

    async def get_session(sid, namespace=None):
        return dict(by_sid[sid])

    async def connections():
        sids = []
        for user in users:
            sid = await sio.manager.connect(f"eio-{len(by_sid)}", "/")
            await sio.enter_room(sid, user_room(user.pk))
            by_sid[sid] = {"user_id": user.pk, "username": user.get_username(), "auth": "token", "token_id": tokens[user.pk]}
            sids.append(sid)
        return sids

    sio.get_session = get_session
    return sio, connections


def test_joins_leaves_and_unknown_events_are_limited_per_connection_and_per_user(settings):
    """Past its limit a connection's join, leave, unknown event (one named "connect" or "disconnect" too) or control
    is answered `throttled` with `retryAfter`, and nothing else happens: a refused join does not enter the room. The
    user's other connections share a limit of their own; another user's are not held up."""
    from django.core.cache import cache

    cache.clear()
    settings.CONVENE_RATE_LIMITS = {**settings.CONVENE_RATE_LIMITS, "socket_events_connection": (5, 86_400),
                                    "socket_events_user": (8, 86_400)}
    owner, other = make_user("owner"), make_user("other")
    room = make_discussion(owner)
    sio, connections = _server_with_connections([owner, owner, other])
    handlers = sio.handlers["/"]
    join = {"discussionId": room.pk}

    async def scenario():
        first, second, theirs = await connections()
        answers = [await handlers["discussion:join"](first, join), await handlers["discussion:leave"](first, join),
                   await handlers["*"]("discussion:explode", first), await handlers["connect"](first, {}, None),
                   await handlers["disconnect"](first, "client")]
        over = {name: await call() for name, call in {
            "join": lambda: handlers["discussion:join"](first, join),
            "leave": lambda: handlers["discussion:leave"](first, join),
            "unknown": lambda: handlers["*"]("discussion:explode", first),
            "connect": lambda: handlers["connect"](first, {}, None),
            "stop": lambda: handlers["discussion:stop"](first, join),
        }.items()}
        in_room = socket_room(room.pk) in sio.rooms(first)
        # The user's second connection: 8 for the user in all, and the first already sent 10.
        second_answer = await handlers["discussion:join"](second, join)
        theirs_answer = await handlers["*"]("discussion:explode", theirs)
        return answers, over, in_room, second_answer, theirs_answer

    answers, over, in_room, second_answer, theirs_answer = run_async(scenario())
    assert answers[0]["ok"] is True and answers[1] == {"ok": True}
    assert [a["code"] for a in answers[2:]] == ["unknown_event"] * 3
    for name, answer in over.items():
        assert answer["ok"] is False and answer["code"] == "throttled", name
        assert 0 < answer["retryAfter"] <= 86_400 and f"wait {answer['retryAfter']} seconds" in answer["error"], name
    assert not in_room, "a refused join entered the room"
    assert Room.objects.get(pk=room.pk).status == "draft"
    assert second_answer["code"] == "throttled"
    assert theirs_answer["code"] == "unknown_event"
    cache.clear()


def test_a_page_s_joins_and_reconnects_stay_well_inside_the_default_limits():
    """With the default limits, a page that joins and leaves several rooms, reconnects a few times and pages
    through a long replay (one join per 500 events: 60 joins read 30,000) is never refused."""
    from django.core.cache import cache

    cache.clear()
    owner = make_user("owner")
    rooms = [make_discussion(owner) for _ in range(3)]
    sio, connections = _server_with_connections([owner] * 4)  # the first connection and three reconnects
    handlers = sio.handlers["/"]

    async def scenario():
        answers = []
        for sid in await connections():
            for room in rooms:
                answers.append(await handlers["discussion:join"](sid, {"discussionId": room.pk}))
                answers.append(await handlers["discussion:leave"](sid, {"discussionId": room.pk}))
        sid = (await connections())[0]
        for n in range(60):
            answers.append(await handlers["discussion:join"](sid, {"discussionId": rooms[0].pk, "lastSeq": n}))
        return answers

    answers = run_async(scenario())
    assert len(answers) == 84 and all(a["ok"] for a in answers), [a for a in answers if not a["ok"]][:1]
    cache.clear()
