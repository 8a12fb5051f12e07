"""End to end through the real worker path: webhooks -> Redis -> a Celery worker (queue "bridge") ->
rows, events and deliveries -> the fake Telegram Bot API and Bot Framework, with the real
Redis token buckets."""
import json
import time

import pytest
from django.test import Client

from channels_bridge.models import InboundUpdate
from rooms.actions.chat import do_create_room_code
from rooms.models import Chat, ChatIdentity, ChatLink, Delivery, Observation, RoomEvent
from tests.channels_bridge.conftest import SECRET
from tests.factories import make_discussion, make_user
from tests.fakes import telegram_updates as tu
from tests.fakes.botframework import FakeBotFramework
from tests.fakes.telegram_server import FakeTelegram
from tests.waiting import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

ANA = tu.user(501, "Ana", "ana_s")
BEN = tu.user(502, "Ben", "benb")
GROUP = tu.group(-4001, "Roles")
TOKEN = "123456:TEST"


@pytest.fixture
def fakes():
    telegram, teams = FakeTelegram(token=TOKEN), FakeBotFramework()
    yield telegram, teams
    telegram.stop()
    teams.stop()


@pytest.fixture
def stack(fakes, stack_factory, settings):
    telegram, teams = fakes
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": telegram.root, "TELEGRAM_WEBHOOK_SECRET": SECRET, **teams.env()}
    settings.TASK_DISPATCH = "celery"
    settings.BRIDGES = {**settings.BRIDGES, "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": telegram.root,
                        "TELEGRAM_WEBHOOK_SECRET": SECRET, "RATE_LIMIT_BACKEND": "redis",
                        "RATE_LIMITS": {"telegram_chat": (1, 1.0), "telegram_group": (5, 0.25), "telegram_global": (30, 30.0),
                                        "teams_conversation": (7, 2.0)},
                        **teams.settings()}
    return stack_factory(extra_env=env)


def post_telegram(update, secret=SECRET):
    headers = {"HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN": secret} if secret else {}
    return Client().post("/bridge/telegram/webhook", data=json.dumps(update), content_type="application/json", **headers)


def post_teams(teams, activity, authorization=None):
    return Client().post("/bridge/teams/messages", data=json.dumps(activity), content_type="application/json",
                         HTTP_AUTHORIZATION=authorization or teams.authorization())


def test_telegram_group_end_to_end(stack, fakes):
    from facilitation.actions.comments import do_post_comment
    from rooms.actions.deliveries import queue_direct, queue_post

    telegram, _ = fakes
    owner = make_user("olga")
    room = make_discussion(owner)

    # The bot is added and knows who invited it.
    assert post_telegram(tu.bot_added(GROUP, ANA)).status_code == 200
    chat = wait_for(lambda: Chat.objects.filter(platform="telegram", external_id="-4001", added_by__isnull=False).first())
    assert chat.added_by.name == "Ana"

    # A forged webhook changes nothing.
    updates = InboundUpdate.objects.count()
    assert post_telegram(tu.message(GROUP, BEN, "forged"), secret="not-the-secret").status_code == 403
    assert InboundUpdate.objects.count() == updates

    # /facilitator start CODE links the group.
    code = do_create_room_code(room, owner)
    post_telegram(tu.command(GROUP, ANA, f"/facilitator start {code.code}"))
    wait_for(lambda: ChatLink.objects.filter(chat=chat, room=room, active=True).exists())
    wait_for(lambda: any("Linked to" in m["text"] for m in telegram.sent_to(-4001)))

    # People's messages appear in the room, once, and are not echoed.
    update = tu.message(GROUP, BEN, "Ben here: I take QA.")
    post_telegram(update)
    post_telegram(update)
    turn = wait_for(lambda: Observation.objects.filter(room=room, author_kind="human").first())
    assert turn.author_name == "Ben" and turn.content == "Ben here: I take QA."
    assert RoomEvent.objects.filter(room=room, type="discussion:turn", payload__turn__id=turn.pk).exists()

    # A browser comment appears in the chat, once.
    from rooms.models import Room

    Room.objects.filter(pk=room.pk).update(status=Room.Status.PAUSED)
    do_post_comment(room.pk, owner, "Decide by Friday, please.")
    wait_for(lambda: any(m["text"] == "olga: Decide by Friday, please." for m in telegram.sent_to(-4001)))
    time.sleep(1.5)
    texts = [m["text"] for m in telegram.sent_to(-4001)]
    assert texts.count("olga: Decide by Friday, please.") == 1
    assert not any("Ben here" in t for t in texts)

    # A long message is split on paragraphs.
    long_text = "\n\n".join(f"Part {i} " + "x" * 3000 for i in range(4))  # two never fit in 4,096
    long = queue_post(chat, long_text)
    wait_for(lambda: Delivery.objects.get(pk=long.pk).status == "sent", timeout=60)
    parts = [m["text"] for m in telegram.sent_to(-4001) if m["text"].startswith("Part ")]
    assert len(parts) == 4 and "\n\n".join(parts) == long_text

    # A 429 is waited out.
    telegram.fail_next(429, retry_after=2, method="sendMessage")
    slow = queue_post(chat, "after the pause")
    wait_for(lambda: Delivery.objects.get(pk=slow.pk).status == "sent", timeout=60)
    calls = [r for r in telegram.requests if r.path.endswith("/sendMessage")]
    refused_at = calls[-2].received_at
    assert calls[-1].received_at - refused_at >= 1.9
    assert Delivery.objects.get(pk=slow.pk).attempts == 2

    # A direct message to someone who never started the bot is undeliverable.
    ben = make_user("ben")
    ChatIdentity.objects.filter(platform="telegram", external_id="502").update(user=ben)
    telegram.forbid(502)
    (dm,) = queue_direct("user:ben", "Your role: QA")
    dm = wait_for(lambda: Delivery.objects.filter(pk=dm.pk, status="undeliverable").first(), timeout=60)
    assert "403" in dm.diagnostic

    # A supergroup migration keeps the link.
    post_telegram(tu.migrated_to(GROUP, ANA, -1005555))
    wait_for(lambda: Chat.objects.filter(pk=chat.pk, external_id="-1005555").exists())
    post_telegram(tu.message(tu.group(-1005555, "Roles", "supergroup"), ANA, "from the supergroup"))
    wait_for(lambda: Observation.objects.filter(room=room, content="from the supergroup").exists())
    assert ChatLink.objects.get(active=True).chat_id == chat.pk


def test_teams_group_end_to_end(stack, fakes):
    from facilitation.actions.comments import do_post_comment
    from rooms.actions.deliveries import queue_direct
    from rooms.models import Room

    _, teams = fakes
    owner = make_user("olga")
    room = make_discussion(owner)
    conv = teams.conversation("19:roles@thread.v2", "groupChat")
    ana, ben = teams.account(1, "Ana Lima"), teams.account(2, "Ben Okafor")
    teams.members[conv["id"]] = [ana, ben]

    assert post_teams(teams, teams.bot_added(conv, ana)).status_code == 200
    chat = wait_for(lambda: Chat.objects.filter(platform="teams", added_by__isnull=False).first())
    assert chat.added_by.name == "Ana Lima"
    wait_for(lambda: chat.members.count() == 2)

    # Forged: a token signed by a key the JWKS does not publish.
    from tests.fakes.botframework import SigningKey

    before = InboundUpdate.objects.count()
    forged = post_teams(teams, teams.message(conv, ben, "forged"), authorization=f"Bearer {teams.sign(key=SigningKey())}")
    assert forged.status_code == 401 and InboundUpdate.objects.count() == before

    code = do_create_room_code(room, owner)
    post_teams(teams, teams.message(conv, ana, f"facilitator start {code.code}"))
    wait_for(lambda: ChatLink.objects.filter(chat=chat, room=room, active=True).exists())

    post_teams(teams, teams.message(conv, ben, "I can lead."))
    wait_for(lambda: Observation.objects.filter(room=room, author_kind="human", content="I can lead.").exists())

    Room.objects.filter(pk=room.pk).update(status=Room.Status.PAUSED)
    teams.fail_next(429, retry_after=1)
    do_post_comment(room.pk, owner, "Thanks, Ben.")
    wait_for(lambda: any(a["activity"].get("text") == "**olga**: Thanks, Ben." for a in teams.sent_to(conv["id"])), timeout=60)
    assert not any("I can lead" in (a["activity"].get("text") or "") for a in teams.sent_to(conv["id"]))

    olga = ChatIdentity.objects.get(platform="teams", external_id=ana["id"])
    olga.user = owner
    olga.save()
    teams.refuse_direct(ana["id"])
    (dm,) = queue_direct("user:olga", "Report")
    dm = wait_for(lambda: Delivery.objects.filter(pk=dm.pk, status="undeliverable").first(), timeout=60)
    assert "403" in dm.diagnostic
