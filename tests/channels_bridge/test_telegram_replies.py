"""Telegram: what answers someone's message replies to it (``reply_parameters``), in a forum in the topic it was written
in (``message_thread_id``); what the bot says to everyone stays a message to the group. Asserted on the requests the
fake Bot API received."""
import pytest

from facilitation.actions.comments import do_post_comment
from rooms.actions.chat import do_create_room_code
from rooms.models import Chat, Delivery, Observation, Room
from tests.channels_bridge.conftest import committed
from tests.facilitation.goals.test_run_in_the_meeting import (  # noqa: F401 (the throttle fixture)
    GROUP as RUN_GROUP, TG, Telegram, _runs_without_throttle, create_run, joined_in)
from tests.factories import make_discussion, make_facilitator, make_user
from tests.fakes import telegram_updates as tu

pytestmark = pytest.mark.django_db

ANA = tu.user(501, "Ana", "ana_s")
BEN = tu.user(502, "Ben", "benb")
GROUP = tu.group(-4101, "Roles")
FORUM = tu.forum(-1004102, "Launch forum")


@pytest.fixture(autouse=True)
def _the_floor_is_open(settings):
    """The facilitator's answers are these tests' subject, not the floor's per-minute limit."""
    settings.CONVENE = {**settings.CONVENE, "FACILITATION_MESSAGES_PER_MINUTE": 100}


@pytest.fixture
def owner(db):
    return make_user("olga")


@pytest.fixture
def room(owner):
    return make_discussion(owner)


def replying_to(update: dict) -> dict:
    """The ``reply_parameters`` of an answer to the message of ``update``, as the request carries them."""
    return {"message_id": update["message"]["message_id"], "allow_sending_without_reply": True}


def linked(post_telegram, run_tasks, room, owner, chat=GROUP, **where) -> dict:
    """Add the bot to ``chat`` and link it to ``room``; returns the ``/facilitator start`` update."""
    post_telegram(tu.bot_added(chat, ANA))
    start = tu.command(chat, ANA, f"/facilitator start {do_create_room_code(room, owner).code}", **where)
    post_telegram(start)
    run_tasks()
    return start


def ask(post_telegram, run_tasks, telegram, chat: dict, sender: dict, text: str, **where) -> tuple[dict, list[dict]]:
    """Post a message (a command when it starts with "/"); returns its update and what the bot sent to the chat."""
    before = len(telegram.sent_to(chat["id"]))
    update = tu.command(chat, sender, text, **where) if text.startswith("/") else tu.message(chat, sender, text, **where)
    post_telegram(update)
    run_tasks()
    return update, telegram.sent_to(chat["id"])[before:]


def test_command_answers_reply_to_the_command_and_everything_else_stays_a_message(telegram, post_telegram, run_tasks,
                                                                                    room, owner):
    """In a group without topics: the link's acknowledgement, status, help, a refused stop and a stop each reply to the
    command they answer; the greeting and a relayed turn answer nobody."""
    from facilitation.actions.lifecycle import do_start_discussion

    start = linked(post_telegram, run_tasks, room, owner)
    greeting, acknowledged = telegram.sent_to(GROUP["id"])
    assert "Hello, I am the Convene facilitator" in greeting["text"] and greeting["reply_parameters"] is None
    assert acknowledged["text"].startswith("Linked to the discussion")
    assert acknowledged["reply_parameters"] == replying_to(start) and acknowledged["reply_to"] == start["message"]["message_id"]
    assert acknowledged["message_thread_id"] is None
    chat = Chat.objects.get(platform="telegram", external_id=str(GROUP["id"]))
    assert Delivery.objects.get(text=acknowledged["text"]).card["answers"] == {
        "chatId": chat.pk, "messageId": str(start["message"]["message_id"]), "thread": ""}

    for sender, text, said in ((BEN, "/facilitator status", room.topic), (BEN, "/facilitator stat", "I do not know"),
                               (BEN, "/facilitator stop", "Only whoever linked this chat")):
        update, (answer,) = ask(post_telegram, run_tasks, telegram, GROUP, sender, text)
        assert said in answer["text"] and answer["reply_parameters"] == replying_to(update), text
        assert answer["message_thread_id"] is None

    do_start_discussion(room)
    committed(do_post_comment, room.pk, owner, "Please decide by Friday.")
    before = len(telegram.sent_to(GROUP["id"]))
    run_tasks()
    (relayed,) = telegram.sent_to(GROUP["id"])[before:]
    assert relayed["text"] == "olga: Please decide by Friday." and relayed["reply_parameters"] is None

    update, (stopped,) = ask(post_telegram, run_tasks, telegram, GROUP, ANA, "/facilitator stop")
    assert stopped["text"].startswith("Stopped:") and stopped["reply_parameters"] == replying_to(update)
    # A direct chat has one conversation: its answers are messages.
    update, (direct,) = ask(post_telegram, run_tasks, telegram, tu.private(BEN), BEN, "hello")
    assert "To link this account" in direct["text"] and direct["reply_parameters"] is None


def test_in_a_forum_the_answer_goes_to_the_topic_it_was_asked_in(telegram, post_telegram, run_tasks, room, owner):
    """A forum supergroup: an answer replies in the topic of the command (``message_thread_id``); a command in the
    General topic (no ``is_topic_message``) is answered there; what answers nobody goes to the General topic."""
    from facilitation.actions.lifecycle import do_start_discussion

    start = linked(post_telegram, run_tasks, room, owner, chat=FORUM, **tu.in_topic(3))
    greeting, acknowledged = telegram.sent_to(FORUM["id"])
    assert greeting["message_thread_id"] is None and greeting["reply_parameters"] is None
    assert acknowledged["message_thread_id"] == 3 and acknowledged["reply_parameters"] == replying_to(start)

    update, (answer,) = ask(post_telegram, run_tasks, telegram, FORUM, BEN, "/facilitator status", **tu.in_topic(7))
    assert room.topic in answer["text"]
    assert answer["message_thread_id"] == 7 and answer["reply_parameters"] == replying_to(update)
    chat = Chat.objects.get(platform="telegram", external_id=str(FORUM["id"]))
    assert Delivery.objects.filter(chat=chat, kind="reply").last().card["answers"] == {
        "chatId": chat.pk, "messageId": str(update["message"]["message_id"]), "thread": "7"}

    # A reply in the General topic carries the id of its reply thread, but it is no topic to post in.
    update, (answer,) = ask(post_telegram, run_tasks, telegram, FORUM, BEN, "/facilitator status",
                            message_thread_id=update["message"]["message_id"])
    assert answer["message_thread_id"] is None and answer["reply_parameters"] == replying_to(update)

    do_start_discussion(room)
    committed(do_post_comment, room.pk, owner, "Please decide by Friday.")
    before = len(telegram.sent_to(FORUM["id"]))
    run_tasks()
    (relayed,) = telegram.sent_to(FORUM["id"])[before:]
    assert relayed["message_thread_id"] is None and relayed["reply_parameters"] is None


def test_an_answer_to_a_deleted_message_is_sent_all_the_same(telegram, post_telegram, run_tasks, room, owner):
    """The asker deleted the command before the answer went out: Telegram sends a reply with
    ``allow_sending_without_reply`` as a message (without it the send fails)."""
    linked(post_telegram, run_tasks, room, owner)
    update = tu.command(GROUP, BEN, "/facilitator status")
    post_telegram(update)
    telegram.delete(GROUP["id"], update["message"]["message_id"])
    run_tasks()
    answer = telegram.sent_to(GROUP["id"])[-1]
    assert room.topic in answer["text"]
    assert answer["reply_parameters"] == replying_to(update) and answer["reply_to"] is None
    assert Delivery.objects.get(text=answer["text"]).status == "sent"


@pytest.mark.parametrize("gone, description", [("delete_topic", "Bad Request: message thread not found"),
                                               ("close_topic", "Bad Request: TOPIC_CLOSED")])
def test_an_answer_whose_topic_cannot_be_posted_in_goes_to_the_general_topic(telegram, post_telegram, run_tasks, room,
                                                                             owner, gone, description):
    """Telegram refuses a post into a deleted topic (or a closed one): the answer is sent to the group once more, as a
    message in its General topic, and reaches it."""
    linked(post_telegram, run_tasks, room, owner, chat=FORUM)
    getattr(telegram, gone)(FORUM["id"], 7)
    update, answers = ask(post_telegram, run_tasks, telegram, FORUM, BEN, "/facilitator status", **tu.in_topic(7))
    (refused,) = telegram.refused
    assert refused["description"] == description and refused["fields"]["message_thread_id"] == "7"
    (answer,) = answers
    assert room.topic in answer["text"] and answer["message_thread_id"] is None and answer["reply_parameters"] is None
    assert Delivery.objects.get(text=answer["text"]).status == "sent"


def test_a_long_answer_replies_with_its_first_part_and_keeps_its_topic(telegram, post_telegram, run_tasks, room, owner):
    """``/facilitator status`` in a room that ended with a long conclusion: the answer goes out in parts; the first
    replies to the command, every part is in the command's topic."""
    linked(post_telegram, run_tasks, room, owner, chat=FORUM)
    conclusion = "\n\n".join(f"Point {i}: " + "we keep the cache warm " * 25 for i in range(12))
    Room.objects.filter(pk=room.pk).update(status=Room.Status.CONCLUDED, conclusion=conclusion)
    update, parts = ask(post_telegram, run_tasks, telegram, FORUM, BEN, "/facilitator status", **tu.in_topic(5))
    assert len(parts) >= 2 and parts[0]["text"].startswith("The discussion")
    assert parts[0]["reply_parameters"] == replying_to(update)
    assert [p["reply_parameters"] for p in parts[1:]] == [None] * (len(parts) - 1)
    assert [p["message_thread_id"] for p in parts] == [5] * len(parts)


def test_the_ended_notice_replies_to_the_message_that_found_the_room_ended(telegram, post_telegram, run_tasks, room,
                                                                          owner):
    from facilitation.actions.lifecycle import do_start_discussion, do_stop_discussion

    linked(post_telegram, run_tasks, room, owner, chat=FORUM)
    do_start_discussion(room.pk)
    do_stop_discussion(room.pk)
    update, (notice,) = ask(post_telegram, run_tasks, telegram, FORUM, BEN, "Are we still on?", **tu.in_topic(11))
    assert "has ended" in notice["text"]
    assert notice["reply_parameters"] == replying_to(update) and notice["message_thread_id"] == 11


# --- a facilitation run -----------------------------------------------------------------------


def test_a_run_answers_people_with_replies_and_speaks_to_everyone_with_messages(telegram, post_telegram, run_tasks):
    """In a run: the status someone asked for, where the run stands when they addressed the facilitator, and a role
    given to someone it cannot place reply to their message (the relay of the facilitator's turn, which keeps the
    message in ``data.answers``); the handshake, the status message and the relay of someone's turn do not."""
    place = Telegram(telegram, post_telegram, run_tasks)
    _, _, room = joined_in(place)
    opened = telegram.sent_to(RUN_GROUP["id"])
    assert opened and all(m["reply_parameters"] is None for m in opened)  # the handshake and the status message
    assert any("your facilitator for this run" in m["text"] for m in opened)

    status, (told,) = ask(post_telegram, run_tasks, telegram, RUN_GROUP, TG["cy"], "/facilitator status")
    assert "Every role carries exactly one name" in told["text"] and told["reply_parameters"] == replying_to(status)
    chat = Chat.objects.get(platform="telegram", external_id=str(RUN_GROUP["id"]))
    said = Observation.objects.get(room=room, data__purpose="status")
    assert said.data["answers"] == {"chatId": chat.pk, "messageId": str(status["message"]["message_id"]), "thread": ""}

    addressed = tu.message(RUN_GROUP, TG["ben"], "@ConveneTestBot who are you?",
                           entities=[{"type": "mention", "offset": 0, "length": 15}])
    before = len(telegram.sent_to(RUN_GROUP["id"]))
    post_telegram(addressed)
    run_tasks()
    (answer,) = [m for m in telegram.sent_to(RUN_GROUP["id"])[before:] if "where we stand" in m["text"]]
    assert answer["reply_parameters"] == replying_to(addressed)

    given, sent = ask(post_telegram, run_tasks, telegram, RUN_GROUP, TG["ben"], "Let Dan be Lead")
    (unplaced,) = [m for m in sent if "Dan" in m["text"]]
    assert "know anyone called" in unplaced["text"] and unplaced["reply_parameters"] == replying_to(given)


def test_a_run_s_answer_replies_only_in_the_chat_it_was_asked_in(telegram, post_telegram, run_tasks):
    """A run in two groups: the status asked for in a forum's topic replies there; the other group gets it as a
    message."""
    make_facilitator("Convener", key="convener")
    owner = make_user("olga")
    data = create_run(owner)
    post_telegram(tu.bot_added(RUN_GROUP, TG["ana"]))
    post_telegram(tu.command(RUN_GROUP, TG["ben"], f"/facilitator start {data['joinCode']}"))
    run_tasks()
    room = Room.objects.get(pk=data["id"])
    post_telegram(tu.bot_added(FORUM, TG["ana"]))
    post_telegram(tu.command(FORUM, TG["ana"], f"/facilitator start {do_create_room_code(room, owner).code}"))
    run_tasks()
    asked_here = len(telegram.sent_to(RUN_GROUP["id"]))
    status, sent = ask(post_telegram, run_tasks, telegram, FORUM, TG["cy"], "/facilitator status", **tu.in_topic(9))
    (told,) = [m for m in sent if "Every role carries exactly one name" in m["text"]]
    assert told["reply_parameters"] == replying_to(status) and told["message_thread_id"] == 9
    (elsewhere,) = [m for m in telegram.sent_to(RUN_GROUP["id"])[asked_here:] if "Every role" in m["text"]]
    assert elsewhere["reply_parameters"] is None and elsewhere["message_thread_id"] is None


def test_while_the_general_topic_is_closed_the_bot_speaks_in_the_topic_it_was_linked_in(telegram, post_telegram, run_tasks,
                                                                                        room, owner):
    """A forum whose General topic is closed refuses every message without a topic ("TOPIC_CLOSED"): what the bot says
    to everyone goes to the topic the chat was linked in, and stays there for the message's other parts."""
    from facilitation.actions.lifecycle import do_start_discussion
    from rooms.models import ChatLink

    linked(post_telegram, run_tasks, room, owner, chat=FORUM, **tu.in_topic(3))
    assert ChatLink.objects.get(room=room, active=True).thread == "3"
    telegram.close_general(FORUM["id"])
    do_start_discussion(room)
    committed(do_post_comment, room.pk, owner, "Please decide by Friday.")
    before = len(telegram.sent_to(FORUM["id"]))
    run_tasks()
    (relayed,) = telegram.sent_to(FORUM["id"])[before:]
    assert "Please decide by Friday." in relayed["text"] and relayed["message_thread_id"] == 3
    assert [r["description"] for r in telegram.refused] == ["Bad Request: TOPIC_CLOSED"]
    delivery = Delivery.objects.filter(chat__external_id=str(FORUM["id"]), text__contains="Please decide by Friday.").get()
    assert delivery.status == "sent" and delivery.message_ids == [str(relayed["message_id"])]


def test_a_group_linked_in_its_closed_general_topic_is_told_nothing_and_the_delivery_says_why(telegram, post_telegram,
                                                                                              run_tasks, room, owner):
    """Linked in the General topic, which is closed since: there is no topic to fall back to, and the delivery is
    undeliverable with Telegram's reason (nothing is posted twice)."""
    from facilitation.actions.lifecycle import do_start_discussion

    linked(post_telegram, run_tasks, room, owner, chat=FORUM)
    telegram.close_general(FORUM["id"])
    do_start_discussion(room)
    committed(do_post_comment, room.pk, owner, "Please decide by Friday.")
    before = len(telegram.sent_to(FORUM["id"]))
    run_tasks()
    assert telegram.sent_to(FORUM["id"])[before:] == []
    delivery = Delivery.objects.filter(chat__external_id=str(FORUM["id"]), text__contains="Please decide by Friday.").get()
    assert delivery.status == "undeliverable" and "(the General topic, when it went to none)" in delivery.diagnostic


def test_a_file_goes_where_its_text_went(telegram):
    """The minutes after a run's closing text: into the text's topic; with none, to the group, or while the General
    topic is closed into the topic the chat was linked in."""
    from channels_bridge.telegram import client as tg
    from channels_bridge.telegram.send import _send_file

    bot, forum = tg.client(), str(FORUM["id"])
    _send_file(bot, forum, "minutes.docx", b"PK minutes", 5, lambda: 3)
    _send_file(bot, forum, "minutes.docx", b"PK minutes", None, lambda: 3)
    telegram.close_general(forum)
    _send_file(bot, forum, "minutes.docx", b"PK minutes", None, lambda: 3)
    assert [d["message_thread_id"] for d in telegram.documents] == [5, None, 3]
