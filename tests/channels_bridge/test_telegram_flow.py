"""Telegram end to end in one process: webhook -> processing -> rows and events -> deliveries -> the fake Bot API."""
import pytest

from facilitation.actions.comments import do_post_comment
from rooms.actions.chat import do_create_identity_code, do_create_room_code
from rooms.actions.deliveries import queue_direct
from rooms.models import Chat, ChatIdentity, ChatLink, ChatMember, Delivery, Invocation, Observation, RoomEvent
from tests.channels_bridge.conftest import committed
from tests.factories import make_discussion, make_user
from tests.fakes import telegram_updates as tu

pytestmark = pytest.mark.django_db

ANA = tu.user(501, "Ana", "ana_s")
BEN = tu.user(502, "Ben", "benb")
OTHER_BOT = tu.user(777, "Helper", "HelperBot", is_bot=True)
GROUP = tu.group(-4001, "Roles")


@pytest.fixture
def owner(db):
    return make_user("olga")


@pytest.fixture
def room(owner):
    return make_discussion(owner)


def linked(post_telegram, run_tasks, room, owner, chat=GROUP, by=ANA):
    """Add the bot to ``chat`` and link it to ``room`` with a code."""
    post_telegram(tu.bot_added(chat, by))
    code = do_create_room_code(room, owner)
    post_telegram(tu.command(chat, by, f"/facilitator start {code.code}"))
    run_tasks()
    return Chat.objects.get(platform="telegram", external_id=str(chat["id"]))


def test_the_bot_added_to_a_group_knows_who_invited_it(telegram, post_telegram, run_tasks):
    post_telegram(tu.bot_added(GROUP, ANA))
    run_tasks()
    chat = Chat.objects.get(platform="telegram", external_id="-4001")
    assert chat.bot_present and chat.title == "Roles" and chat.kind == "group"
    assert chat.added_by.external_id == "501" and chat.added_by.name == "Ana" and chat.added_by.username == "ana_s"
    assert ChatMember.objects.filter(chat=chat, identity=chat.added_by, via="inviter").exists()
    # It introduces itself (and says nothing is relayed until the group is linked).
    (greeting,) = telegram.sent_to(-4001)
    assert "/facilitator start CODE" in greeting["text"]
    assert Invocation.objects.filter(component="bridge.bot_added").exists()


def test_facilitator_start_code_links_the_group_and_a_used_code_is_refused(telegram, post_telegram, run_tasks, room, owner):
    chat = linked(post_telegram, run_tasks, room, owner)
    link = ChatLink.objects.get(chat=chat, active=True)
    assert link.room == room and link.linked_by.external_id == "501"
    assert "Linked to the discussion" in telegram.sent_to(-4001)[-1]["text"]
    assert RoomEvent.objects.filter(room=room, type="discussion:link").exists()
    # The same code in another group does nothing but say so.
    code = link.code.code
    post_telegram(tu.command(tu.group(-4002, "Other"), BEN, f"/facilitator@ConveneTestBot start {code}"))
    run_tasks()
    assert not ChatLink.objects.filter(chat__external_id="-4002").exists()
    assert "unknown, used or expired" in telegram.sent_to(-4002)[-1]["text"]


def test_startgroup_deep_link_and_commands_for_other_bots(telegram, post_telegram, run_tasks, room, owner):
    post_telegram(tu.bot_added(GROUP, ANA))
    code = do_create_room_code(room, owner)
    post_telegram(tu.command(GROUP, ANA, f"/start@OtherBot {code.code}"))  # not ours: an ordinary message
    run_tasks()
    assert not ChatLink.objects.exists()
    post_telegram(tu.command(GROUP, ANA, f"/start@ConveneTestBot {code.code}"))  # what ?startgroup=CODE sends
    run_tasks()
    assert ChatLink.objects.get().room == room


def test_people_s_messages_become_turns_once_and_are_not_echoed(telegram, post_telegram, run_tasks, room, owner, pushed):
    linked(post_telegram, run_tasks, room, owner)
    before = len(telegram.messages)
    update = tu.message(GROUP, BEN, "I can take the Lead role.\nVOTE: READY")
    post_telegram(update)
    post_telegram(update)  # Telegram retried the webhook
    run_tasks()
    (turn,) = Observation.objects.filter(room=room, author_kind="human")
    assert turn.author_name == "Ben" and turn.content.startswith("I can take")
    assert turn.markers and turn.markers[0]["type"] == "vote"
    assert turn.data["source"]["platform"] == "telegram"
    events = [p for t, p, _ in pushed if t == "discussion:turn" and p["turn"]["speaker"]["kind"] == "human"]
    assert len(events) == 1 and events[0]["turn"]["content"] == turn.content
    assert len(telegram.messages) == before  # never sent back to the chat it came from
    assert ChatMember.objects.filter(chat__external_id="-4001", identity__external_id="502", via="message").exists()


def test_a_linked_user_speaks_under_their_name(telegram, post_telegram, run_tasks, room, owner):
    linked(post_telegram, run_tasks, room, owner)
    ben_user = make_user("benjamin", first_name="Benjamin", last_name="B")
    code = do_create_identity_code(ben_user)
    post_telegram(tu.command(tu.private(BEN), BEN, f"/start {code.code}"))
    run_tasks()
    identity = ChatIdentity.objects.get(platform="telegram", external_id="502")
    assert identity.user == ben_user and identity.started_bot
    assert "benjamin" in telegram.sent_to(502)[-1]["text"]
    post_telegram(tu.message(GROUP, BEN, "Hello from Telegram"))
    run_tasks()
    turn = Observation.objects.get(room=room, author_kind="human")
    assert turn.author_name == "Benjamin B" and turn.data["source"]["userId"] == ben_user.pk


def test_a_browser_comment_reaches_the_chat_once(telegram, post_telegram, run_tasks, room, owner):
    from facilitation.actions.lifecycle import do_start_discussion

    chat = linked(post_telegram, run_tasks, room, owner)
    do_start_discussion(room)
    before = len(telegram.sent_to(-4001))
    obs = committed(do_post_comment, room.pk, owner, "Please decide by Friday.")
    run_tasks()
    run_tasks()
    new = telegram.sent_to(-4001)[before:]
    assert [m["text"] for m in new] == ["olga: Please decide by Friday."]
    assert new[0]["entities"] == [{"type": "bold", "offset": 0, "length": 4}]
    delivery = Delivery.objects.get(source=obs)
    assert delivery.status == "sent" and delivery.chat == chat and delivery.message_ids == [str(new[0]["message_id"])]
    assert RoomEvent.objects.filter(room=room, type="discussion:delivery", payload__delivery__id=delivery.pk,
                                    payload__delivery__status="sent").exists()


def test_a_relayed_turn_s_markdown_arrives_as_formatting(telegram, post_telegram, run_tasks, room, owner):
    from facilitation.actions.lifecycle import do_start_discussion

    linked(post_telegram, run_tasks, room, owner)
    do_start_discussion(room)
    before = len(telegram.sent_to(-4001))
    committed(do_post_comment, room.pk, owner, "## Plan 🎉\n\n- **Cache** the catalogue, *not* prices\n- see [the notes](https://example.com/n)\n\n`ttl=60`")
    run_tasks()
    (message,) = telegram.sent_to(-4001)[before:]
    assert message["text"] == "olga: Plan 🎉\n\n• Cache the catalogue, not prices\n• see the notes\n\nttl=60"

    def marked(kind):  # the text under each entity of this kind (offsets in UTF-16 code units)
        units = message["text"].encode("utf-16-le")
        return [(units[2 * e["offset"]:2 * (e["offset"] + e["length"])].decode("utf-16-le"), e.get("url"))
                for e in message["entities"] if e["type"] == kind]

    assert marked("bold") == [("olga", None), ("Plan 🎉", None), ("Cache", None)]
    assert marked("italic") == [("not", None)]
    assert marked("text_link") == [("the notes", "https://example.com/n")]
    assert marked("code") == [("ttl=60", None)]


def test_a_chat_message_relayed_to_another_chat_stays_plain_text(telegram, post_telegram, run_tasks, room, owner):
    from facilitation.actions.lifecycle import do_start_discussion

    other = tu.group(-4002, "Roles, second office")
    linked(post_telegram, run_tasks, room, owner)
    linked(post_telegram, run_tasks, room, owner, chat=other)
    do_start_discussion(room)
    before = len(telegram.sent_to(-4002))
    post_telegram(tu.message(GROUP, BEN, "2*3*4 is 24, and **this** is not Markdown\n# 1 on the list"))
    run_tasks()
    run_tasks()
    (message,) = telegram.sent_to(-4002)[before:]
    assert message["text"] == "Ben: 2*3*4 is 24, and **this** is not Markdown\n# 1 on the list"
    assert message["entities"] == [{"type": "bold", "offset": 0, "length": 3}]


def test_a_long_relayed_turn_keeps_its_formatting_in_every_part(telegram, post_telegram, run_tasks, room, owner):
    from facilitation.actions.lifecycle import do_start_discussion

    linked(post_telegram, run_tasks, room, owner)
    do_start_discussion(room)
    before = len(telegram.sent_to(-4001))
    paragraphs = [f"**Point {i}** " + ("word " * 300).strip() for i in range(6)]
    committed(do_post_comment, room.pk, owner, "\n\n".join(paragraphs))
    run_tasks()
    parts = telegram.sent_to(-4001)[before:]
    assert len(parts) == 3 and "**" not in "".join(p["text"] for p in parts)  # the fake refuses entities beyond a part's end
    bold = [p["text"].encode("utf-16-le")[2 * e["offset"]:2 * (e["offset"] + e["length"])].decode("utf-16-le")
            for p in parts for e in p["entities"] if e["type"] == "bold"]
    assert bold == ["olga", *[f"Point {i}" for i in range(6)]]


def test_own_and_other_bots_messages_are_not_input(telegram, post_telegram, run_tasks, room, owner):
    linked(post_telegram, run_tasks, room, owner)
    post_telegram(tu.message(GROUP, tu.BOT, "an echo of myself"))
    post_telegram(tu.message(GROUP, OTHER_BOT, "I am another bot talking"))
    run_tasks()
    assert not Observation.objects.filter(room=room, author_kind="human").exists()
    # Another bot that addresses ours is heard.
    text = "@ConveneTestBot the build passed"
    post_telegram(tu.message(GROUP, OTHER_BOT, text, entities=[{"type": "mention", "offset": 0, "length": 15}]))
    run_tasks()
    assert Observation.objects.get(room=room, author_kind="human").author_name == "Helper"


def test_a_long_message_is_split_on_paragraphs(telegram, run_tasks, settings):
    chat = Chat.objects.create(platform="telegram", external_id="-4001", title="Roles")
    paragraphs = [f"Paragraph {i}: " + ("word " * 300).strip() for i in range(6)]  # ~1.5k characters each
    text = "\n\n".join(paragraphs)
    from rooms.actions.deliveries import queue_post

    delivery = committed(queue_post, chat, text)
    run_tasks()
    parts = [m["text"] for m in telegram.sent_to(-4001)]
    assert len(parts) == 3 and all(len(p) <= 4096 for p in parts)
    assert "\n\n".join(parts) == text  # cut only between paragraphs
    delivery.refresh_from_db()
    assert delivery.status == "sent" and delivery.parts_sent == 3 and len(delivery.message_ids) == 3


def test_mentions_are_entities_with_utf16_offsets(telegram, run_tasks):
    from rooms.actions.deliveries import compose, queue_post

    chat = Chat.objects.create(platform="telegram", external_id="-4001", title="Roles")
    ben = ChatIdentity.objects.create(platform="telegram", external_id="502", name="Ben")
    text, mentions = compose("🎉🎉 Over to ", ben, ", then 👩‍💻 ", ben, ".")
    committed(queue_post, chat, text, mentions=mentions)
    run_tasks()
    (message,) = telegram.sent_to(-4001)
    entities = message["entities"]
    assert [e["type"] for e in entities] == ["text_mention", "text_mention"]
    raw = message["text"].encode("utf-16-le")
    for e in entities:
        assert raw[2 * e["offset"]: 2 * (e["offset"] + e["length"])].decode("utf-16-le") == "Ben"
        assert e["user"]["id"] == 502
    assert entities[0]["offset"] == 13  # "🎉🎉 Over to " is 11 characters but 13 UTF-16 units


def test_a_429_is_waited_out(telegram, run_tasks):
    import time

    from rooms.actions.deliveries import queue_post

    chat = Chat.objects.create(platform="telegram", external_id="-4001", title="Roles")
    telegram.fail_next(429, retry_after=1, method="sendMessage")
    delivery = committed(queue_post, chat, "Hello")
    started = time.monotonic()
    run_tasks()
    delivery.refresh_from_db()
    assert delivery.status == "sent" and delivery.attempts == 2
    assert time.monotonic() - started >= 0.95
    calls = [r for r in telegram.requests if r.path.endswith("/sendMessage")]
    assert len(calls) == 2 and calls[1].received_at - calls[0].received_at >= 0.95
    assert Invocation.objects.filter(component="bridge.delivery_retrying", error__contains="429").exists()


def test_a_direct_message_to_someone_who_never_started_the_bot_is_undeliverable(telegram, run_tasks, room):
    from django.contrib.auth.models import Group

    ana = make_user("ana")
    ChatIdentity.objects.create(platform="telegram", external_id="501", name="Ana", user=ana)
    management = Group.objects.create(name="management")
    management.user_set.add(ana, make_user("carl"))
    telegram.forbid(501)
    deliveries = committed(queue_direct, "role:management", "The roles are settled.", room=room)
    run_tasks()
    by_recipient = {d.recipient: Delivery.objects.get(pk=d.pk) for d in deliveries}
    ana_dm = by_recipient["ana (telegram)"]
    assert ana_dm.status == "undeliverable" and "403" in ana_dm.diagnostic and "started a chat" in ana_dm.diagnostic
    carl = by_recipient["carl"]
    assert carl.status == "undeliverable" and "no linked" in carl.diagnostic  # a holder with no chat account: visible too
    assert Invocation.objects.filter(component="bridge.delivery_undeliverable").exists()


def test_an_empty_role_is_a_visible_diagnostic(run_tasks, room):
    from django.contrib.auth.models import Group

    Group.objects.create(name="nobody-here")
    (delivery,) = committed(queue_direct, "role:nobody-here", "Report", room=room)
    assert delivery.status == "undeliverable" and "no current holder" in delivery.diagnostic


def test_supergroup_migration_keeps_the_link(telegram, post_telegram, run_tasks, room, owner):
    chat = linked(post_telegram, run_tasks, room, owner)
    post_telegram(tu.migrated_to(GROUP, ANA, -1001234))
    post_telegram(tu.migrated_from(tu.group(-1001234, "Roles", "supergroup"), -4001))
    run_tasks()
    chat.refresh_from_db()
    assert chat.external_id == "-1001234" and chat.previous_external_id == "-4001"
    assert ChatLink.objects.get(active=True).chat == chat
    post_telegram(tu.message(tu.group(-1001234, "Roles", "supergroup"), BEN, "still here"))
    run_tasks()
    assert Observation.objects.filter(room=room, content="still here").exists()


def test_a_send_to_a_migrated_group_follows_it(telegram, post_telegram, run_tasks, room, owner):
    from rooms.actions.deliveries import queue_post

    chat = linked(post_telegram, run_tasks, room, owner)
    telegram.migrate(-4001, -1009999)
    delivery = committed(queue_post, chat, "Still linked?")
    run_tasks()
    delivery.refresh_from_db()
    chat.refresh_from_db()
    assert delivery.status == "sent" and chat.external_id == "-1009999"
    assert telegram.sent_to(-1009999)[-1]["text"] == "Still linked?"
    assert ChatLink.objects.get(active=True).chat == chat


def test_status_and_stop_commands(telegram, post_telegram, run_tasks, room, owner):
    linked(post_telegram, run_tasks, room, owner)
    post_telegram(tu.command(GROUP, BEN, "/facilitator status"))
    run_tasks()
    status = telegram.sent_to(-4001)[-1]["text"]
    assert room.topic in status and "Chair" in status
    post_telegram(tu.command(GROUP, BEN, "/facilitator stop"))  # Ben neither linked it nor owns the room
    run_tasks()
    assert ChatLink.objects.filter(active=True).exists() and "Only" in telegram.sent_to(-4001)[-1]["text"]
    post_telegram(tu.command(GROUP, ANA, "/facilitator stop"))  # Ana linked it
    run_tasks()
    assert not ChatLink.objects.filter(active=True).exists()
    assert "Stopped" in telegram.sent_to(-4001)[-1]["text"]


def test_only_someone_who_may_stop_the_link_moves_a_group_from_its_live_room(telegram, post_telegram, run_tasks, room,
                                                                            owner, client):
    """A group linked to a live discussion stays there when a stranger sends another room's code: they are told why
    (naming the room), nothing is unlinked and the code stays usable. The room's owner (with a linked account), or
    whoever linked the chat, may move it; the room left behind learns it (audit row and link event), and its page's
    list of linked chats no longer shows the group."""
    from rooms.models import ChatCode, Room

    Room.objects.filter(pk=room.pk).update(name="Cache *plan*")
    chat = linked(post_telegram, run_tasks, Room.objects.get(pk=room.pk), owner)  # linked by Ana
    mallory = make_user("mallory")
    elsewhere = make_discussion(mallory)
    code = do_create_room_code(elsewhere, mallory)
    before = len(telegram.sent_to(-4001))
    post_telegram(tu.command(GROUP, BEN, f"/facilitator start {code.code}"))  # Ben: no account, did not link it
    run_tasks()
    (refusal,) = telegram.sent_to(-4001)[before:]
    assert refusal["text"].startswith("This chat is linked to the discussion \u201cCache *plan*\u201d, which is still going on")
    assert "Only whoever linked this chat, or the discussion's owner" in refusal["text"] and not refusal["entities"]
    assert "Linked to the discussion" not in refusal["text"]
    link = ChatLink.objects.get(chat=chat, active=True)
    assert link.room == room and not ChatLink.objects.filter(room=elsewhere).exists()
    assert ChatCode.objects.get(pk=code.pk).used_at is None  # not used up
    assert not Invocation.objects.filter(component="bridge.unlink_chat").exists()
    assert not RoomEvent.objects.filter(room=room, type="discussion:link", payload__state="unlinked").exists()

    # The room's owner, from a chat account linked to her user, may move the group.
    olga = ChatIdentity.objects.create(platform="telegram", external_id="503", name="Olga", user=owner)
    post_telegram(tu.command(GROUP, tu.user(503, "Olga", "olga_t"), f"/facilitator start {code.code}"))
    run_tasks()
    moved = ChatLink.objects.get(chat=chat, active=True)
    assert moved.room == elsewhere and moved.linked_by == olga
    assert "Linked to the discussion" in telegram.sent_to(-4001)[-1]["text"]
    (unlinked,) = Invocation.objects.filter(component="bridge.unlink_chat", room=room)
    assert unlinked.input["reason"] == "relinked" and unlinked.input["by"] == olga.key and unlinked.user == owner
    assert RoomEvent.objects.filter(room=room, type="discussion:link", payload__state="unlinked",
                                    payload__link__id=link.pk).exists()
    client.force_login(owner)  # the old room's page lists its linked chats from here (links.js), read again on that event
    assert client.get(f"/api/discussions/{room.pk}/links").json()["data"] == []

    # Now Olga linked it: Ana (who linked it to the first room) may not move it from Mallory's live room; Olga may.
    third = make_discussion(owner)
    code = do_create_room_code(third, owner)
    post_telegram(tu.command(GROUP, ANA, f"/facilitator start {code.code}"))
    run_tasks()
    assert ChatLink.objects.get(chat=chat, active=True).room == elsewhere
    assert "linked to the discussion \u201cTest discussion\u201d, which is still going on" in telegram.sent_to(-4001)[-1]["text"]
    post_telegram(tu.command(GROUP, tu.user(503, "Olga", "olga_t"), f"/facilitator start {code.code}"))
    run_tasks()
    assert ChatLink.objects.get(chat=chat, active=True).room == third


def test_a_refused_move_leaves_its_audit_row_and_nothing_else(telegram, post_telegram, run_tasks, room, owner):
    """A stranger's refused move of a group from its live room is a refusal of a write that matters: it leaves one
    audit row on the room the group stays with (who asked, from which chat, toward which room), and nothing else."""
    from rooms.models import ChatCode

    chat = linked(post_telegram, run_tasks, room, owner)  # linked by Ana
    mallory = make_user("mallory")
    elsewhere = make_discussion(mallory)
    code = do_create_room_code(elsewhere, mallory)
    link = ChatLink.objects.get(chat=chat, active=True)
    post_telegram(tu.command(GROUP, BEN, f"/facilitator start {code.code}"))
    run_tasks()
    (refused,) = Invocation.objects.filter(component="bridge.link_refused")
    ben = ChatIdentity.objects.get(platform="telegram", external_id="502")
    assert refused.room_id == room.pk and refused.success is False and refused.user is None
    assert refused.input == {"chat": chat.pk, "platform": "telegram", "by": ben.key, "link": link.pk, "to": elsewhere.pk,
                             "via": "room code", "refused": "link held"}
    assert "still going on" in refused.error
    assert ChatLink.objects.get(chat=chat, active=True).pk == link.pk and not ChatLink.objects.filter(room=elsewhere).exists()
    assert ChatCode.objects.get(pk=code.pk).used_at is None
    assert not Invocation.objects.filter(component__in=("bridge.link_chat", "bridge.unlink_chat"), room=elsewhere).exists()
    assert Invocation.objects.filter(component="bridge.unlink_chat").count() == 0


def test_a_refused_stop_leaves_its_audit_row_and_nothing_else(telegram, post_telegram, run_tasks, room, owner):
    """A refused ``facilitator stop`` is audited like a refused move: one row on the room the chat is linked to,
    naming who asked (their chat account, and their user when the account is linked), and nothing else changes:
    the link stays, no unlink row or link event, and the group hears the same refusal as before."""
    chat = linked(post_telegram, run_tasks, room, owner)  # linked by Ana
    link = ChatLink.objects.get(chat=chat, active=True)
    events = RoomEvent.objects.filter(room=room).count()
    mallory = make_user("mallory")  # signed in with a linked account, but neither linked the chat nor owns the room
    ChatIdentity.objects.create(platform="telegram", external_id="504", name="Mal", user=mallory)
    before = len(telegram.sent_to(-4001))
    post_telegram(tu.command(GROUP, BEN, "/facilitator stop"))
    post_telegram(tu.command(GROUP, tu.user(504, "Mal", "mal"), "/facilitator stop"))
    run_tasks()
    replies = [m["text"] for m in telegram.sent_to(-4001)[before:]]
    assert replies == ["Only whoever linked this chat, or the discussion's owner (with a linked account), can stop it."] * 2
    ben, mal = (ChatIdentity.objects.get(platform="telegram", external_id=i) for i in ("502", "504"))
    refusals = list(Invocation.objects.filter(component="bridge.stop_refused").order_by("pk"))
    assert [(r.room_id, r.success, r.user) for r in refusals] == [(room.pk, False, None), (room.pk, False, mallory)]
    assert [r.input for r in refusals] == [{"chat": chat.pk, "platform": "telegram", "by": who.key, "link": link.pk,
                                            "refused": "may not end the link"} for who in (ben, mal)]
    assert all(r.error == replies[0] for r in refusals)
    assert ChatLink.objects.get(chat=chat, active=True).pk == link.pk
    assert not Invocation.objects.filter(component="bridge.unlink_chat").exists()
    # The replies' deliveries are the only events: nothing of the link or the room changed.
    assert set(RoomEvent.objects.filter(room=room).order_by("seq").values_list("type", flat=True)[events:]) == {"discussion:delivery"}
    # Whoever may stop it is not refused: no such row.
    post_telegram(tu.command(GROUP, ANA, "/facilitator stop"))
    run_tasks()
    assert Invocation.objects.filter(component="bridge.stop_refused").count() == 2
    assert not ChatLink.objects.filter(active=True).exists()


def test_after_an_outage_a_report_waits_for_the_pace_instead_of_being_dropped(telegram, run_tasks, settings):
    """A report queued two hours ago (the worker was down) that the pace holds back still goes out once the pace allows:
    what a person needs is never dropped for its age, and it goes out once."""
    from datetime import timedelta

    from django.utils import timezone

    from channels_bridge import ratelimit
    from channels_bridge.sender import send_delivery

    settings.BRIDGES = {**settings.BRIDGES, "RATE_LIMITS": {**settings.BRIDGES["RATE_LIMITS"], "telegram_chat": (1, 0.002)}}
    ana = ChatIdentity.objects.create(platform="telegram", external_id="501", name="Ana", user=make_user("ana"), started_bot=True)
    (first,) = committed(queue_direct, "user:ana", "Your role: Lead")
    run_tasks()  # takes the bucket's one token: the next message to Ana waits about 500 s
    assert Delivery.objects.get(pk=first.pk).status == "sent"
    (report,) = committed(queue_direct, "user:ana", "Report: every role has one name")
    Delivery.objects.filter(pk=report.pk).update(created_at=timezone.now() - timedelta(hours=2))
    wait = committed(send_delivery, report.pk)
    assert wait is not None and wait > 0  # held back by the pace: given back to wait, not dropped for its age
    report.refresh_from_db()
    assert report.status == "queued" and report.attempts == 0 and report.diagnostic == ""
    ratelimit.reset_memory()  # the wait is over: the pace allows it now
    Delivery.objects.filter(pk=report.pk).update(next_attempt_at=timezone.now())
    assert committed(send_delivery, report.pk) is None
    assert [m["text"] for m in telegram.sent_to(501)] == ["Your role: Lead", "Report: every role has one name"]
    assert Delivery.objects.get(pk=report.pk).status == "sent"
    assert committed(send_delivery, report.pk) is None and len(telegram.sent_to(501)) == 2  # sent once
    assert Delivery.objects.get(pk=report.pk).identity_id == ana.pk


def test_the_code_of_the_room_the_group_is_in_changes_nothing(telegram, post_telegram, run_tasks, room, owner):
    """Anyone sending a code of the room the group is linked to already hears so: the code is not used up, the link
    stays as it was (no new link, no link event, no audit row of a link)."""
    from rooms.models import ChatCode

    chat = linked(post_telegram, run_tasks, room, owner)  # linked by Ana
    link = ChatLink.objects.get(chat=chat, active=True)
    code = do_create_room_code(room, owner)
    events = RoomEvent.objects.filter(room=room, type="discussion:link").count()
    links = Invocation.objects.filter(component="bridge.link_chat").count()
    before = len(telegram.sent_to(-4001))
    for who in (BEN, ANA):  # a stranger, then whoever linked it
        post_telegram(tu.command(GROUP, who, f"/facilitator start {code.code}"))
        run_tasks()
    replies = [m["text"] for m in telegram.sent_to(-4001)[before:]]
    assert len(replies) == 2 and all(r.startswith("This chat is linked to the discussion \u201cTest discussion\u201d "
                                                  "already; nothing changed.") for r in replies)
    assert ChatCode.objects.get(pk=code.pk).used_at is None
    assert list(ChatLink.objects.filter(chat=chat).values_list("pk", "active", "linked_by__external_id")) == [(link.pk, True, "501")]
    assert RoomEvent.objects.filter(room=room, type="discussion:link").count() == events
    assert Invocation.objects.filter(component="bridge.link_chat").count() == links
    # The code still links another group.
    post_telegram(tu.bot_added(tu.group(-4003, "Other"), BEN))
    post_telegram(tu.command(tu.group(-4003, "Other"), BEN, f"/facilitator start {code.code}"))
    run_tasks()
    assert ChatLink.objects.get(chat__external_id="-4003", active=True).room == room
    assert ChatCode.objects.get(pk=code.pk).used_at is not None


def test_unlinked_groups_record_nothing(telegram, post_telegram, run_tasks, room):
    post_telegram(tu.message(GROUP, BEN, "nobody links us"))
    run_tasks()
    assert not Observation.objects.filter(author_kind="human").exists()


def test_status_message_is_edited_in_place(telegram, run_tasks):
    from rooms.actions.deliveries import queue_status

    chat = Chat.objects.create(platform="telegram", external_id="-4001", title="Roles")
    committed(queue_status, chat, "Roles: 1 of 3 filled")
    run_tasks()
    committed(queue_status, Chat.objects.get(pk=chat.pk), "Roles: 2 of 3 filled")
    run_tasks()
    assert [m["text"] for m in telegram.sent_to(-4001)] == ["Roles: 2 of 3 filled"]  # the one message, edited
    assert [e["text"] for e in telegram.edits] == ["Roles: 2 of 3 filled"]


def test_chat_member_updates_keep_the_roster(telegram, post_telegram, run_tasks):
    """``chat_member`` (sent when the webhook asks for it) reports other people joining and leaving."""
    post_telegram(tu.bot_added(GROUP, ANA))
    post_telegram(tu.member_joined(GROUP, BEN, by=ANA))
    run_tasks()
    chat = Chat.objects.get(platform="telegram", external_id="-4001")
    ben = ChatMember.objects.get(chat=chat, identity__external_id="502")
    assert ben.present and ben.identity.name == "Ben"
    left = tu.update(chat_member={"chat": GROUP, "from": BEN, "date": 0,
                                  "old_chat_member": {"user": BEN, "status": "member"},
                                  "new_chat_member": {"user": BEN, "status": "left"}})
    post_telegram(left)
    run_tasks()
    ben.refresh_from_db()
    assert not ben.present
    # A restricted member who is still in the group stays on the roster; a repeat changes nothing.
    post_telegram(tu.update(chat_member={"chat": GROUP, "from": ANA, "date": 0,
                                         "old_chat_member": {"user": ANA, "status": "member"},
                                         "new_chat_member": {"user": ANA, "status": "restricted", "is_member": True}}))
    run_tasks()
    assert ChatMember.objects.get(chat=chat, identity__external_id="501").present


def test_a_deleted_status_message_is_posted_again_once_even_when_paced(telegram, run_tasks, settings):
    """The edit fails ("message to edit not found") and the pacing then says "wait": the dead message is
    forgotten before the wait, so the next try posts a new status instead of editing the dead one again."""
    from rooms.actions.deliveries import queue_status
    from tests.channels_bridge.conftest import FAST_LIMITS

    settings.BRIDGES = {**settings.BRIDGES, "RATE_LIMITS": {**FAST_LIMITS, "telegram_chat": (1, 20.0)}}
    chat = Chat.objects.create(platform="telegram", external_id="-4001", title="Roles")
    committed(queue_status, chat, "Roles: 1 of 3 filled")
    run_tasks()
    (first,) = telegram.sent_to(-4001)
    telegram.delete(-4001, first["message_id"])
    committed(queue_status, Chat.objects.get(pk=chat.pk), "Roles: 2 of 3 filled")
    run_tasks(max_rounds=20)
    (second,) = telegram.sent_to(-4001)
    assert second["text"] == "Roles: 2 of 3 filled" and telegram.edits == []
    delivery = Delivery.objects.filter(kind="status").order_by("-id").first()
    assert delivery.status == "sent" and delivery.message_ids == [str(second["message_id"])]
    assert Chat.objects.get(pk=chat.pk).status_message_id == str(second["message_id"])
    assert Invocation.objects.filter(component="bridge.status_message_forgotten",
                                     input__message=str(first["message_id"])).count() == 1
    committed(queue_status, Chat.objects.get(pk=chat.pk), "Roles: 3 of 3 filled")  # and it is edited in place again
    run_tasks(max_rounds=20)
    assert [e["text"] for e in telegram.edits] == ["Roles: 3 of 3 filled"] and len(telegram.sent_to(-4001)) == 1


def test_people_s_words_in_the_bot_s_answers_read_as_typed(telegram, post_telegram, run_tasks, room, owner):
    """A reply is plain text on Telegram (no parse mode, no entities): the room's name, topic and moderator read
    exactly as people chose them, however Markdown-like."""
    from rooms.models import Agent, Room

    name, topic = "[click](http://evil.example) 2*3*4", "Pick **one** _host_"
    Room.objects.filter(pk=room.pk).update(name=name, topic=topic)
    Agent.objects.filter(pk=room.moderator_id).update(name="Chair_*of*_the_day")
    linked(post_telegram, run_tasks, Room.objects.get(pk=room.pk), owner)
    hello = telegram.sent_to(-4001)[-1]
    assert f"Linked to the discussion \u201c{name}\u201d" in hello["text"] and not hello["entities"]
    post_telegram(tu.command(GROUP, BEN, "/facilitator status"))
    run_tasks()
    status = telegram.sent_to(-4001)[-1]
    max_rounds = Room.objects.get(pk=room.pk).max_rounds
    assert f"Moderated by Chair_*of*_the_day toward: {topic}\nDiscussion: {name} (draft, {max_rounds} rounds at most)" in status["text"]
    assert "Definition of done" not in status["text"] and "/facilitator stop ends the link" in status["text"]
    assert not status["entities"]
    post_telegram(tu.command(GROUP, ANA, "/facilitator stop"))
    run_tasks()
    stopped = telegram.sent_to(-4001)[-1]
    assert f"no longer linked to \u201c{name}\u201d" in stopped["text"] and not stopped["entities"]


def test_after_the_room_ended_the_chat_hears_it_once_and_status_tells_the_conclusion(telegram, post_telegram, run_tasks,
                                                                                      room, owner):
    """A stopped discussion stays linked: the first message after the end gets one notice (not one per message, not
    again when the update is processed a second time), status says it ended; concluded later, its conclusion still
    reaches the chat, and status then quotes it."""
    from channels_bridge.models import InboundUpdate
    from channels_bridge.processing import process_update
    from facilitation.actions.lifecycle import do_conclude_discussion, do_start_discussion, do_stop_discussion
    from facilitation.runs.leases import current
    from facilitation.runs.runner import run_step
    from facilitation.runs.scheduling import inline
    from rooms.models import Room

    chat = linked(post_telegram, run_tasks, room, owner)
    do_start_discussion(room.pk)
    do_stop_discussion(room.pk)
    turns = Observation.objects.filter(room=room).count()
    before = len(telegram.sent_to(-4001))
    post_telegram(tu.message(GROUP, BEN, "Are we still on?"))
    run_tasks()
    (notice,) = telegram.sent_to(-4001)[before:]
    assert notice["text"].startswith("The discussion \u201cTest discussion\u201d has ended (stopped), so nothing said here "
                                     "is relayed any more.")
    assert "/facilitator status" in notice["text"] and "/facilitator start CODE" in notice["text"]
    assert Observation.objects.filter(room=room).count() == turns  # nothing recorded
    delivery = Delivery.objects.get(room=room, chat=chat, card__notice="roomEnded")
    assert delivery.kind == "reply" and delivery.status == "sent"
    assert Invocation.objects.filter(component="bridge.room_ended_notice", room=room, input__chat=chat.pk).count() == 1
    assert RoomEvent.objects.filter(room=room, type="discussion:delivery", payload__delivery__id=delivery.pk).exists()
    # More messages, and the first one processed again (a worker died while it ran: the sweeper hands it back).
    post_telegram(tu.message(GROUP, ANA, "Hello?"))
    first = InboundUpdate.objects.filter(payload__message__text="Are we still on?").get()
    InboundUpdate.objects.filter(pk=first.pk).update(status=InboundUpdate.Status.RECEIVED)
    committed(process_update, first.pk)
    run_tasks()
    assert len(telegram.sent_to(-4001)) == before + 1
    assert Delivery.objects.filter(chat=chat, card__notice="roomEnded").count() == 1
    assert ChatLink.objects.get(chat=chat).active  # still linked: the chat's history stays with the room
    post_telegram(tu.command(GROUP, BEN, "/facilitator status"))  # anyone may ask
    run_tasks()
    status = telegram.sent_to(-4001)[-1]["text"]
    assert status.startswith("The discussion \u201cTest discussion\u201d has ended (stopped); nothing said here is relayed")
    assert "Topic: Should we cache?" in status and status.endswith("It ended without a conclusion.")
    # The owner concludes the stopped discussion: the conclusion is relayed to the chat, linked all along.
    with inline():
        committed(do_conclude_discussion, room.pk)
        for _ in range(10):
            if Room.objects.get(pk=room.pk).status != Room.Status.ACTIVE:
                break
            assert committed(run_step, room.pk, current(room.pk).step_seq).outcome == "committed"
    run_tasks()
    room.refresh_from_db()
    assert room.status == "concluded" and room.conclusion
    assert any("(conclusion)" in m["text"] for m in telegram.sent_to(-4001))
    said = len(telegram.sent_to(-4001))
    post_telegram(tu.message(GROUP, BEN, "Thanks!"))  # told once per chat and ended room: not again
    post_telegram(tu.command(GROUP, BEN, "/facilitator status"))
    run_tasks()
    (status,) = telegram.sent_to(-4001)[said:]
    assert status["text"].startswith("The discussion \u201cTest discussion\u201d has ended (concluded)")
    assert "\nConclusion:\n" in status["text"] and "**" not in status["text"]  # its Markdown, as Telegram formatting
    # Linking another discussion with a new code replaces the ended one.
    other = make_discussion(owner)
    code = do_create_room_code(other, owner)
    post_telegram(tu.command(GROUP, ANA, f"/facilitator start {code.code}"))
    run_tasks()
    assert ChatLink.objects.get(chat=chat, active=True).room == other


def test_a_nul_character_in_a_chat_message_is_dropped_before_it_is_stored(telegram, post_telegram, run_tasks, room, owner):
    """PostgreSQL refuses U+0000 in text and JSON: a message (or a name) holding one is stored and relayed without it,
    on every backend, instead of failing the webhook (which Telegram would then retry without end)."""
    import json

    from channels_bridge.models import InboundUpdate

    linked(post_telegram, run_tasks, room, owner)
    answer = post_telegram(tu.message(GROUP, tu.user(503, "Cy\x00", "cy_d"), "Lead\x00 for me\x00"))
    assert answer.status_code == 200
    run_tasks()
    (turn,) = Observation.objects.filter(room=room, author_kind="human")
    assert turn.content == "Lead for me" and turn.author_name == "Cy"
    assert ChatIdentity.objects.get(platform="telegram", external_id="503").name == "Cy"
    assert "\\u0000" not in json.dumps(InboundUpdate.objects.order_by("pk").last().payload)


def _sent(chat: dict, sender: dict, **content) -> dict:
    """A message carrying media (the Bot API's objects: file ids and sizes, never the file)."""
    return tu.update(message={"message_id": next(tu._message_ids), "from": sender, "chat": chat, "date": 1_700_000_000,
                              **content})


def test_a_photo_a_file_a_voice_message_and_a_sticker_are_turns_that_say_what_was_sent(telegram, post_telegram,
                                                                                       run_tasks, room, owner):
    """The file does not travel, so the turn names it: the caption first, then what was sent on a line of its own; a
    sticker is the emoji it stands for. A service message (a pinned message) is no turn."""
    linked(post_telegram, run_tasks, room, owner)
    photo = [{"file_id": "p1", "file_unique_id": "u1", "width": 90, "height": 90, "file_size": 1000}]
    post_telegram(_sent(GROUP, BEN, photo=photo, caption="Whiteboard from today"))
    post_telegram(_sent(GROUP, BEN, photo=photo))
    post_telegram(_sent(GROUP, ANA, document={"file_id": "d1", "file_unique_id": "u2", "file_name": "plan.pdf"}))
    post_telegram(_sent(GROUP, ANA, voice={"file_id": "v1", "file_unique_id": "u3", "duration": 3}))
    post_telegram(_sent(GROUP, BEN, sticker={"file_id": "s1", "file_unique_id": "u4", "width": 512, "height": 512,
                                             "is_animated": False, "is_video": False, "type": "regular", "emoji": "👍"}))
    post_telegram(_sent(GROUP, BEN, pinned_message={"message_id": 1, "chat": GROUP, "date": 1_700_000_000}))
    run_tasks()
    turns = Observation.objects.filter(room=room, author_kind="human").order_by("seq")
    assert [(t.author_name, t.content) for t in turns] == [
        ("Ben", "Whiteboard from today\n(a photo)"), ("Ben", "(a photo)"), ("Ana", "(a file: plan.pdf)"),
        ("Ana", "(a voice message)"), ("Ben", "👍")]


def test_an_unknown_facilitator_command_is_said_back_with_the_help_for_the_linked_chat(telegram, post_telegram,
                                                                                      run_tasks, room, owner):
    post_telegram(tu.bot_added(GROUP, ANA))
    post_telegram(tu.command(GROUP, BEN, "/facilitator stat"))
    run_tasks()
    unlinked = telegram.sent_to(-4001)[-1]["text"]
    assert unlinked.startswith("I do not know \u201c/facilitator stat\u201d. I relay this chat to a Convene discussion or "
                               "facilitation run and back.")
    linked(post_telegram, run_tasks, room, owner)
    post_telegram(tu.command(GROUP, BEN, "/facilitator@ConveneTestBot stat please"))
    post_telegram(tu.command(GROUP, BEN, "/facilitator"))
    run_tasks()
    unknown, bare = [m["text"] for m in telegram.sent_to(-4001)[-2:]]
    assert unknown == (f"I do not know \u201c/facilitator stat\u201d. This chat is linked to the discussion \u201c{room.name}\u201d. "
                       "/facilitator status says who moderates and toward what; /facilitator stop ends the link, for those "
                       "who may; /facilitator start CODE links this chat to another room with its code.")
    assert bare == unknown.split(". ", 1)[1]


def test_the_bot_added_to_a_group_greets_it_once_though_telegram_says_so_twice(telegram, post_telegram, run_tasks):
    """Telegram tells a bot it was added twice: a ``my_chat_member`` update and the service message listing the new
    members. The group hears one greeting; removed and added again, it hears one more."""
    post_telegram(tu.bot_added(GROUP, ANA))
    post_telegram(tu.new_members(GROUP, ANA, [tu.BOT]))
    run_tasks()
    assert len(telegram.sent_to(-4001)) == 1
    post_telegram(tu.bot_removed(GROUP, ANA))
    post_telegram(tu.new_members(GROUP, BEN, [tu.BOT]))
    post_telegram(tu.bot_added(GROUP, BEN))
    run_tasks()
    assert len(telegram.sent_to(-4001)) == 2
    assert Invocation.objects.filter(component="bridge.bot_added").count() == 4


def test_a_linked_account_writing_to_the_bot_directly_is_not_told_to_link_it(telegram, post_telegram, run_tasks):
    post_telegram(tu.message(tu.private(BEN), BEN, "confirmed"))
    run_tasks()
    assert telegram.sent_to(502)[-1]["text"].startswith("Hello! To link this account to your Convene user")
    code = do_create_identity_code(make_user("benjamin"))
    post_telegram(tu.command(tu.private(BEN), BEN, f"/start {code.code}"))
    post_telegram(tu.message(tu.private(BEN), BEN, "confirmed"))
    run_tasks()
    assert telegram.sent_to(502)[-1]["text"] == (
        "Hello! This account speaks as benjamin in Convene. I do not read direct messages: say what you want a discussion "
        "or run to hear in its group. Reports for you arrive here.")


def test_a_bare_start_in_a_linked_group_says_what_it_is_linked_to(telegram, post_telegram, run_tasks, room, owner):
    post_telegram(tu.bot_added(GROUP, ANA))
    post_telegram(tu.command(GROUP, BEN, "/start"))
    run_tasks()
    assert telegram.sent_to(-4001)[-1]["text"] == ("Send /facilitator start CODE with the code from the owner of the "
                                                   "discussion or run.")
    linked(post_telegram, run_tasks, room, owner)
    post_telegram(tu.command(GROUP, BEN, "/start@ConveneTestBot"))
    run_tasks()
    assert telegram.sent_to(-4001)[-1]["text"].startswith(f"This chat is linked to the discussion \u201c{room.name}\u201d. ")
    assert ChatLink.objects.get(chat__external_id="-4001", active=True).room == room


def test_help_in_a_group_whose_room_has_ended_says_it_ended(telegram, post_telegram, run_tasks, room, owner):
    from rooms.models import Room

    linked(post_telegram, run_tasks, room, owner)
    Room.objects.filter(pk=room.pk).update(status="stopped")
    post_telegram(tu.command(GROUP, BEN, "/facilitator what"))
    run_tasks()
    assert telegram.sent_to(-4001)[-1]["text"].startswith(
        f"I do not know \u201c/facilitator what\u201d. The discussion \u201c{room.name}\u201d has ended (stopped), so nothing "
        "said here is relayed any more.")


def test_an_error_answer_is_told_apart_from_telegram_not_being_reached(telegram, settings):
    """A 5xx is Telegram answering with an error; "could not be reached" is kept for a connection that failed."""
    from channels_bridge.sender import send_delivery
    from rooms.actions.deliveries import queue_post

    chat = Chat.objects.create(platform="telegram", external_id="-4001", title="Roles")
    for status in (500, 502, 503):
        telegram.fail_next(status, method="sendMessage")
        delivery = committed(queue_post, chat, f"Hello {status}")
        committed(send_delivery, delivery.pk)
        delivery.refresh_from_db()
        assert delivery.status != "sent" and f"Telegram answered with an error {status}" in delivery.diagnostic
        assert "could not be reached" not in delivery.diagnostic
        Delivery.objects.filter(pk=delivery.pk).delete()
    settings.BRIDGES = {**settings.BRIDGES, "TELEGRAM_API_BASE": "http://127.0.0.1:9"}  # nothing listens there
    delivery = committed(queue_post, chat, "Hello again")
    committed(send_delivery, delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status != "sent" and "Telegram could not be reached" in delivery.diagnostic
