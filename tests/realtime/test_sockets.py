"""Socket.IO against the real stack: daphne serving config.asgi, Redis, a Celery worker.

Clients are real ``socketio.AsyncClient``s over websockets. Database work happens
outside the event loop (before ``asyncio.run`` or in ``asyncio.to_thread``).
"""
import asyncio

import pytest
import socketio

from facilitation.actions.lifecycle import do_start_discussion
from rooms.models import Room, RoomEvent, RoomMember
from tests.factories import make_discussion, make_user
from tests.realtime.conftest import Recorder, api_token, run_async, session_cookie, until
from tests.waiting import wait_for

pytestmark = pytest.mark.worker


def stored(room_id, after=0):
    return list(RoomEvent.objects.filter(room_id=room_id, seq__gt=after).order_by("seq").values_list("seq", flat=True))


def terminal(room_id):
    room = Room.objects.get(pk=room_id)
    return room if room.is_terminal else None


def test_connect_needs_a_session_or_a_token(socket_stack):
    alice = make_user("alice")
    cookie, token = session_cookie(alice), api_token(alice)
    url = socket_stack.base_url

    async def scenario():
        for kwargs in ({}, {"token": "not-a-token"}, {"cookie": "sessionid=forged"}):
            client = Recorder(url, **kwargs)
            with pytest.raises(socketio.exceptions.ConnectionError):
                await client.connect()
        by_session = await Recorder(url, cookie=cookie).connect()
        by_token = await Recorder(url, token=token).connect()
        assert by_session.sio.connected and by_token.sio.connected
        await by_session.close()
        await by_token.close()

    run_async(scenario())


def test_a_signed_out_session_no_longer_connects(socket_stack):
    from django.contrib.sessions.models import Session

    alice = make_user("alice")
    cookie = session_cookie(alice)
    Session.objects.all().delete()

    async def scenario():
        with pytest.raises(socketio.exceptions.ConnectionError):
            await Recorder(socket_stack.base_url, cookie=cookie).connect()

    run_async(scenario())


def test_join_is_refused_without_access_and_nothing_arrives(socket_stack):
    owner, stranger = make_user("owner"), make_user("stranger")
    room = make_discussion(owner, max_rounds=2)
    cookie, owner_token = session_cookie(stranger), api_token(owner)

    async def scenario():
        intruder = await Recorder(socket_stack.base_url, cookie=cookie).connect()
        watcher = await Recorder(socket_stack.base_url, token=owner_token).connect()
        refused = await intruder.call("discussion:join", {"discussionId": room.pk, "lastSeq": 0})
        assert refused["ok"] is False and refused["error"] and "missed" not in refused
        # The same answer as for a discussion that does not exist: nothing leaks.
        missing = await intruder.call("discussion:join", {"discussionId": room.pk + 1000})
        assert missing == refused
        assert (await watcher.call("discussion:join", {"discussionId": room.pk}))["ok"] is True
        # Controls are refused too, and change nothing.
        for verb in ("pause", "stop", "conclude"):
            answer = await intruder.call(f"discussion:{verb}", {"discussionId": room.pk})
            assert answer["ok"] is False
        await asyncio.to_thread(do_start_discussion, room.pk)
        await until(lambda: any(e["type"] == "discussion:concluded" for e in watcher.events))
        await asyncio.sleep(0.3)
        assert intruder.events == []
        await intruder.close()
        await watcher.close()
        return watcher.events

    seen = run_async(scenario())
    room.refresh_from_db()
    assert room.status == "concluded"
    assert [e["seq"] for e in seen] == stored(room.pk, after=1)


def test_a_viewer_can_watch_but_not_control(socket_stack):
    owner, viewer = make_user("owner"), make_user("viewer")
    room = make_discussion(owner, max_rounds=3)
    RoomMember.objects.create(room=room, user=viewer, access="viewer")
    do_start_discussion(room)
    cookie = session_cookie(viewer)

    async def scenario():
        client = await Recorder(socket_stack.base_url, cookie=cookie).connect()
        joined = await client.call("discussion:join", {"discussionId": room.pk, "lastSeq": 0})
        assert joined["ok"] is True and joined["missed"][0]["type"] == "discussion:status"
        answers = [await client.call(f"discussion:{verb}", {"discussionId": room.pk}) for verb in ("pause", "stop", "conclude")]
        await client.close()
        return answers

    answers = run_async(scenario())
    assert all(a["ok"] is False and a["code"] == "forbidden" for a in answers)
    final = wait_for(lambda: terminal(room.pk))
    assert final.status == "concluded", "a viewer's control request changed the discussion"
    assert not RoomEvent.objects.filter(room=room, type="discussion:status", payload__status__in=["paused", "stopped"]).exists()


def test_the_owner_controls_through_the_socket(slow_socket_stack):
    owner = make_user("owner")
    room = make_discussion(owner, max_rounds=20)
    token = api_token(owner)

    async def scenario():
        client = await Recorder(slow_socket_stack.base_url, token=token).connect()
        assert (await client.call("discussion:join", {"discussionId": room.pk}))["ok"]
        early = await client.call("discussion:pause", {"discussionId": room.pk})
        assert early["ok"] is False and early["status"] == "draft"  # not allowed from draft: a conflict
        await asyncio.to_thread(do_start_discussion, room.pk)
        await until(lambda: any(e["type"] == "discussion:turn" for e in client.events))
        # Pause right after a facilitator decision: the next participant turn (1.5 s) is in flight.
        decisions = len([e for e in client.events if e["type"] == "discussion:moderator"])
        await until(lambda: len([e for e in client.events if e["type"] == "discussion:moderator"]) > decisions)
        paused = await client.call("discussion:pause", {"discussionId": room.pk})
        assert paused == {"ok": True, "status": "paused", "round": paused["round"], "maxRounds": 20}
        again = await client.call("discussion:pause", {"discussionId": room.pk})
        assert again["ok"] is False and again["status"] == "paused"
        await asyncio.sleep(1.0)
        count = len([e for e in client.events if e["type"] == "discussion:turn"])
        resumed = await client.call("discussion:resume", {"discussionId": room.pk})
        assert resumed["ok"] and resumed["status"] == "active"
        # Resume continues at once (within a few turns' time), not after the in-flight step's lease expires.
        await until(lambda: len([e for e in client.events if e["type"] == "discussion:turn"]) > count, timeout=10)
        stopped = await client.call("discussion:stop", {"discussionId": room.pk})
        assert stopped["ok"] and stopped["status"] == "stopped"
        await until(lambda: any(e["type"] == "discussion:status" and e["status"] == "stopped" for e in client.events))
        await client.close()
        return [e["status"] for e in client.events if e["type"] == "discussion:status"]

    statuses = run_async(scenario())
    assert statuses[0] == "active" and "paused" in statuses and statuses[-1] == "stopped"
    assert statuses.index("paused") < statuses.index("stopped")
    room.refresh_from_db()
    assert room.status == "stopped" and room.round < 20


def test_reconnect_replays_what_was_missed_once_and_in_order(socket_stack):
    """A client leaves mid-discussion and comes back with its last seq: the union is exact."""
    owner = make_user("owner")
    room = make_discussion(owner, max_rounds=6)
    token = api_token(owner)

    def apply(applied: list, events: list) -> None:
        # What the browser does: drop anything at or below the last applied seq.
        for e in sorted(events, key=lambda e: e["seq"]):
            if not applied or e["seq"] > applied[-1]["seq"]:
                applied.append(e)

    async def scenario():
        applied: list = []
        first = await Recorder(socket_stack.base_url, token=token).connect()
        joined = await first.call("discussion:join", {"discussionId": room.pk, "lastSeq": 0})
        apply(applied, joined["missed"])
        await asyncio.to_thread(do_start_discussion, room.pk)
        await until(lambda: len([e for e in first.events if e["type"] == "discussion:turn"]) >= 2)
        apply(applied, first.events)
        await first.close()  # events go on while this client is away
        last_seq = applied[-1]["seq"]
        await asyncio.sleep(1.0)
        second = await Recorder(socket_stack.base_url, token=token).connect()
        rejoined = await second.call("discussion:join", {"discussionId": room.pk, "lastSeq": last_seq})
        assert rejoined["ok"] and rejoined["missed"], "nothing was replayed"
        missed_seqs = [e["seq"] for e in rejoined["missed"]]
        assert missed_seqs == sorted(missed_seqs) and missed_seqs[0] == last_seq + 1
        assert rejoined["seq"] >= missed_seqs[-1]
        apply(applied, rejoined["missed"])
        # The closing status event is committed with the synthesis and pushed right after it.
        await until(lambda: any(e["type"] == "discussion:status" and e["status"] == "concluded"
                                for e in applied + second.events))
        apply(applied, second.events)
        await second.close()
        return applied, rejoined

    applied, rejoined = run_async(scenario())
    wait_for(lambda: terminal(room.pk))
    seqs = [e["seq"] for e in applied]
    assert seqs == stored(room.pk), "an event was lost, doubled or reordered across the reconnect"
    # Replayed events carry the same payload as the stored ones, plus their type.
    for event in rejoined["missed"]:
        row = RoomEvent.objects.get(room=room, seq=event["seq"])
        assert event == {"type": row.type, **row.payload}


def test_join_answers_state_and_a_bounded_replay(socket_stack):
    owner = make_user("owner")
    room = make_discussion(owner, max_rounds=2)
    do_start_discussion(room)
    wait_for(lambda: terminal(room.pk))
    token = api_token(owner)
    all_seqs = stored(room.pk)

    async def scenario():
        client = await Recorder(socket_stack.base_url, token=token).connect()
        full = await client.call("discussion:join", {"discussionId": room.pk})
        tail = await client.call("discussion:join", {"discussionId": room.pk, "lastSeq": all_seqs[-3]})
        none = await client.call("discussion:join", {"discussionId": room.pk, "lastSeq": all_seqs[-1]})
        bad = await client.call("discussion:join", {"discussionId": "x"})
        left = await client.call("discussion:leave", {"discussionId": room.pk})
        await client.close()
        return full, tail, none, bad, left

    full, tail, none, bad, left = run_async(scenario())
    room.refresh_from_db()
    assert full["ok"] and full["status"] == "concluded" and full["round"] == room.round and full["maxRounds"] == 2
    assert [e["seq"] for e in full["missed"]] == all_seqs and full["seq"] == room.seq
    assert {e["type"] for e in full["missed"]} >= {"discussion:turn", "discussion:moderator", "discussion:concluded", "discussion:status"}
    assert [e["seq"] for e in tail["missed"]] == all_seqs[-2:]
    assert none["missed"] == [] and none["seq"] == room.seq
    assert bad["ok"] is False
    assert left == {"ok": True}


def test_worker_events_arrive_after_commit_through_redis(socket_stack):
    """Turns are committed by the worker process; each pushed event is already stored when it arrives."""
    owner = make_user("owner")
    room = make_discussion(owner, max_rounds=3)
    cookie = session_cookie(owner)
    checks: list[tuple[int, bool]] = []

    async def scenario():
        client = await Recorder(socket_stack.base_url, cookie=cookie).connect()

        async def on_turn(data):
            client.events.append({"type": "discussion:turn", **data})
            visible = await asyncio.to_thread(RoomEvent.objects.filter(room_id=room.pk, seq=data["seq"]).exists)
            checks.append((data["seq"], visible))

        client.sio.on("discussion:turn", on_turn)
        assert (await client.call("discussion:join", {"discussionId": room.pk}))["ok"]
        await asyncio.to_thread(do_start_discussion, room.pk)
        await until(lambda: any(e["type"] == "discussion:concluded" for e in client.events))
        await client.close()
        return client.events

    events = run_async(scenario())
    turns = [e for e in events if e["type"] == "discussion:turn"]
    assert len(turns) == 3 and checks and all(visible for _, visible in checks)
    for e in turns:
        assert set(e) >= {"discussionId", "seq", "ts", "turn"}
        assert set(e["turn"]) >= {"id", "seq", "round", "speaker", "content", "markers", "status"}
        assert e["turn"]["speaker"]["role"] == "participant" and e["turn"]["status"] == "ok"
        assert {"question", "concern"} <= {m["type"] for m in e["turn"]["markers"]}
    moderator = next(e for e in events if e["type"] == "discussion:moderator")
    assert set(moderator["decision"]) >= {"decision", "nextParticipantId", "question", "reasoning", "fallback"}
    concluded = events[-2] if events[-1]["type"] == "discussion:status" else events[-1]
    assert concluded["type"] == "discussion:concluded" and concluded["status"] == "concluded" and concluded["conclusion"]


def test_losing_access_stops_the_live_events_at_once(socket_stack):
    from rooms.actions.rooms import do_unshare_room

    owner, viewer = make_user("owner"), make_user("viewer")
    room = make_discussion(owner, max_rounds=4)
    RoomMember.objects.create(room=room, user=viewer, access="viewer")
    cookie, owner_token = session_cookie(viewer), api_token(owner)

    async def scenario():
        former = await Recorder(socket_stack.base_url, cookie=cookie).connect()
        watcher = await Recorder(socket_stack.base_url, token=owner_token).connect()
        assert (await former.call("discussion:join", {"discussionId": room.pk}))["ok"] is True
        assert (await watcher.call("discussion:join", {"discussionId": room.pk}))["ok"] is True
        await asyncio.to_thread(do_start_discussion, room.pk)
        await until(lambda: any(e["type"] == "discussion:turn" for e in former.events))
        await asyncio.to_thread(do_unshare_room, room, username="viewer")
        await until(lambda: any(e["type"] == "discussion:revoked" for e in former.events))
        cut = len(former.events)
        await until(lambda: any(e["type"] == "discussion:concluded" for e in watcher.events))
        await asyncio.sleep(0.3)
        after = former.events[cut:]
        rejoin = await former.call("discussion:join", {"discussionId": room.pk})
        await former.close()
        await watcher.close()
        return after, rejoin

    after, rejoin = run_async(scenario())
    assert after == [], "a person without access still received events"
    assert rejoin["ok"] is False


def test_a_changed_access_is_told_to_the_members_pages_and_they_stay_in_the_room(socket_stack):
    from rooms.actions.rooms import do_share_room

    owner, member = make_user("owner"), make_user("member")
    room = make_discussion(owner, max_rounds=2)
    RoomMember.objects.create(room=room, user=member, access="viewer")
    cookie = session_cookie(member)

    async def scenario():
        page = await Recorder(socket_stack.base_url, cookie=cookie).connect()
        assert (await page.call("discussion:join", {"discussionId": room.pk}))["ok"] is True
        await asyncio.to_thread(do_share_room, room, username="member", access="viewer")  # unchanged: nothing told
        await asyncio.to_thread(do_share_room, room, username="member", access="participant")
        await until(lambda: any(e["type"] == "discussion:access" for e in page.events))
        told = [e for e in page.events if e["type"] == "discussion:access"]
        await asyncio.to_thread(do_start_discussion, room.pk)
        await until(lambda: any(e["type"] == "discussion:turn" for e in page.events))
        await page.close()
        return told

    told = run_async(scenario())
    assert [{k: e[k] for k in ("discussionId", "access")} for e in told] == [{"discussionId": room.pk, "access": "participant"}]
