"""A facilitation run in a Telegram group through the real worker path: webhook -> Redis -> the
bridge's Celery worker -> the run's actions -> deliveries -> the fake Bot API, with the beat-free
parts of the flow (handshake, artifact, confirmation, reports with minutes)."""
import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.utils import timezone

from rooms.models import ChatIdentity, Delivery, FacilitationRun, Room
from tests.channels_bridge.conftest import SECRET
from tests.factories import make_facilitator, make_user
from tests.fakes import telegram_updates as tu
from tests.fakes.telegram_server import FakeTelegram
from tests.waiting import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

ANA, BEN = tu.user(501, "Ana", "ana_s"), tu.user(502, "Ben", "benb")
GROUP = tu.group(-6001, "Launch team")
TOKEN = "123456:TEST"


@pytest.fixture
def telegram(stack_factory, settings):
    fake = FakeTelegram(token=TOKEN)
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": fake.root, "TELEGRAM_WEBHOOK_SECRET": SECRET}
    settings.TASK_DISPATCH = "celery"
    settings.BRIDGES = {**settings.BRIDGES, "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": fake.root,
                        "TELEGRAM_WEBHOOK_SECRET": SECRET, "RATE_LIMIT_BACKEND": "redis"}
    stack_factory(extra_env=env)
    yield fake
    fake.stop()


def post(update):
    answer = Client().post("/bridge/telegram/webhook", data=json.dumps(update), content_type="application/json",
                           HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=SECRET)
    assert answer.status_code == 200


def test_roles_confirmed_in_a_telegram_group_reach_both_managers_with_minutes(telegram):
    make_facilitator("Convener", key="convener")
    owner = make_user("olga")
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    management = Group.objects.create(name="management")
    managers = []
    for number, name in enumerate(("mia", "max"), 1):
        user = make_user(name)
        management.user_set.add(user)
        managers.append(ChatIdentity.objects.create(platform="telegram", external_id=str(800 + number), name=name, user=user))
    api = Client()
    api.force_login(owner)
    answer = api.post("/api/discussions", json.dumps({
        "kind": "facilitation", "name": "Launch roles", "topic": "Every role carries exactly one name",
        "pattern": "role_assignment", "slots": {"roles": ["Lead", "Scribe"]}, "reportTo": ["role:management"],
        "deadline": (timezone.now() + timedelta(hours=2)).isoformat(), "ttlHours": 24}), content_type="application/json")
    assert answer.status_code == 201
    data = answer.json()["data"]

    def said(fragment):
        return wait_for(lambda: any(fragment in m["text"] for m in telegram.sent_to(GROUP["id"])), timeout=30)

    post(tu.bot_added(GROUP, ANA))
    post(tu.command(GROUP, ANA, f"/facilitator start {data['joinCode']}"))
    said("your facilitator for this run")
    post(tu.message(GROUP, ANA, "I'll take Lead"))
    post(tu.message(GROUP, BEN, "I'll take Scribe"))
    said("please confirm")
    post(tu.message(GROUP, ANA, "confirmed"))
    post(tu.message(GROUP, BEN, "agreed"))
    said("Done: the goal is met and confirmed")

    run = FacilitationRun.objects.get(room_id=data["id"])
    assert run.state == "completed" and run.artifact["roles"] == {"Lead": "Ana", "Scribe": "Ben"}
    assert Room.objects.get(pk=data["id"]).status == "concluded"
    for manager in managers:
        wait_for(lambda m=manager: any(str(d["chat_id"]) == m.external_id for d in telegram.documents), timeout=30)
        (report,) = telegram.sent_to(manager.external_id)
        confirmed = report["text"].split("Confirmed by: ")[1]
        assert "Lead: Ana" in report["text"] and sorted(confirmed.split(", ")) == ["Ana", "Ben"]  # in either order
    reports = Delivery.objects.filter(room_id=data["id"], kind="direct")
    # The worker marks a delivery sent once the platform answered its last part: just after the fake got it.
    wait_for(lambda: set(reports.values_list("status", flat=True)) == {"sent"} or None, timeout=30)
    assert reports.count() == 2
    assert all(d.parts_sent == 2 for d in reports)  # the text, then the minutes: each exactly once
    assert len([m for m in telegram.messages if "your facilitator for this run" in m["text"]]) == 1
