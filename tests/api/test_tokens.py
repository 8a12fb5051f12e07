"""API tokens: stored as digests, shown once, expiring, revocable (page, API, admin); create_api_token."""
import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from rooms.models import ApiToken
from rooms.tokens import digest
from tests.factories import make_token, make_user


def run(*args) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=err)
    return out.getvalue().strip()


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_missing_user_is_a_clear_error(db):
    with pytest.raises(CommandError, match="No user named 'ghost'. Pass --create-user"):
        run("ghost")
    assert not get_user_model().objects.filter(username="ghost").exists()


def test_create_user_prints_a_working_token_stored_only_as_a_digest(db):
    key = run("integrator", "--create-user", "--password", "correct-horse-battery")
    user = get_user_model().objects.get(username="integrator")
    token = ApiToken.objects.get(user=user)
    assert key.startswith("cvn_") and len(key) > 40
    assert token.digest == digest(key) and key not in (token.prefix, token.digest, token.name)
    assert key.startswith(token.prefix)
    assert user.check_password("correct-horse-battery")
    assert client_with(key).get("/api/discussions").status_code == 200
    second = run("integrator")
    assert second != key and ApiToken.objects.filter(user=user).count() == 2


def test_create_api_token_runs_the_password_validators(db):
    for weak in ("x", "12345678", "password"):
        with pytest.raises(CommandError, match="too weak"):
            run(f"weak-{len(weak)}-{weak[:2]}", "--create-user", "--password", weak)
    assert not get_user_model().objects.filter(username__startswith="weak-").exists()


def test_user_created_without_password_cannot_log_in_with_one(db):
    run("bot", "--create-user")
    assert not get_user_model().objects.get(username="bot").has_usable_password()


def test_the_token_authenticates_api_calls(room):
    key = run("owner")
    response = client_with(key).get(f"/api/discussions/{room.pk}")
    assert response.status_code == 200 and response.json()["data"]["access"] == "owner"


def test_the_token_is_taken_as_a_bearer_token_too(room):
    key = run("owner")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get(f"/api/discussions/{room.pk}").json()["data"]["access"] == "owner"
    client.credentials(HTTP_AUTHORIZATION=f"bearer {key[:-1]}")
    response = client.get(f"/api/discussions/{room.pk}")
    assert response.status_code == 401 and response.json()["error"]["message"] == "Invalid, expired or revoked token."


def test_an_expired_token_authenticates_nobody(people):
    key = make_token(people["owner"])
    ApiToken.objects.filter(user=people["owner"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client_with(key).get("/api/discussions")
    assert response.status_code == 401 and response.json()["error"]["code"] == "authentication_failed"


def test_a_deactivated_users_token_authenticates_nobody(people):
    key = make_token(people["owner"])
    people["owner"].is_active = False
    people["owner"].save()
    assert client_with(key).get("/api/discussions").status_code == 401


def test_tokens_are_listed_created_once_and_revoked_over_the_api(people, pushed, django_capture_on_commit_callbacks):
    session = APIClient()
    session.force_login(people["owner"])
    created = session.post("/api/me/tokens", {"name": "ci", "expiresInDays": 7}, format="json")
    assert created.status_code == 201, created.json()
    data = created.json()["data"]
    key = data["key"]
    assert data["name"] == "ci" and key.startswith(data["prefix"])
    expires = timezone.datetime.fromisoformat(data["expiresAt"].replace("Z", "+00:00"))
    assert timedelta(days=6, hours=23) < expires - timezone.now() <= timedelta(days=7)

    listed = client_with(key).get("/api/me/tokens").json()["data"]
    assert [t["id"] for t in listed] == [data["id"]] and "key" not in listed[0]
    # Another user neither sees nor revokes it.
    other = APIClient()
    other.force_login(people["other"])
    assert other.get("/api/me/tokens").json()["data"] == []
    assert other.delete(f"/api/me/tokens/{data['id']}").status_code == 404

    with django_capture_on_commit_callbacks(execute=True):
        revoked = client_with(key).delete(f"/api/me/tokens/{data['id']}")
    assert revoked.status_code == 200
    assert client_with(key).get("/api/discussions").status_code == 401
    assert ("access:disconnect", {"disconnect": True, "userId": people["owner"].pk, "tokenId": data["id"]},
            f"user:{people['owner'].pk}") in pushed


def test_a_token_cannot_mint_more_tokens(people):
    key = make_token(people["owner"])
    response = client_with(key).post("/api/me/tokens", {"name": "child"}, format="json")
    assert response.status_code == 403
    assert ApiToken.objects.filter(user=people["owner"]).count() == 1


@pytest.mark.parametrize("body", [{"expiresInDays": 0}, {"expiresInDays": 366}, {"expiresInDays": "7"},
                                  {"name": "x" * 101}, {"name": ["a"]}, {"scopes": "all"}])
def test_bad_token_requests_are_400_and_create_nothing(people, body):
    session = APIClient()
    session.force_login(people["owner"])
    response = session.post("/api/me/tokens", body, format="json")
    assert response.status_code == 400, response.json()
    assert not ApiToken.objects.exists()


def test_the_account_page_shows_a_new_key_once_and_revokes(client, people):
    client.force_login(people["owner"])
    page = client.post("/account/tokens/", {"action": "create", "name": "laptop", "days": "30"})
    assert page.status_code == 200
    token = ApiToken.objects.get(user=people["owner"])
    key = page.context["new_key"]
    assert token.digest == digest(key) and key in page.content.decode()
    again = client.get("/account/tokens/").content.decode()
    assert token.prefix in again and key not in again
    client.post("/account/tokens/", {"action": "revoke", "token_id": str(token.pk)})
    assert not ApiToken.objects.exists()


def test_the_account_page_revokes_only_your_own_tokens(client, people):
    make_token(people["other"])
    theirs = ApiToken.objects.get(user=people["other"])
    client.force_login(people["owner"])
    client.post("/account/tokens/", {"action": "revoke", "token_id": str(theirs.pk)})
    assert ApiToken.objects.filter(pk=theirs.pk).exists()


def test_legacy_clear_text_tokens_are_hashed_by_the_migration(transactional_db):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    user = make_user("legacy")
    executor = MigrationExecutor(connection)
    executor.migrate([("rooms", "0001_initial")])
    try:
        with connection.cursor() as cursor:  # "timestamp" is a column type on SQLite and PostgreSQL alike
            cursor.execute("CREATE TABLE IF NOT EXISTS authtoken_token (key varchar(40) PRIMARY KEY, created timestamp, "
                           "user_id integer)")
            cursor.execute("INSERT INTO authtoken_token (key, created, user_id) VALUES (%s, %s, %s)",
                           ["a" * 40, timezone.now(), user.pk])
    finally:  # whatever happens, the later tests find the schema migrated to the end
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM authtoken_token")
        assert cursor.fetchone()[0] == 0
        cursor.execute("DROP TABLE authtoken_token")
    assert client_with("a" * 40).get("/api/discussions").status_code == 200


def test_token_and_code_times_are_written_as_every_other_time_of_the_api(client, db):
    """``isoformat()`` with ``+00:00``, as discussions, turns and runs write theirs, not DRF's ``Z``."""
    from django.contrib.auth.models import User

    from rooms.models import ApiToken, ChatCode

    user = User.objects.create_user("clock", password="Pw-for-clock-1")
    client.force_login(user)
    made = client.post("/api/me/tokens", {"name": "ci"}, content_type="application/json").json()["data"]
    token = ApiToken.objects.get(pk=made["id"])
    assert (made["createdAt"], made["expiresAt"]) == (token.created_at.isoformat(), token.expires_at.isoformat())
    listed = client.get("/api/me/tokens").json()["data"][0]
    assert listed["expiresAt"] == token.expires_at.isoformat() and listed["expiresAt"].endswith("+00:00")
    code = client.post("/api/me/chat-identities").json()["data"]
    assert code["expiresAt"] == ChatCode.objects.get(code=code["code"]).expires_at.isoformat()
