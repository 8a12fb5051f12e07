"""Both webhooks check who is calling before they read a body, and bound what they read."""
import json

import pytest

from channels_bridge.models import InboundUpdate
from channels_bridge.views import MAX_BODY
from rooms import dispatch
from tests.channels_bridge.conftest import SECRET, committed
from tests.fakes import telegram_updates as tu

pytestmark = pytest.mark.django_db


def _oversized(update: dict) -> str:
    return json.dumps({**update, "padding": "x" * (MAX_BODY + 1)})


@pytest.mark.parametrize("secret, status", [(SECRET, 413), ("wrong-secret", 403), (None, 401)])
def test_an_oversized_telegram_update_is_refused_and_stores_nothing(client, secret, status):
    headers = {"HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN": secret} if secret else {}
    update = tu.message(tu.group(-4001, "Roles"), tu.user(501, "Ana", "ana_s"), "hello")
    response = committed(client.post, "/bridge/telegram/webhook", data=_oversized(update), content_type="application/json",
                         **headers)
    assert response.status_code == status
    assert InboundUpdate.objects.count() == 0 and dispatch.sent == []


def test_an_oversized_teams_activity_is_refused_and_stores_nothing(teams, post_teams):
    activity = teams.message(teams.conversation("19:big@thread.v2", "groupChat"), teams.account(1, "Ana"), "hello")
    assert post_teams(_oversized(activity)).status_code == 413
    assert post_teams(_oversized(activity), authorization="Bearer forged").status_code == 401
    assert InboundUpdate.objects.count() == 0 and dispatch.sent == [] and teams.activities == []
