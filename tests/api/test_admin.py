"""The Django admin covers every model; audit rows are read-only; tokens are managed there too."""
import pytest
from django.contrib import admin
from django.urls import reverse

from rooms import models
from rooms.models import Invocation, Observation, RoomEvent
from tests.factories import make_user

MODELS = [getattr(models, name) for name in models.__all__]


@pytest.fixture
def admin_client(client, room):
    Observation.objects.create(room=room, seq=90, round=1, author_name="Ada", content="hello")
    Invocation.objects.create(room=room, component="participant.turn", provider="rehearsal")
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


def test_every_model_is_registered():
    assert all(admin.site.is_registered(m) for m in MODELS)


@pytest.mark.parametrize("model", MODELS, ids=[m.__name__ for m in MODELS])
def test_changelist_and_change_pages_render(admin_client, model):
    meta = model._meta
    assert admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")).status_code == 200
    row = model.objects.first()
    if row is not None:
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[row.pk])
        assert admin_client.get(url).status_code == 200


@pytest.mark.parametrize("model", [Invocation, RoomEvent])
def test_audit_rows_are_read_only(admin_client, model):
    model_admin = admin.site._registry[model]
    assert not model_admin.has_add_permission(None) and not model_admin.has_change_permission(None)


def test_tokens_are_listed_and_revoked_in_the_admin_but_never_made_there(admin_client, pushed, django_capture_on_commit_callbacks):
    from rooms.models import ApiToken
    from tests.factories import make_token

    owner = make_user("holder")
    make_token(owner, name="ci")
    token = ApiToken.objects.get(user=owner)
    assert admin_client.get(reverse("admin:rooms_apitoken_changelist")).status_code == 200
    assert not admin.site._registry[ApiToken].has_add_permission(None)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("admin:rooms_apitoken_delete", args=[token.pk]), {"post": "yes"})
    assert response.status_code == 302 and not ApiToken.objects.filter(pk=token.pk).exists()
    assert ("access:disconnect", {"disconnect": True, "userId": owner.pk, "tokenId": token.pk}, f"user:{owner.pk}") in pushed


def test_deactivating_a_user_in_the_admin_disconnects_them(admin_client, pushed, django_capture_on_commit_callbacks):
    user = make_user("leaver")
    url = reverse("admin:auth_user_change", args=[user.pk])
    form = {"username": "leaver", "is_active": "", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
            "initial-date_joined_0": "2026-01-01", "initial-date_joined_1": "00:00:00"}
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, form)
    assert response.status_code == 302, response.content[:2000]
    user.refresh_from_db()
    assert not user.is_active
    assert ("access:disconnect", {"disconnect": True, "userId": user.pk, "tokenId": None}, f"user:{user.pk}") in pushed


def test_taking_staff_away_in_the_admin_disconnects_them(admin_client, pushed, django_capture_on_commit_callbacks):
    """Staff may view every room: a socket that joined a room as staff must not keep receiving it after that ends."""
    user = make_user("former-staff", is_staff=True)
    url = reverse("admin:auth_user_change", args=[user.pk])
    form = {"username": "former-staff", "is_active": "on", "is_staff": "", "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00", "initial-date_joined_0": "2026-01-01", "initial-date_joined_1": "00:00:00"}
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {**form, "is_staff": "on"})  # nothing changes: nobody is disconnected
    assert response.status_code == 302, response.content[:2000]
    assert not [p for p in pushed if p[0] == "access:disconnect"]
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, form)
    assert response.status_code == 302, response.content[:2000]
    user.refresh_from_db()
    assert user.is_active and not user.is_staff
    assert ("access:disconnect", {"disconnect": True, "userId": user.pk, "tokenId": None}, f"user:{user.pk}") in pushed
