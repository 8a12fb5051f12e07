import pytest

from tests.factories import make_user


def _healthy(client):
    """/healthz once it says ok, or its last answer after a minute (a worker's cold start on a loaded
    two-core machine has taken more than 20 s)."""
    import time

    deadline = time.monotonic() + 60
    while True:
        response = client.get("/healthz")
        if response.json()["ok"] or time.monotonic() > deadline:
            return response
        time.sleep(0.5)


@pytest.mark.worker
def test_healthz_reports_database_schema_redis_and_workers(live_worker, client):
    response = _healthy(client)
    body = response.json()
    assert response.status_code == 200, body
    # Anyone learns only ok/not ok per component: no database type, no worker host names.
    assert body == {"ok": True, "database": {"ok": True}, "schema": {"ok": True}, "redis": {"ok": True},
                    "workers": {"ok": True}, "bridges": {"ok": True}}

    client.force_login(make_user("ops", is_staff=True))
    body = client.get("/healthz").json()
    assert body["database"]["vendor"] in ("sqlite", "postgresql")
    assert body["workers"]["count"] >= 1 and body["workers"]["names"]


@pytest.mark.django_db
def test_healthz_is_503_when_redis_is_down(client, settings):
    from config.embedded_redis import free_port

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"]["ok"] is True and body["redis"]["ok"] is False and body["workers"]["ok"] is False
    assert "error" not in body["redis"]


@pytest.mark.django_db
def test_healthz_details_are_for_staff_only(client, settings):
    from config.embedded_redis import free_port

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    client.force_login(make_user("someone"))
    assert client.get("/healthz").json()["database"] == {"ok": True}
    client.force_login(make_user("operator", is_staff=True))
    body = client.get("/healthz").json()
    assert body["database"]["vendor"] and "Redis" in body["workers"]["error"]


@pytest.mark.django_db
def test_a_monitor_with_a_staff_token_sees_the_details(client, settings):
    from config.embedded_redis import free_port
    from tests.factories import make_token

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    staff_key, user_key = make_token(make_user("monitor", is_staff=True)), make_token(make_user("plain"))
    assert "vendor" in client.get("/healthz", HTTP_AUTHORIZATION=f"Token {staff_key}").json()["database"]
    assert client.get("/healthz", HTTP_AUTHORIZATION=f"Token {user_key}").json()["database"] == {"ok": True}
    assert client.get("/healthz", HTTP_AUTHORIZATION="Token nonsense").json()["database"] == {"ok": True}
