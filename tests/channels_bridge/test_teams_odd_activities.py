"""Teams: a signed activity with odd fields is read safely: a channelData that is not an object reads as empty, and
ids longer than the columns that keep them are refused (acknowledged, logged, nothing stored, nothing sent)."""
import logging

import pytest

from channels_bridge.models import BotState, InboundUpdate
from rooms.models import Chat, ChatIdentity, ChatMember, Delivery

pytestmark = pytest.mark.django_db

LONG = "x" * 5000


@pytest.fixture
def people(teams):
    return {"ana": teams.account(1, "Ana Lima"), "ben": teams.account(2, "Ben Okafor")}


@pytest.fixture
def group(teams):
    return teams.conversation("19:roles_chat@thread.v2", "groupChat")


@pytest.mark.parametrize("channel_data", [["tenant", {"id": "t"}], "a string", 7, None])
def test_a_channel_data_that_is_not_an_object_reads_as_empty(teams, post_teams, run_tasks, people, group, channel_data):
    added = teams.bot_added(group, people["ana"])
    added["channelData"] = channel_data
    assert post_teams(added).status_code == 200
    hello = teams.message(group, people["ben"], "facilitator status")
    hello["channelData"] = channel_data
    assert post_teams(hello).status_code == 200
    run_tasks()
    assert set(InboundUpdate.objects.values_list("status", flat=True)) == {"processed"}
    chat = Chat.objects.get(platform="teams", external_id=group["id"])
    assert chat.bot_present and chat.added_by.external_id == people["ana"]["id"]
    assert "No facilitation is active here" in teams.sent_to(group["id"])[-1]["activity"]["text"]


def _long(teams, people, group, where):
    ana = dict(people["ana"])
    conversation = dict(group)
    activity = teams.message(conversation, ana, "facilitator status")
    if where == "conversation id":
        conversation["id"] = "19:" + LONG + "@thread.v2"
    elif where == "sender id":
        ana["id"] = "29:" + LONG
    elif where == "sender aadObjectId":
        ana["aadObjectId"] = LONG
    elif where == "tenant id":
        conversation["tenantId"] = LONG
    elif where == "bot id":
        activity["recipient"] = {"id": "28:" + LONG, "name": teams.bot_name}
    elif where == "mentioned id":
        activity["entities"].append({"type": "mention", "text": "<at>Ben</at>", "mentioned": {"id": "29:" + LONG, "name": "Ben"}})
    elif where == "activity id":
        activity["id"] = LONG
    elif where == "member added":
        activity = teams.activity("conversationUpdate", conversation, ana, membersAdded=[{"id": teams.bot_id}, {"id": "29:" + LONG}])
    activity["conversation"], activity["from"] = conversation, ana
    return activity


@pytest.mark.parametrize("where", ["conversation id", "sender id", "sender aadObjectId", "tenant id", "bot id",
                                   "mentioned id", "activity id", "member added"])
def test_an_id_longer_than_its_column_is_refused_and_nothing_is_stored(teams, post_teams, run_tasks, people, group, where,
                                                                       caplog):
    with caplog.at_level(logging.WARNING, logger="convene.bridge"):
        answer = post_teams(_long(teams, people, group, where))
    run_tasks()
    assert answer.status_code == 200  # acknowledged: the connector does not send it again
    assert not InboundUpdate.objects.exists() and not Chat.objects.exists() and not ChatMember.objects.exists()
    assert not ChatIdentity.objects.exists() and not Delivery.objects.exists() and not BotState.objects.exists()
    assert teams.activities == []
    assert any("ignored" in r.getMessage() and "longer than" in r.getMessage() for r in caplog.records)


def test_long_names_are_kept_cut_to_their_columns(teams, post_teams, run_tasks, people, group):
    ana = {**people["ana"], "name": "A" * 5000}
    conversation = {**group, "name": "T" * 5000}
    activity = teams.message(conversation, ana, "facilitator status")
    activity["recipient"] = {"id": teams.bot_id, "name": "B" * 5000}
    post_teams(activity)
    run_tasks()
    assert InboundUpdate.objects.get().status == "processed"
    assert len(ChatIdentity.objects.get(external_id=ana["id"]).name) == 200
    assert len(Chat.objects.get().title) == 300
    assert len(BotState.objects.get(platform="teams").bot_name) <= 200
    assert len(ChatIdentity.objects.get(external_id=teams.bot_id).name) <= 200


def test_a_stored_activity_with_an_id_too_long_is_ignored_by_the_worker(teams, people, group, caplog):
    """An activity stored before this check (or by another way in) is ignored by the worker too, not failed."""
    from channels_bridge.processing import process_update
    from tests.channels_bridge.conftest import committed

    activity = _long(teams, people, group, "sender id")
    row = InboundUpdate.objects.create(platform="teams", key="k", payload=activity, service_url=teams.service_url)
    with caplog.at_level(logging.WARNING, logger="convene.bridge"):
        committed(process_update, row.pk)
    row.refresh_from_db()
    assert row.status == "ignored" and not Chat.objects.exists() and not ChatIdentity.objects.filter(
        external_id__startswith="29:").exists()
    assert not Delivery.objects.exists() and teams.activities == []
    assert any("ignored" in r.getMessage() and "from.id is 5003 characters" in r.getMessage() for r in caplog.records)


def test_two_long_activities_that_differ_only_at_their_end_are_two_updates(teams, post_teams):
    """A conversation id and an activity id at their limits (300 and 200 characters) make a key longer than the
    stored key's column (400): its beginning and a digest of the whole key are kept, so two activities differing only
    in the last character of their ids are each stored once, and each repeat of them is a duplicate."""
    limit = InboundUpdate._meta.get_field("key").max_length
    conversation = teams.conversation("19:" + "c" * 280 + "@thread.v2", "groupChat")
    assert len(conversation["id"]) <= 300
    first = teams.message(conversation, teams.account(1, "Ana Lima"), "hello", mention_bot=False)
    first["id"] = "f:" + "a" * 197 + "1"
    second = {**first, "id": first["id"][:-1] + "2"}
    assert len(first["conversation"]["id"] + "|" + first["id"]) > limit
    for activity in (first, second, first, second):
        assert post_teams(activity).status_code == 200
    keys = list(InboundUpdate.objects.order_by("pk").values_list("key", flat=True))
    assert len(keys) == 2 and keys[0] != keys[1] and all(len(k) == limit for k in keys)
    assert all(k.startswith(f"{conversation['id']}|f:aaa") for k in keys)


def test_a_key_that_fits_its_column_is_kept_as_it_was(teams):
    """Keys stored before long keys were digested keep matching: a key that fits is the conversation and activity id."""
    from channels_bridge.teams.parse import load
    from channels_bridge.views import teams_key

    payload = teams.message(teams.conversation("19:roles_chat@thread.v2", "groupChat"), teams.account(1, "Ana Lima"), "hi")
    assert teams_key(load(payload), payload) == f"19:roles_chat@thread.v2|{payload['id']}"
    limit = InboundUpdate._meta.get_field("key").max_length
    exact = {**payload, "conversation": {**payload["conversation"], "id": "19:" + "c" * (limit - len(payload["id"]) - 4)}}
    key = teams_key(load(exact), exact)
    assert len(key) == limit and key == f"{exact['conversation']['id']}|{payload['id']}"
