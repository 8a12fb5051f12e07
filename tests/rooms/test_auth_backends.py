"""Sign-in failures are throttled per username, per address and per pair; the right password waits too."""
import pytest
from django.core.cache import cache
from django.urls import reverse

from tests.factories import make_user

PASSWORD = "pw-123456789"


@pytest.fixture(autouse=True)
def _fresh_counters(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    yield
    cache.clear()


def sign_in(client, username, password, ip="10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.django_db
def test_after_five_wrong_passwords_even_the_right_one_waits(client):
    make_user("victim")
    for _ in range(5):
        assert sign_in(client, "victim", "wrong-guess").status_code == 200
    page = sign_in(client, "victim", PASSWORD)
    assert not signed_in(client)
    assert "Too many failed sign-ins" in page.content.decode()
    # Other people are not affected, from the same address or elsewhere.
    make_user("bystander")
    sign_in(client, "bystander", PASSWORD)
    assert signed_in(client)


@pytest.mark.django_db
def test_guessing_one_username_from_many_addresses_is_limited(client):
    make_user("target")
    for i in range(20):
        sign_in(client, "target", f"guess-{i}", ip=f"10.1.0.{i}")
    sign_in(client, "target", PASSWORD, ip="10.9.9.9")
    assert not signed_in(client)


@pytest.mark.django_db
def test_one_address_guessing_many_usernames_is_limited(client):
    make_user("someone")
    for i in range(30):
        sign_in(client, f"user{i}", "guess", ip="10.2.0.1")
    sign_in(client, "someone", PASSWORD, ip="10.2.0.1")
    assert not signed_in(client)
    sign_in(client, "someone", PASSWORD, ip="10.2.0.2")
    assert signed_in(client)


@pytest.mark.django_db
def test_the_admin_sign_in_is_throttled_too(client):
    make_user("root", is_staff=True, is_superuser=True)
    url = reverse("admin:login")
    for _ in range(5):
        client.post(url, {"username": "root", "password": "nope"}, REMOTE_ADDR="10.3.0.1")
    client.post(url, {"username": "root", "password": PASSWORD}, REMOTE_ADDR="10.3.0.1")
    assert not signed_in(client)


@pytest.mark.django_db
def test_a_few_mistakes_do_not_lock_anyone_out(client):
    make_user("clumsy")
    for _ in range(4):
        sign_in(client, "clumsy", "typo")
    sign_in(client, "clumsy", PASSWORD)
    assert signed_in(client)
