"""POST /bridge/telegram/webhook: the secret header, malformed and repeated updates."""
import pytest

from channels_bridge.models import InboundUpdate
from rooms import dispatch
from tests.fakes import telegram_updates as tu

pytestmark = pytest.mark.django_db

ANA = tu.user(501, "Ana", "ana_s")
GROUP = tu.group(-4001, "Roles")


def test_a_verified_update_is_stored_once_and_handed_to_the_worker(post_telegram):
    update = tu.message(GROUP, ANA, "hello")
    response = post_telegram(update)
    assert response.status_code == 200 and response.json() == {"ok": True}
    row = InboundUpdate.objects.get()
    assert (row.platform, row.key, row.status) == ("telegram", str(update["update_id"]), "received")
    assert dispatch.sent == [("bridge.process_update", (row.pk,), "bridge")]


def test_a_repeated_update_id_is_acknowledged_and_ignored(post_telegram):
    update = tu.message(GROUP, ANA, "hello")
    post_telegram(update)
    dispatch.sent.clear()
    again = post_telegram(update)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert InboundUpdate.objects.count() == 1
    assert dispatch.sent == []


@pytest.mark.parametrize("secret, status", [(None, 401), ("", 401), ("wrong-secret", 403), ("webhook-secret-012345678", 403)])
def test_a_forged_request_changes_nothing(post_telegram, secret, status):
    response = post_telegram(tu.message(GROUP, ANA, "hello"), secret=secret)
    assert response.status_code == status
    assert InboundUpdate.objects.count() == 0 and dispatch.sent == []


def test_without_a_configured_secret_every_request_is_refused(post_telegram, settings):
    settings.BRIDGES = {**settings.BRIDGES, "TELEGRAM_WEBHOOK_SECRET": ""}
    response = post_telegram(tu.message(GROUP, ANA, "hello"), secret="")
    assert response.status_code == 403
    assert InboundUpdate.objects.count() == 0 and dispatch.sent == []


DEEP = '{"update_id": 8, "message": ' + '{"a": ' * 100 + "1" + "}" * 101  # valid JSON, 100 levels
ABYSS = '{"update_id": 9, "message": ' + "[" * 100000 + "]" * 100000 + "}"  # deeper than the JSON parser goes


@pytest.mark.parametrize("body", ["{not json", "[]", '"text"', '{"message": {}}', '{"update_id": "7"}', '{"update_id": -1}',
                                  '{"update_id": true}', '{"update_id": ' + "9" * 1000 + "}", f'{{"update_id": {2**63}}}',
                                  DEEP, ABYSS, "[" * 100000])
def test_a_malformed_update_is_400_and_stores_nothing(client, body):
    from tests.channels_bridge.conftest import SECRET

    response = client.post("/bridge/telegram/webhook", data=body, content_type="application/json",
                           HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=SECRET)
    assert response.status_code == 400
    assert InboundUpdate.objects.count() == 0 and dispatch.sent == []


def test_only_post_is_accepted(client):
    assert client.get("/bridge/telegram/webhook").status_code == 405
