"""Teams channels have threads: an answer to someone's message goes into the thread the message was written in (a
reply to its activity in the conversation that names the thread), while what nobody asked for (relayed turns, the
status card, a greeting) is posted to the channel. Group and personal chats have no threads: every message goes to the
chat, as before."""
import pytest

from facilitation.actions.comments import do_post_comment
from rooms.actions.chat import do_create_room_code
from rooms.actions.deliveries import queue_status
from rooms.models import Chat, Delivery, Observation
from tests.channels_bridge.conftest import committed
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db

CHANNEL = "19:general0123@thread.tacv2"


@pytest.fixture
def people(teams):
    return {"ana": teams.account(1, "Ana Lima"), "ben": teams.account(2, "Ben Okafor")}


@pytest.fixture
def channel(teams, post_teams, people):
    """A team's channel the bot was added to by Ana; ``say(root, sender, text)`` posts in the thread of ``root``."""
    data = {"tenant": {"id": teams.tenant_id}, "team": {"id": CHANNEL}, "channel": {"id": CHANNEL}}
    post_teams({**teams.bot_added(teams.conversation(CHANNEL, "channel"), people["ana"]), "channelData": data})

    def say(root: str | None, sender: dict, text: str, **kwargs) -> dict:
        conversation = f"{CHANNEL};messageid={root}" if root else CHANNEL
        activity = teams.message(teams.conversation(conversation, "channel"), sender, text, **kwargs)
        return {**activity, "channelData": data}

    return say


def _thread(root: str) -> str:
    return f"{CHANNEL};messageid={root}"


def _linked_discussion(teams, post_teams, run_tasks, people, channel):
    owner = make_user("olga")
    room = make_discussion(owner)
    code = committed(do_create_room_code, room, owner)
    start = channel("1700000000001", people["ana"], f"facilitator start {code.code}")
    post_teams(start)
    run_tasks()
    return room, start


def test_a_command_asked_in_a_thread_is_answered_in_that_thread(teams, post_teams, run_tasks, people, channel):
    """The link's acknowledgement and ``facilitator status`` are replies to the messages that asked, in their threads
    (``POST .../conversations/<channel>;messageid=<root>/activities/<the message's id>``); the greeting nobody asked
    for is a post in the channel."""
    room, start = _linked_discussion(teams, post_teams, run_tasks, people, channel)
    status = channel("1700000000099", people["ben"], "facilitator status")
    post_teams(status)
    run_tasks()
    (greeting,) = teams.sent_to(CHANNEL)
    assert "Nothing here is relayed" in greeting["activity"]["text"] and greeting["replyTo"] is None
    (linked,) = teams.sent_to(_thread("1700000000001"))
    assert linked["replyTo"] == start["id"] and linked["activity"]["replyToId"] == start["id"]
    assert "Linked to the discussion" in linked["activity"]["text"]
    (answer,) = teams.sent_to(_thread("1700000000099"))
    assert answer["replyTo"] == status["id"] and room.topic in answer["activity"]["text"]
    reply = Delivery.objects.get(kind="reply", text__contains=room.topic)
    assert reply.card["answers"] == {"chatId": reply.chat_id, "messageId": status["id"], "thread": "1700000000099"}


def test_a_thread_named_only_by_reply_to_id_is_answered_there(teams, post_teams, run_tasks, people, channel):
    """A channel message whose conversation id names no thread but whose ``replyToId`` is the thread's root post."""
    room, _ = _linked_discussion(teams, post_teams, run_tasks, people, channel)
    asked = {**channel(None, people["ben"], "facilitator status"), "replyToId": "1700000000555"}
    post_teams(asked)
    run_tasks()
    (answer,) = teams.sent_to(_thread("1700000000555"))
    assert answer["replyTo"] == asked["id"] and room.topic in answer["activity"]["text"]


def test_what_nobody_asked_for_is_posted_to_the_channel(teams, post_teams, run_tasks, people, channel):
    """A browser comment relayed, a chat message's turn relayed elsewhere and the status card go to the channel, even
    after people wrote in threads."""
    room, _ = _linked_discussion(teams, post_teams, run_tasks, people, channel)
    post_teams(channel("1700000000099", people["ben"], "We should cache the index", mention_bot=False))
    run_tasks()
    assert Observation.objects.get(room=room, author_kind="human").data["source"]["thread"] == "1700000000099"
    room.status = "active"
    room.save(update_fields=["status"])
    committed(do_post_comment, room.pk, room.owner, "Agreed, with a TTL")
    chat = Chat.objects.get(platform="teams", external_id=CHANNEL)
    committed(queue_status, chat, "Where we stand", room=room)
    run_tasks()
    relayed = [a for a in teams.sent_to(CHANNEL) if "Agreed, with a TTL" in (a["activity"].get("text") or "")]
    assert len(relayed) == 1 and relayed[0]["replyTo"] is None
    assert any(a["activity"].get("attachments") for a in teams.sent_to(CHANNEL))
    assert teams.sent_to(_thread("1700000000099")) == []


def test_an_answer_whose_thread_is_gone_is_posted_to_the_channel(teams, post_teams, run_tasks, people, channel):
    """Teams answers 404 when the thread's post was deleted: the answer still reaches the channel, once."""
    room, _ = _linked_discussion(teams, post_teams, run_tasks, people, channel)
    post_teams(channel("1700000000099", people["ben"], "facilitator status"))
    teams.fail_next(404)
    run_tasks()
    answers = [a for a in teams.activities if room.topic in (a["activity"].get("text") or "")]
    assert len(answers) == 1 and answers[0]["conversation"] == CHANNEL and answers[0]["replyTo"] is None
    assert Delivery.objects.get(kind="reply", text__contains=room.topic).status == "sent"


def test_a_group_chat_gets_its_answers_as_messages_to_the_chat(teams, post_teams, run_tasks, people):
    """Group chats have no threads: the answer goes to the conversation, as a message, and carries no thread."""
    group = teams.conversation("19:roles_chat@thread.v2", "groupChat")
    post_teams(teams.bot_added(group, people["ana"]))
    post_teams({**teams.message(group, people["ben"], "facilitator status"), "replyToId": "1700000000777"})
    run_tasks()
    answer = teams.sent_to(group["id"])[-1]
    assert "No facilitation is active here" in answer["activity"]["text"] and answer["replyTo"] is None
    assert "replyToId" not in answer["activity"]
    assert all(a["conversation"] == group["id"] for a in teams.activities)
    assert "answers" not in Delivery.objects.filter(kind="reply").last().card


def test_the_first_message_after_the_end_is_told_so_in_its_thread(teams, post_teams, run_tasks, people, channel):
    """The notice that the room has ended answers the message that found it so."""
    room, _ = _linked_discussion(teams, post_teams, run_tasks, people, channel)
    room.status = "concluded"
    room.save(update_fields=["status"])
    late = channel("1700000000123", people["ben"], "Anyone there?", mention_bot=False)
    post_teams(late)
    run_tasks()
    (notice,) = teams.sent_to(_thread("1700000000123"))
    assert notice["replyTo"] == late["id"] and "has ended" in notice["activity"]["text"]
    assert not Observation.objects.filter(room=room, author_kind="human").exists()


def test_a_run_answers_people_in_their_threads_and_speaks_to_everyone_in_the_channel(teams, post_teams, run_tasks, people):
    """In a facilitation run, ``facilitator status`` and a question put to the facilitator are answered in the
    asker's thread (the relay of the facilitator's turn to the chat asked in); the handshake and the status card, said
    to everyone, are posts in the channel."""
    from tests.channels_bridge.test_teams import _run_in

    room = _run_in(teams, post_teams, run_tasks, teams.conversation(_thread("1700000000001"), "channel"), people)
    asked = teams.message(teams.conversation(_thread("1700000000300"), "channel"), people["ben"], "who are you?")
    post_teams(asked)
    run_tasks()
    status = teams.message(teams.conversation(_thread("1700000000200"), "channel"), people["ben"], "facilitator status")
    post_teams(status)
    run_tasks()
    (answer,) = teams.sent_to(_thread("1700000000300"))
    assert answer["replyTo"] == asked["id"] and "here is where we stand" in answer["activity"]["text"]
    (told,) = teams.sent_to(_thread("1700000000200"))
    assert told["replyTo"] == status["id"] and "Every role carries exactly one name" in told["activity"]["text"]
    said = Observation.objects.get(room=room, data__purpose="status")
    assert said.data["answers"] == {"chatId": Chat.objects.get(external_id=CHANNEL).pk, "messageId": status["id"],
                                    "thread": "1700000000200"}
    in_channel = teams.sent_to(CHANNEL)
    assert any("your facilitator for this run" in (a["activity"].get("text") or "") for a in in_channel)  # handshake
    assert any(a["activity"].get("attachments") for a in in_channel)  # the status card
    assert teams.sent_to(_thread("1700000000001")) == []  # the run opened with its handshake, to everyone


def test_a_role_given_to_someone_unknown_is_answered_in_the_thread_it_was_given_in(teams, post_teams, run_tasks, people):
    from tests.channels_bridge.test_teams import _run_in

    _run_in(teams, post_teams, run_tasks, teams.conversation(_thread("1700000000001"), "channel"), people)
    given = teams.message(teams.conversation(_thread("1700000000400"), "channel"), people["ben"], "Let Dan be Lead",
                          mention_bot=False)
    post_teams(given)
    run_tasks()
    (answer,) = teams.sent_to(_thread("1700000000400"))
    assert answer["replyTo"] == given["id"] and "Dan" in answer["activity"]["text"]


def test_only_the_copy_in_the_asker_s_channel_is_a_thread_reply(teams):
    """A facilitator's answer is relayed to every linked chat: in the channel it was asked in it replies in the thread,
    in another channel it is a post; a reply marked for a thread in a group chat is a message to the chat."""
    from channels_bridge.teams.send import answered
    from rooms.models import Room

    owner = make_user("olga")
    room = make_discussion(owner)
    asked_in = Chat.objects.create(platform="teams", external_id=CHANNEL, kind="channel", platform_type="channel")
    other = Chat.objects.create(platform="teams", external_id="19:other@thread.tacv2", kind="channel",
                                platform_type="channel")
    group = Chat.objects.create(platform="teams", external_id="19:group@thread.v2", kind="group", platform_type="groupChat")
    answers = {"chatId": asked_in.pk, "messageId": "1700000000201", "thread": "1700000000200"}
    turn = Observation.objects.create(room=room, seq=Room.objects.get(pk=room.pk).seq + 1, author_kind="facilitator",
                                      kind="message", content="Where we stand", data={"purpose": "status", "answers": answers})

    def relay(chat):
        return Delivery(kind="relay", platform="teams", chat=chat, source=turn, text="Facilitator: Where we stand")

    assert answered(relay(asked_in)) == (f"{CHANNEL};messageid=1700000000200", "1700000000201")
    assert answered(relay(other)) is None
    assert answered(Delivery(kind="reply", platform="teams", chat=group, card={"answers": {**answers, "chatId": group.pk}})) is None
