"""create_api_token: prints a token (idempotently), creates users on request; tokens authenticate."""
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def run(*args) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=err)
    return out.getvalue().strip()


def test_missing_user_is_a_clear_error(db):
    with pytest.raises(CommandError, match="No user named 'ghost'. Pass --create-user"):
        run("ghost")
    assert not get_user_model().objects.filter(username="ghost").exists()


def test_create_user_prints_a_token_and_is_idempotent(db):
    key = run("integrator", "--create-user", "--password", "s3cret-pass")
    user = get_user_model().objects.get(username="integrator")
    assert Token.objects.get(user=user).key == key and len(key) == 40
    assert user.check_password("s3cret-pass")
    assert run("integrator") == key
    assert run("integrator", "--create-user") == key
    assert Token.objects.filter(user=user).count() == 1


def test_user_created_without_password_cannot_log_in_with_one(db):
    run("bot", "--create-user")
    assert not get_user_model().objects.get(username="bot").has_usable_password()


def test_existing_user_gets_a_token(people):
    key = run("viewer")
    assert Token.objects.get(user=people["viewer"]).key == key


def test_the_token_authenticates_api_calls(room):
    key = run("owner")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get(f"/api/discussions/{room.pk}")
    assert response.status_code == 200 and response.json()["data"]["access"] == "owner"
