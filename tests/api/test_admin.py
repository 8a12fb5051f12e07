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


def test_tokens_can_be_created_in_the_admin(admin_client):
    assert admin_client.get(reverse("admin:authtoken_tokenproxy_changelist")).status_code == 200
