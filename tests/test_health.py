import pytest


@pytest.mark.worker
def test_healthz_reports_database_redis_and_workers(live_worker, client):
    import time

    deadline = time.monotonic() + 20
    while True:
        response = client.get("/healthz")
        body = response.json()
        if body["ok"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert response.status_code == 200, body
    assert body["database"]["ok"] and body["redis"]["ok"]
    assert body["workers"]["ok"] and body["workers"]["count"] >= 1


@pytest.mark.django_db
def test_healthz_is_503_when_redis_is_down(client, settings):
    from config.embedded_redis import free_port

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"]["ok"] is True and body["redis"]["ok"] is False and body["workers"]["ok"] is False
