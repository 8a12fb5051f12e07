"""/healthz on the bridges, and ``manage.py telegram_webhook``."""
import json

import pytest
from django.core.management import CommandError, call_command

from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_healthz_shows_each_bridge_to_staff_only(client, post_telegram, settings):
    from tests.fakes import telegram_updates as tu

    post_telegram(tu.message(tu.group(-1, "G"), tu.user(5, "Ana"), "hi"))
    anonymous = client.get("/healthz").json()
    assert anonymous["bridges"] == {"ok": True}
    client.force_login(make_user("ops", is_staff=True))
    bridges = client.get("/healthz").json()["bridges"]
    assert bridges["telegram"]["configured"] is True and bridges["telegram"]["lastUpdateAt"]
    assert bridges["teams"] == {"configured": False, "lastUpdateAt": None, "lastSentAt": None}


def test_telegram_webhook_command_sets_shows_and_deletes(telegram, capsys):
    from tests.channels_bridge.conftest import SECRET

    call_command("telegram_webhook", "set", "https://convene.example.org/bridge/telegram/webhook")
    assert telegram.webhook["url"] == "https://convene.example.org/bridge/telegram/webhook"
    assert telegram.webhook["secret_token"] == SECRET
    assert set(telegram.webhook["allowed_updates"]) >= {"message", "edited_message", "my_chat_member", "chat_member"}
    capsys.readouterr()
    call_command("telegram_webhook", "info")
    assert json.loads(capsys.readouterr().out)["url"].endswith("/bridge/telegram/webhook")
    call_command("telegram_webhook", "delete")
    assert telegram.webhook["url"] == ""
    with pytest.raises(CommandError, match="https"):
        call_command("telegram_webhook", "set", "http://plain.example.org/hook")
