"""A socket is authorised only as long as its credential stands: revoked tokens and deactivated
accounts are disconnected at once, and every event checks the credential again."""
import asyncio

import pytest

from facilitation.actions.lifecycle import do_start_discussion
from rooms.actions.tokens import do_revoke_token, do_set_user_active
from rooms.models import ApiToken, Room, RoomMember
from tests.factories import make_discussion, make_token, make_user
from tests.realtime.conftest import Recorder, run_async, session_cookie, until

pytestmark = pytest.mark.worker


def _watch_revocation(client: Recorder) -> list:
    notices = []

    async def on_revoked(data):
        notices.append(data)

    client.sio.on("session:revoked", on_revoked)
    return notices


def test_revoking_a_token_disconnects_its_sockets_at_once(socket_stack):
    owner = make_user("owner")
    room = make_discussion(owner, max_rounds=4)
    revoked_key, kept_key = make_token(owner, name="old"), make_token(owner, name="kept")
    revoked = ApiToken.objects.get(user=owner, name="old")

    async def scenario():
        doomed = await Recorder(socket_stack.base_url, token=revoked_key).connect()
        notices = _watch_revocation(doomed)
        kept = await Recorder(socket_stack.base_url, token=kept_key).connect()
        for client in (doomed, kept):
            assert (await client.call("discussion:join", {"discussionId": room.pk}))["ok"] is True
        await asyncio.to_thread(do_revoke_token, revoked)
        await until(lambda: not doomed.sio.connected, timeout=10)
        assert notices, "the client was not told why"
        assert kept.sio.connected, "a socket with another token was disconnected too"
        with pytest.raises(Exception):
            await Recorder(socket_stack.base_url, token=revoked_key).connect()
        await kept.close()

    run_async(scenario())


def test_deactivating_a_user_disconnects_every_socket_of_theirs(socket_stack):
    owner, viewer = make_user("owner"), make_user("viewer")
    room = make_discussion(owner, max_rounds=3)
    RoomMember.objects.create(room=room, user=viewer, access="viewer")
    cookie, key = session_cookie(viewer), make_token(viewer)

    async def scenario():
        by_cookie = await Recorder(socket_stack.base_url, cookie=cookie).connect()
        by_token = await Recorder(socket_stack.base_url, token=key).connect()
        for client in (by_cookie, by_token):
            assert (await client.call("discussion:join", {"discussionId": room.pk}))["ok"] is True
        await asyncio.to_thread(do_set_user_active, viewer, False)
        await until(lambda: not by_cookie.sio.connected and not by_token.sio.connected, timeout=10)

    run_async(scenario())


def test_every_event_checks_the_credential_again(socket_stack):
    """Even if a disconnect notice were lost, a revoked token controls and joins nothing."""
    owner = make_user("owner")
    room = make_discussion(owner, max_rounds=20)
    other_room = make_discussion(owner, max_rounds=2)
    do_start_discussion(room)
    key = make_token(owner)

    async def scenario():
        client = await Recorder(socket_stack.base_url, token=key).connect()
        assert (await client.call("discussion:join", {"discussionId": room.pk}))["ok"] is True
        # Deleted behind the action's back: no disconnect notice is published.
        await asyncio.to_thread(lambda: ApiToken.objects.all().delete())
        stop = await client.call("discussion:stop", {"discussionId": room.pk})
        join = await client.call("discussion:join", {"discussionId": other_room.pk})
        await client.close()
        return stop, join

    stop, join = run_async(scenario())
    assert stop["ok"] is False and join["ok"] is False
    assert Room.objects.get(pk=room.pk).status != "stopped"
    Room.objects.filter(pk=room.pk).update(status="stopped")


def test_signing_out_disconnects_the_sockets_of_that_session_at_once(socket_stack):
    """Signing out in one tab ends the live room in every tab of that browser at once; another browser of the same
    person (another session) and their API token keep their connections."""
    from django.conf import settings
    from django.test import Client

    owner = make_user("owner")
    room = make_discussion(owner, max_rounds=3)
    browser, other_browser = Client(), Client()
    for client in (browser, other_browser):
        client.force_login(owner)
    cookie, other_cookie = (f"{settings.SESSION_COOKIE_NAME}={c.cookies[settings.SESSION_COOKIE_NAME].value}"
                            for c in (browser, other_browser))
    key = make_token(owner)

    async def scenario():
        signed_out = await Recorder(socket_stack.base_url, cookie=cookie).connect()
        notices = _watch_revocation(signed_out)
        others = [await Recorder(socket_stack.base_url, cookie=other_cookie).connect(),
                  await Recorder(socket_stack.base_url, token=key).connect()]
        for client in (signed_out, *others):
            assert (await client.call("discussion:join", {"discussionId": room.pk}))["ok"] is True
        response = await asyncio.to_thread(browser.post, "/logout/")
        assert response.status_code in (200, 302)
        await until(lambda: not signed_out.sio.connected, timeout=10)
        assert notices, "the page was not told why"
        await asyncio.sleep(0.3)
        assert all(client.sio.connected for client in others), "another session's or a token's socket was closed"
        for client in others:
            await client.close()

    run_async(scenario())
