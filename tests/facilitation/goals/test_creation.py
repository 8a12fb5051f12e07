"""Creating a run: a report target that could never receive the report is refused at creation, naming the field,
while a target that may yet be reached when the report is sent (a user without a chat account, a role without
holders) is accepted."""
import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.utils import timezone

from rooms.models import FacilitationRun, Invocation, Room
from tests.factories import make_facilitator, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(db):
    make_facilitator("Convener", key="convener")
    user = make_user("olga")
    user.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    return user


def create(user, report_to):
    api = Client()
    api.force_login(user)
    body = {"kind": "facilitation", "name": "Launch roles", "topic": "Every role carries exactly one name",
            "pattern": "role_assignment", "slots": {"roles": ["Lead", "Scribe"]}, "reportTo": report_to,
            "deadline": (timezone.now() + timedelta(hours=2)).isoformat(), "ttlHours": 24}
    return api.post("/api/discussions", json.dumps(body), content_type="application/json")


def nothing_written():
    return (not Room.objects.filter(kind="facilitation").exists() and not FacilitationRun.objects.exists()
            and not Invocation.objects.filter(component="goals.create_run").exists())


def test_a_report_to_a_user_who_does_not_exist_or_is_deactivated_is_refused_alike(owner):
    """An unknown user and a deactivated one get the same 400, naming the field, and nothing is created: the answer
    does not tell who exists."""
    make_user("gone", is_active=False)
    answers = [create(owner, ["role:management", f"user:{name}"]) for name in ("ghost", "gone")]
    assert [a.status_code for a in answers] == [400, 400]
    errors = [a.json()["error"] for a in answers]
    assert errors[0] == errors[1]
    assert errors[0]["code"] == "validation_error" and "reportTo[1]" in errors[0]["message"]
    assert list(errors[0]["details"]) == ["reportTo[1]"]
    assert "ghost" not in json.dumps(errors[0]) and "gone" not in json.dumps(errors[0])
    assert nothing_written()
    # The index is the one sent, whatever came before it (a target named twice counts once, but keeps its place).
    answer = create(owner, ["user:olga", "user:olga", "user:ghost"])
    assert answer.status_code == 400 and list(answer.json()["error"]["details"]) == ["reportTo[2]"]
    assert nothing_written()


def test_report_targets_that_may_yet_be_reached_are_accepted(owner):
    """Resolved when the report is sent: a user who has no chat account yet (they may link one), a role whose group
    has no holder yet or does not exist yet (staff may fill it) are accepted as they are."""
    make_user("ana")  # no chat account
    answer = create(owner, ["user:ana", "role:management", "role:board"])
    assert answer.status_code == 201, answer.content
    Group.objects.create(name="empty")
    assert create(owner, ["user:olga", "role:empty"]).status_code == 201
    assert list(FacilitationRun.objects.order_by("pk").values_list("report_to", flat=True)) == [
        ["user:ana", "role:management", "role:board"], ["user:olga", "role:empty"]]


def test_without_the_permission_an_unknown_report_target_is_403_as_any_other(owner):
    """Who may not create runs learns nothing about who exists: the answer is the permission's 403, whatever the
    report target names."""
    stranger = make_user("mallory")
    answers = [create(stranger, [f"user:{name}"]) for name in ("olga", "ghost")]
    assert [a.status_code for a in answers] == [403, 403]
    assert answers[0].json()["error"] == answers[1].json()["error"]
    assert nothing_written()
