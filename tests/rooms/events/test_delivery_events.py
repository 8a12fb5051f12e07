"""``discussion:delivery`` reaches everyone in the room (live and in a join's replay), while who a message went to
and why it did not arrive is for the owner and staff (GET /api/discussions/{id}/deliveries)."""
import json

import pytest
from django.test import TestCase

from rooms.actions.deliveries import queue_direct
from rooms.events import events_after
from rooms.events.schemas import DeliveryShape
from rooms.models import Delivery, RoomEvent, RoomMember
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


def test_a_viewer_learns_that_a_report_went_out_but_not_to_whom(client, pushed):
    owner, viewer = make_user("owner"), make_user("viewer")
    make_user("quiet-boss")  # the report's target: a user with no linked chat account, so the delivery is undeliverable
    room = make_discussion(owner)
    RoomMember.objects.create(room=room, user=viewer, access="viewer")
    with TestCase.captureOnCommitCallbacks(execute=True):
        queue_direct("user:quiet-boss", "The report", room=room)
        queue_direct("role:board-of-secrets", "The report", room=room)
    deliveries = list(Delivery.objects.filter(room=room).order_by("pk"))
    assert [d.status for d in deliveries] == ["undeliverable", "undeliverable"]

    replay = [e for e in events_after(room.pk, 0, limit=500) if e["type"] == "discussion:delivery"]  # a join's replay
    live = [p for t, p, _ in pushed if t == "discussion:delivery"]
    stored = [e.payload for e in RoomEvent.objects.filter(room=room, type="discussion:delivery").order_by("seq")]
    assert len(replay) == len(live) == len(stored) == 2
    for payloads in (replay, live, stored):
        assert [p["delivery"]["id"] for p in payloads] == [d.pk for d in deliveries]
        assert {p["delivery"]["status"] for p in payloads} == {"undeliverable"}
        text = json.dumps(payloads)
        assert "quiet-boss" not in text and "board-of-secrets" not in text
        assert all(set(p["delivery"]) <= set(DeliveryShape.__annotations__) for p in payloads)

    # The owner reads the whole of it where it belongs.
    client.force_login(owner)
    listed = client.get(f"/api/discussions/{room.pk}/deliveries").json()["data"]
    assert {d["principal"] for d in listed} == {"user:quiet-boss", "role:board-of-secrets"}
    assert all(d["diagnostic"] for d in listed)
    client.force_login(viewer)
    assert client.get(f"/api/discussions/{room.pk}/deliveries").status_code in (403, 404)


def test_a_delivery_event_stored_with_its_recipient_is_replayed_without_it():
    """Events written before the event stopped naming recipients are replayed as it reads now."""
    from rooms.events import events_after

    room = make_discussion(make_user("owner"))
    RoomEvent.objects.create(room=room, seq=room.seq + 1, type="discussion:delivery", payload={
        "discussionId": room.pk, "seq": room.seq + 1, "ts": "2026-01-05T10:00:00+00:00",
        "delivery": {"id": 9, "kind": "direct", "principal": "user:quiet-boss", "recipient": "quiet-boss (telegram)",
                     "platform": "telegram", "status": "undeliverable", "state": "undeliverable", "attempts": 1,
                     "chatId": None, "sourceSeq": None, "createdAt": "2026-01-05T10:00:00+00:00", "sentAt": None,
                     "diagnostic": "quiet-boss never started the bot."}})
    (replayed,) = [e for e in events_after(room.pk, 0) if e["type"] == "discussion:delivery"]
    assert "quiet-boss" not in json.dumps(replayed)
    assert replayed["delivery"] == {"id": 9, "kind": "direct", "platform": "telegram", "status": "undeliverable",
                                    "state": "undeliverable", "attempts": 1, "chatId": None, "sourceSeq": None,
                                    "createdAt": "2026-01-05T10:00:00+00:00", "sentAt": None}
