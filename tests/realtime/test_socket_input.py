"""Malformed socket events get an error acknowledgement, never silence; ids and seqs parse strictly."""
import pytest

from facilitation.sockets import _parse_id, _parse_seq, read_state
from rooms.models import Room, RoomEvent
from tests.factories import make_discussion, make_token, make_user
from tests.realtime.conftest import Recorder, run_async


@pytest.mark.parametrize("raw", ["²", "١", "1²", "٣", " 1", "1 ", "+1", "-1", "1e3", "0x1", "", "0", 0, -3, 1.0, True,
                                 [1], {"id": 1}, 2**63, str(2**63), "9" * 40])
def test_ids_refuse_anything_but_plain_whole_numbers(raw):
    assert _parse_id(raw) is None


@pytest.mark.parametrize("raw, expected", [(7, 7), ("7", 7), (2**63 - 1, 2**63 - 1), ("0012", 12)])
def test_ids_accept_whole_numbers(raw, expected):
    assert _parse_id(raw) == expected


@pytest.mark.parametrize("raw, expected", [(None, 0), (0, 0), ("0", 0), (12, 12), ("²", None), ("١", None), (-1, None),
                                           (2**64, None), ("abc", None), (1.5, None), (False, None)])
def test_last_seq_parses_strictly(raw, expected):
    assert _parse_seq(raw) == expected


@pytest.mark.django_db
def test_an_absurd_last_seq_is_not_echoed_as_the_rooms_seq():
    room = make_discussion(make_user("owner"))
    state = read_state(room.pk, 2**62)
    assert state["ok"] is True and state["seq"] == Room.objects.get(pk=room.pk).seq and state["missed"] == []


@pytest.mark.worker
def test_every_malformed_event_is_answered(socket_stack):
    owner = make_user("owner")
    room = make_discussion(owner)
    key = make_token(owner)

    async def scenario():
        client = await Recorder(socket_stack.base_url, token=key).connect()
        answers = {
            "superscript id": await client.call("discussion:join", {"discussionId": "²"}),
            "arabic-indic id": await client.call("discussion:join", {"discussionId": "١"}),
            "huge id": await client.call("discussion:stop", {"discussionId": 2**70}),
            "list payload": await client.call("discussion:pause", [room.pk]),
            "no payload": await client.call("discussion:leave", None),
            "bad lastSeq": await client.call("discussion:join", {"discussionId": room.pk, "lastSeq": "²"}),
            "unknown event": await client.call("discussion:explode", {"discussionId": room.pk}),
        }
        absurd = await client.call("discussion:join", {"discussionId": room.pk, "lastSeq": 2**62})
        await client.close()
        return answers, absurd

    answers, absurd = run_async(scenario())
    for what, answer in answers.items():
        assert answer["ok"] is False and answer["code"] in ("invalid", "unknown_event"), what
    assert answers["unknown event"]["code"] == "unknown_event"
    assert absurd["ok"] is True and absurd["seq"] == Room.objects.get(pk=room.pk).seq
    assert Room.objects.get(pk=room.pk).status == "draft"


@pytest.mark.worker
def test_events_named_connect_or_disconnect_change_nobody_s_connection(socket_stack):
    """The handshake authenticates a connection once: an event a client names "connect", even carrying another
    person's token, is an unknown event, and the connection still speaks for whoever opened it."""
    owner, stranger = make_user("owner"), make_user("stranger")
    room = make_discussion(owner)
    owner_key, stranger_key = make_token(owner), make_token(stranger)

    async def scenario():
        client = await Recorder(socket_stack.base_url, token=stranger_key).connect()
        answers = {
            "connect": await client.call("connect", {"HTTP_COOKIE": ""}, timeout=5),
            "connect with a token": await client.sio.call("connect", ({}, {"token": owner_key}), timeout=5),
            "disconnect": await client.call("disconnect", "client namespace disconnect", timeout=5),
        }
        join = await client.call("discussion:join", {"discussionId": room.pk})
        stop = await client.call("discussion:stop", {"discussionId": room.pk})
        connected = client.sio.connected
        await client.close()
        return answers, join, stop, connected

    answers, join, stop, connected = run_async(scenario())
    for what, answer in answers.items():
        assert answer == {"ok": False, "error": "Unknown event.", "code": "unknown_event"}, what
    assert connected
    assert join["ok"] is False and join["code"] == "not_found"
    assert stop["ok"] is False and stop["code"] == "not_found"
    assert Room.objects.get(pk=room.pk).status == "draft" and RoomEvent.objects.filter(room=room).count() == 1


@pytest.mark.django_db
def test_socket_comments_follow_the_rest_rule_and_refusals_write_nothing():
    """``discussion:comment``: owner and participants speak in a running or paused room; anyone else, a lapsed
    credential, a malformed text or a draft room is refused with a code, and nothing is written."""
    from facilitation.sockets import run_comment
    from rooms.models import ApiToken, Observation, RoomMember

    owner, viewer, participant, stranger = (make_user(n) for n in ("owner", "viewer", "speaker", "stranger"))
    room, other_room = make_discussion(owner), make_discussion(owner)
    RoomMember.objects.create(room=room, user=viewer, access="viewer")
    RoomMember.objects.create(room=room, user=participant, access="participant")

    def who(user):
        make_token(user, name=f"t{ApiToken.objects.count()}")
        return {"user_id": user.pk, "auth": "token", "token_id": ApiToken.objects.filter(user=user).latest("pk").pk}

    def code(answer):
        return answer["code"] if not answer["ok"] else "ok"

    assert code(run_comment(who(owner), room.pk, "Too early")) == "invalid_transition"  # a draft room
    Room.objects.filter(pk__in=[room.pk, other_room.pk]).update(status="paused")
    revoked = who(participant)
    ApiToken.objects.filter(pk=revoked["token_id"]).delete()
    refusals = {
        "anonymous": run_comment(None, room.pk, "hello"),
        "stranger": run_comment(who(stranger), room.pk, "hello"),
        "missing room": run_comment(who(stranger), room.pk + 1000, "hello"),
        "viewer": run_comment(who(viewer), room.pk, "hello"),
        "revoked token": run_comment(revoked, room.pk, "hello"),
        "a number": run_comment(who(participant), room.pk, 5),
        "an object": run_comment(who(participant), room.pk, {"text": "hello"}),
        "blank": run_comment(who(participant), room.pk, " \n "),
        "too long": run_comment(who(participant), room.pk, "x" * 100_000),
        "NUL": run_comment(who(participant), room.pk, "a\x00b"),
    }
    assert {what: code(a) for what, a in refusals.items()} == {
        "anonymous": "not_found", "stranger": "not_found", "missing room": "not_found", "viewer": "forbidden",
        "revoked token": "not_found", "a number": "validation_error", "an object": "validation_error",
        "blank": "validation_error", "too long": "validation_error", "NUL": "validation_error"}
    assert refusals["stranger"] == refusals["missing room"]  # nothing tells a room that exists from one that does not
    assert not Observation.objects.filter(room__in=[room, other_room]).exists()
    assert RoomEvent.objects.filter(room=room).count() == 1

    spoken = run_comment(who(participant), room.pk, "VOTE: READY")
    assert spoken["ok"] is True and spoken["turn"]["speaker"]["kind"] == "human"
    assert list(Observation.objects.filter(room=room).values_list("content", flat=True)) == ["VOTE: READY"]
    assert not Observation.objects.filter(room=other_room).exists()
