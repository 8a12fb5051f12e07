"""A chat message changed after it became a turn: edited (Telegram and Teams), deleted and restored (Teams)."""
import pytest

from channels_bridge.models import InboundUpdate
from rooms.actions.chat import do_create_room_code
from rooms.models import Chat, Delivery, Invocation, Observation, RoomEvent
from tests.factories import make_discussion, make_user
from tests.fakes import telegram_updates as tu

pytestmark = pytest.mark.django_db

ANA = tu.user(501, "Ana", "ana_s")
BEN = tu.user(502, "Ben", "benb")
GROUP = tu.group(-4001, "Roles")
OTHER = tu.group(-4002, "Roles, second office")


@pytest.fixture
def owner(db):
    return make_user("olga")


@pytest.fixture
def room(owner):
    from facilitation.actions.lifecycle import do_start_discussion

    room = make_discussion(owner)
    do_start_discussion(room)
    return room


def link_telegram(post_telegram, run_tasks, room, owner, chat=GROUP, by=ANA) -> Chat:
    post_telegram(tu.bot_added(chat, by))
    code = do_create_room_code(room, owner)
    post_telegram(tu.command(chat, by, f"/facilitator start {code.code}"))
    run_tasks()
    return Chat.objects.get(platform="telegram", external_id=str(chat["id"]))


def updated_events(pushed, change=None) -> list[dict]:
    return [p for t, p, _ in pushed if t == "discussion:turn_updated" and (change is None or p["change"] == change)]


# --- edits ----------------------------------------------------------------------------------------


def test_an_edit_on_telegram_changes_the_turn_keeps_the_text_before_and_is_relayed_once(
        telegram, post_telegram, run_tasks, room, owner, pushed):
    link_telegram(post_telegram, run_tasks, room, owner)
    link_telegram(post_telegram, run_tasks, room, owner, chat=OTHER)
    original = tu.message(GROUP, BEN, "I'll take Lead.\nVOTE: READY")
    post_telegram(original)
    run_tasks()
    run_tasks()
    (turn,) = Observation.objects.filter(room=room, author_kind="human")
    relayed_before = len(telegram.sent_to(-4002))
    seq_before = RoomEvent.objects.filter(room=room).count()

    edit = tu.edited(original, "I'll take Scribe.\nVOTE: CHANGES")
    post_telegram(edit)
    post_telegram(edit)  # Telegram retried the webhook
    run_tasks()
    run_tasks()

    turn.refresh_from_db()
    assert turn.content == "I'll take Scribe.\nVOTE: CHANGES"
    assert [m.get("value") for m in turn.markers if m["type"] == "vote"] == ["CHANGES"]
    assert turn.data["edited"]["count"] == 1 and turn.data["source"]["messageId"] == str(original["message"]["message_id"])
    assert Observation.objects.filter(room=room, author_kind="human").count() == 1  # no new turn
    (audit,) = Invocation.objects.filter(room=room, component="human.chat_edit")
    assert audit.input["before"] == "I'll take Lead.\nVOTE: READY" and audit.input["seq"] == turn.seq
    (event,) = updated_events(pushed, "edited")
    assert event["turn"]["id"] == turn.pk and event["turn"]["seq"] == turn.seq
    assert event["turn"]["content"] == turn.content and event["turn"]["data"]["edited"]["count"] == 1
    assert RoomEvent.objects.filter(room=room).count() > seq_before
    # The other group hears the new text once, marked; the group it came from hears nothing.
    new = telegram.sent_to(-4002)[relayed_before:]
    assert [m["text"] for m in new] == ["Ben (edited): I'll take Scribe.\nVOTE: CHANGES"]
    assert new[0]["entities"] == [{"type": "bold", "offset": 0, "length": 3}]
    assert not [m for m in telegram.sent_to(-4001) if "(edited)" in m["text"]]


def test_an_edit_that_says_the_same_again_changes_nothing(telegram, post_telegram, run_tasks, room, owner, pushed):
    link_telegram(post_telegram, run_tasks, room, owner)
    original = tu.message(GROUP, BEN, "Friday works")
    post_telegram(original)
    run_tasks()
    post_telegram(tu.edited(original, "  Friday works  "))  # an edit of the entities only: the same text
    run_tasks()
    turn = Observation.objects.get(room=room, author_kind="human")
    assert turn.content == "Friday works" and "edited" not in turn.data
    assert not updated_events(pushed)
    assert not Invocation.objects.filter(room=room, component="human.chat_edit").exists()


def test_edits_of_messages_from_before_the_link_or_unknown_change_nothing(telegram, post_telegram, run_tasks, room, owner,
                                                                          pushed):
    post_telegram(tu.bot_added(GROUP, ANA))
    early = tu.message(GROUP, BEN, "before anyone linked this chat")
    post_telegram(early)
    run_tasks()
    link_telegram(post_telegram, run_tasks, room, owner)
    post_telegram(tu.edited(early, "I'll take Lead"))
    ghost = tu.message(GROUP, BEN, "never delivered to the bot")
    post_telegram(tu.edited(ghost, "I'll take Scribe"))
    notes = run_tasks()
    assert notes.count("edit: unknown message") == 2
    assert not Observation.objects.filter(room=room, author_kind="human").exists()
    assert not updated_events(pushed)


# --- Teams ---------------------------------------------------------------------------------------------


@pytest.fixture
def people(teams):
    return {"ana": teams.account(1, "Ana Lima"), "ben": teams.account(2, "Ben Okafor")}


def link_teams(teams, post_teams, run_tasks, room, owner, conv, by):
    post_teams(teams.bot_added(conv, by))
    code = do_create_room_code(room, owner)
    post_teams(teams.message(conv, by, f"facilitator start {code.code}"))
    run_tasks()


def bens_message(teams, post_teams, run_tasks, room, owner, people, text="I would take QA") -> dict:
    """A Teams group linked to the room by Ana, and Ben's message there, a turn of the room: the message's activity."""
    conv = teams.conversation("19:roles_chat@thread.v2", "groupChat")
    link_teams(teams, post_teams, run_tasks, room, owner, conv, people["ana"])
    original = teams.message(conv, people["ben"], text)
    post_teams(original)
    run_tasks()
    return original


def test_a_teams_edit_by_its_author_is_read_and_stored_once(teams, post_teams, run_tasks, room, owner, people, pushed):
    original = bens_message(teams, post_teams, run_tasks, room, owner, people)
    edit = teams.message_update(original, "I would take QA &amp; release")
    post_teams(edit)
    post_teams(edit)  # the connector retried
    run_tasks()
    # Stored apart from the original (same activity id), and once.
    assert InboundUpdate.objects.filter(platform="teams", payload__type="messageUpdate").count() == 1
    turn = Observation.objects.get(room=room, author_kind="human")
    assert turn.content == "I would take QA & release" and turn.data["edited"]["count"] == 1
    assert len(updated_events(pushed, "edited")) == 1


def test_a_teams_edit_by_someone_else_is_refused_and_changes_nothing(teams, post_teams, run_tasks, room, owner, people,
                                                                     pushed):
    original = bens_message(teams, post_teams, run_tasks, room, owner, people)
    post_teams(teams.message_update(original, "Ana takes QA", sender=people["ana"]))
    notes = run_tasks()
    assert "edit: refused: not the author" in notes
    turn = Observation.objects.get(room=room, author_kind="human")
    assert turn.content == "I would take QA" and "edited" not in turn.data
    assert not updated_events(pushed)
    (refusal,) = Invocation.objects.filter(room=room, component="human.chat_edit_refused")
    assert refusal.success is False and "Ana takes QA" not in str(refusal.input) + refusal.output
    assert not Delivery.objects.filter(room=room, text__contains="(edited)").exists()


# --- deletions (Teams) ----------------------------------------------------------------------------------


def test_a_teams_message_deleted_by_its_author_leaves_no_text_and_no_vote(teams, post_teams, run_tasks, room, owner,
                                                                            people, pushed, client):
    original = bens_message(teams, post_teams, run_tasks, room, owner, people, "my card number is 1234\nVOTE: READY")
    client.force_login(owner)
    votes = client.get(f"/api/discussions/{room.pk}/votes").json()["data"]["votes"]
    assert [v["value"] for v in votes] == ["READY"]
    gone = teams.message_delete(original)
    post_teams(gone)
    post_teams(gone)  # the connector retried
    notes = run_tasks()
    assert notes.count("delete: deleted") == 1
    turn = Observation.objects.get(room=room, author_kind="human")
    assert turn.content == "(deleted by its author)" and turn.markers == [] and turn.data["deleted"]["at"]
    assert client.get(f"/api/discussions/{room.pk}/votes").json()["data"]["votes"] == []
    (event,) = updated_events(pushed, "deleted")
    assert event["turn"]["content"] == "(deleted by its author)" and "1234" not in str(event)
    (audit,) = Invocation.objects.filter(room=room, component="human.chat_delete")
    assert audit.input["seq"] == turn.seq and "1234" not in str(audit.input) + audit.output

    # Brought back in Teams: the turn reads it again, and the vote counts again.
    post_teams(teams.message_update(original, "my card number is 1234\nVOTE: READY", event="undeleteMessage"))
    run_tasks()
    turn.refresh_from_db()
    assert turn.content.startswith("my card number") and "deleted" not in turn.data and turn.data["restored"]
    assert [v["value"] for v in client.get(f"/api/discussions/{room.pk}/votes").json()["data"]["votes"]] == ["READY"]
    assert len(updated_events(pushed, "restored")) == 1


def test_a_relay_not_sent_yet_of_a_deleted_message_is_not_sent(teams, post_teams, run_tasks, room, owner, people):
    conv = teams.conversation("19:roles_chat@thread.v2", "groupChat")
    other = teams.conversation("19:second_office@thread.v2", "groupChat")
    link_teams(teams, post_teams, run_tasks, room, owner, conv, people["ana"])
    link_teams(teams, post_teams, run_tasks, room, owner, other, people["ana"])
    original = teams.message(conv, people["ben"], "oops, wrong chat")
    post_teams(original)
    post_teams(teams.message_delete(original))
    from rooms import dispatch
    from channels_bridge.processing import process_update
    from tests.channels_bridge.conftest import committed

    # The worker processes both updates before the relay goes out.
    for name, args, _ in [t for t in dispatch.sent if t[0] == "bridge.process_update"]:
        committed(process_update, *args)
    run_tasks()
    relay = Delivery.objects.get(kind="relay", chat__external_id=other["id"])
    assert relay.status == "undeliverable" and "deleted" in relay.diagnostic
    assert not [a for a in teams.sent_to(other["id"]) if "wrong chat" in (a["activity"].get("text") or "")]


def test_an_edit_s_post_not_sent_yet_of_a_deleted_message_is_not_sent(teams, post_teams, run_tasks, room, owner, people):
    """The edit's "Name (edited): ..." post belongs to the turn too: deleted before it went out, it is not sent."""
    conv = teams.conversation("19:roles_chat@thread.v2", "groupChat")
    other = teams.conversation("19:second_office@thread.v2", "groupChat")
    link_teams(teams, post_teams, run_tasks, room, owner, conv, people["ana"])
    link_teams(teams, post_teams, run_tasks, room, owner, other, people["ana"])
    original = teams.message(conv, people["ben"], "the budget is fine")
    post_teams(original)
    run_tasks()  # relayed to the other chat
    assert [a for a in teams.sent_to(other["id"]) if "the budget is fine" in (a["activity"].get("text") or "")]
    post_teams(teams.message_update(original, "the secret budget code is 4711"))
    post_teams(teams.message_delete(original))
    from rooms import dispatch
    from channels_bridge.processing import process_update
    from tests.channels_bridge.conftest import committed

    # The worker processes the edit and the deletion before the edit's post goes out.
    for name, args, _ in [t for t in dispatch.sent if t[0] == "bridge.process_update"]:
        committed(process_update, *args)
    run_tasks()
    post = Delivery.objects.get(kind="post", chat__external_id=other["id"], text__contains="(edited)")
    assert post.status == "undeliverable" and "deleted" in post.diagnostic
    assert not [a for a in teams.sent_to(other["id"]) if "4711" in (a["activity"].get("text") or "")]


def test_a_teams_deletion_by_someone_else_is_refused_and_changes_nothing(teams, post_teams, run_tasks, room, owner, people,
                                                                          pushed):
    original = bens_message(teams, post_teams, run_tasks, room, owner, people)
    post_teams(teams.message_delete(original, sender=people["ana"]))
    assert "delete: refused: not the author" in run_tasks()
    turn = Observation.objects.get(room=room, author_kind="human")
    assert turn.content == "I would take QA" and "deleted" not in turn.data
    assert not updated_events(pushed)
    assert Invocation.objects.get(room=room, component="human.chat_delete_refused").success is False


# --- polling the transcript for changes --------------------------------------------------------------


def test_a_client_polling_turns_learns_of_an_older_turn_edited_only_when_it_asks(
        telegram, post_telegram, run_tasks, room, owner, client):
    """``GET .../turns?afterSeq=N`` answers as before; with ``changedAfterSeq`` it lists in ``meta.changed`` the turns up
    to N changed since (as they read now), and ``meta.changedUpTo`` is where to ask from next time."""
    link_telegram(post_telegram, run_tasks, room, owner)
    first, second = tu.message(GROUP, BEN, "I'll take Lead."), tu.message(GROUP, ANA, "I'll take Scribe.")
    for message in (first, second):
        post_telegram(message)
        run_tasks()
    ben, ana = Observation.objects.filter(room=room, author_kind="human").order_by("seq")
    client.force_login(owner)
    url = f"/api/discussions/{room.pk}/turns"
    page = client.get(url, {"afterSeq": 0, "changedAfterSeq": 0}).json()["meta"]
    assert page["changed"] == [] and page["changedHasMore"] is False
    after, since = page["lastSeq"], page["changedUpTo"]
    assert after >= ana.seq and since >= after

    post_telegram(tu.edited(first, "I'll take Scribe after all."))
    post_telegram(tu.edited(second, "Then I'll take Lead."))
    run_tasks()
    plain = client.get(url, {"afterSeq": after})
    assert plain.status_code == 200 and not {"changed", "changedUpTo", "changedHasMore"} & set(plain.json()["meta"])
    answer = client.get(url, {"afterSeq": after, "changedAfterSeq": since}).json()
    changed = answer["meta"]["changed"]
    assert [(t["id"], t["seq"], t["content"]) for t in changed] == [
        (ben.pk, ben.seq, "I'll take Scribe after all."), (ana.pk, ana.seq, "Then I'll take Lead.")]
    assert changed[0]["data"]["edited"]["count"] == 1
    assert all(t["seq"] > after for t in answer["data"])  # the new turns, as before
    # Asked again from where the answer said, nothing is listed twice.
    again = client.get(url, {"afterSeq": after, "changedAfterSeq": answer["meta"]["changedUpTo"]}).json()["meta"]
    assert again["changed"] == []
    # Changes are read at most ``limit`` at a time, oldest first.
    page = client.get(url, {"afterSeq": after, "changedAfterSeq": since, "limit": 1}).json()["meta"]
    assert [t["id"] for t in page["changed"]] == [ben.pk] and page["changedHasMore"] is True
    rest = client.get(url, {"afterSeq": after, "changedAfterSeq": page["changedUpTo"], "limit": 1}).json()["meta"]
    assert [t["id"] for t in rest["changed"]] == [ana.pk] and rest["changedHasMore"] is False
    # A change of a turn above afterSeq is not listed: that turn comes in data, as it reads now.
    low = client.get(url, {"afterSeq": ben.seq, "changedAfterSeq": since}).json()
    assert [t["id"] for t in low["meta"]["changed"]] == [ben.pk]
    assert next(t for t in low["data"] if t["id"] == ana.pk)["content"] == "Then I'll take Lead."
    # The answer is what the API schema describes.
    import jsonschema

    schema = client.get("/api/schema", HTTP_ACCEPT="application/json").json()
    node = schema["paths"]["/api/discussions/{id}/turns"]["get"]["responses"]["200"]["content"]["application/json"]
    jsonschema.Draft202012Validator({**node["schema"], "components": schema["components"]}).validate(answer)
    bad = client.get(url, {"afterSeq": after, "changedAfterSeq": "yesterday"})
    assert bad.status_code == 400 and "changedAfterSeq" in bad.json()["error"]["details"]
