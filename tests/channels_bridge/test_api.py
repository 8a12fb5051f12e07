"""REST: comments, links, deliveries and chat identities, and who may use them."""
import pytest
from rest_framework.test import APIClient

from rooms.models import ChatCode, ChatIdentity, ChatLink, Chat, Delivery, Observation, Room, RoomMember
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(db):
    return {name: make_user(name, is_staff=name == "staff") for name in ("owner", "viewer", "participant", "other", "staff")}


@pytest.fixture
def room(people):
    room = make_discussion(people["owner"])
    RoomMember.objects.create(room=room, user=people["viewer"], access="viewer")
    RoomMember.objects.create(room=room, user=people["participant"], access="participant")
    Room.objects.filter(pk=room.pk).update(status=Room.Status.ACTIVE)
    return Room.objects.get(pk=room.pk)


def api(user=None):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_comments_follow_the_access_rules(room, people):
    url = f"/api/discussions/{room.pk}/comments"
    body = {"content": "I agree.\nVOTE: READY"}
    assert api(people["other"]).post(url, body, format="json").status_code == 404
    assert api(people["viewer"]).post(url, body, format="json").status_code == 403
    assert api().post(url, body, format="json").status_code in (401, 403)
    assert not Observation.objects.filter(room=room, author_kind="human").exists()
    response = api(people["participant"]).post(url, body, format="json")
    assert response.status_code == 201
    turn = response.json()["data"]
    assert turn["speaker"]["kind"] == "human" and turn["speaker"]["name"] == "participant"
    assert turn["markers"][0]["type"] == "vote" and turn["markers"][0]["value"] == "READY"
    assert api(people["owner"]).post(url, {"content": "  "}, format="json").status_code == 400
    Room.objects.filter(pk=room.pk).update(status=Room.Status.CONCLUDED)
    conflict = api(people["owner"]).post(url, body, format="json")
    assert conflict.status_code == 409 and conflict.json()["success"] is False
    assert Observation.objects.filter(room=room, author_kind="human").count() == 1


def test_a_comment_takes_the_next_seq_under_the_room_lock(room, people):
    before = Room.objects.get(pk=room.pk).seq
    api(people["owner"]).post(f"/api/discussions/{room.pk}/comments", {"content": "one"}, format="json")
    api(people["owner"]).post(f"/api/discussions/{room.pk}/comments", {"content": "two"}, format="json")
    seqs = list(Observation.objects.filter(room=room, author_kind="human").order_by("seq").values_list("seq", flat=True))
    assert seqs == [before + 1, before + 2] and Room.objects.get(pk=room.pk).seq == before + 2


def test_links_codes_and_unlinking(room, people):
    url = f"/api/discussions/{room.pk}/links"
    assert api(people["viewer"]).post(url).status_code == 403
    assert api(people["participant"]).post(url).status_code == 403
    assert api(people["other"]).post(url).status_code == 404
    assert not ChatCode.objects.exists()
    created = api(people["owner"]).post(url)
    assert created.status_code == 201
    data = created.json()["data"]
    assert data["command"] == f"/facilitator start {data['code']}" and data["expiresAt"]
    assert data["teamsCommand"] == f"@Convene facilitator start {data['code']}"  # a Teams group hears the bot when mentioned
    chat = Chat.objects.create(platform="telegram", external_id="-1", title="Team")
    link = ChatLink.objects.create(chat=chat, room=room)
    listed = api(people["viewer"]).get(url).json()["data"]
    assert [(l["id"], l["title"], l["platform"]) for l in listed] == [(link.pk, "Team", "telegram")]
    assert api(people["viewer"]).delete(f"{url}/{link.pk}").status_code == 403
    assert api(people["owner"]).delete(url, {"linkId": 999999}, format="json").status_code == 404
    removed = api(people["owner"]).delete(f"{url}?linkId={link.pk}")
    assert removed.status_code == 200 and removed.json()["data"]["active"] is False
    assert api(people["viewer"]).get(url).json()["data"] == []


def test_link_codes_carry_the_telegram_link_once_the_bot_is_known(room, people):
    url = f"/api/discussions/{room.pk}/links"
    assert api(people["owner"]).post(url).json()["data"]["telegramLink"] is None  # the bridge has not met the bot yet
    ChatIdentity.objects.create(platform="telegram", external_id="123456", name="Convene", username="ConveneTestBot", is_bot=True)
    data = api(people["owner"]).post(url).json()["data"]
    assert data["telegramLink"] == f"https://t.me/ConveneTestBot?startgroup={data['code']}"
    created = api(people["participant"]).post("/api/me/chat-identities").json()["data"]
    assert created["telegramLink"] == f"https://t.me/ConveneTestBot?start={created['code']}"


def test_deliveries_are_for_the_owner_and_staff(room, people):
    chat = Chat.objects.create(platform="telegram", external_id="-1", title="Team")
    Delivery.objects.create(room=room, kind="post", chat=chat, platform="telegram", recipient="Team", text="hi",
                            status="undeliverable", diagnostic="Telegram refused (403)")
    url = f"/api/discussions/{room.pk}/deliveries"
    assert api(people["viewer"]).get(url).status_code == 403
    assert api(people["other"]).get(url).status_code == 404
    (row,) = api(people["staff"]).get(url).json()["data"]
    assert row["status"] == "undeliverable" and row["diagnostic"] == "Telegram refused (403)" and row["platform"] == "telegram"


def test_chat_identity_codes_and_links(people):
    me = api(people["participant"])
    created = me.post("/api/me/chat-identities")
    assert created.status_code == 201 and created.json()["data"]["command"].startswith("/start ")
    assert created.json()["data"]["teamsCommand"] == f"start {created.json()['data']['code']}"  # a Teams personal chat
    assert ChatCode.objects.get().purpose == "identity"
    mine = ChatIdentity.objects.create(platform="telegram", external_id="9", name="P", user=people["participant"])
    ChatIdentity.objects.create(platform="telegram", external_id="10", name="Q", user=people["other"])
    assert [i["id"] for i in me.get("/api/me/chat-identities").json()["data"]] == [mine.pk]
    assert api(people["other"]).delete(f"/api/me/chat-identities/{mine.pk}").status_code == 404
    assert me.delete(f"/api/me/chat-identities/{mine.pk}").status_code == 200
    assert ChatIdentity.objects.get(pk=mine.pk).user is None
    assert api().post("/api/me/chat-identities").status_code in (401, 403)


@pytest.mark.parametrize("status", [Room.Status.ARCHIVED, Room.Status.CONCLUDED])
def test_an_ended_room_cannot_be_linked_and_says_why_in_words(room, people, status):
    Room.objects.filter(pk=room.pk).update(status=status)
    refused = api(people["owner"]).post(f"/api/discussions/{room.pk}/links", format="json")
    assert refused.status_code == 409
    assert refused.json()["error"]["message"] == f"This discussion is {status}: it cannot be linked to a chat."
    assert refused.json()["error"]["details"] == {"status": status}
    assert not ChatCode.objects.filter(room=room).exists()
