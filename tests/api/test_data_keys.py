"""Keys chosen by people are data: the camelCase renderer leaves them as written.

A facilitation run's role names are the keys of its artifact's ``roles``; the renderer rewrote them
as if they were field names (``Scribe_x`` came back as ``ScribeX``, and of ``note_taker`` and
``noteTaker`` one was lost). Every answer that carries them (the artifact, live and reaped, the run in
the discussion's detail, the invocation log) keeps them exactly."""
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from facilitation.goals.actions import do_reap_run
from rooms.models import FacilitationRun
from tests.factories import make_facilitator

NAMES = [["Lead", "Scribe_x", "Timekeeper"], ["note_taker", "noteTaker", "Lead"]]


@pytest.fixture
def runner(people, clients):
    make_facilitator("Convener", key="convener")
    people["owner"].user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    return clients["owner"]


def create_run(api, roles) -> dict:
    answer = api.post("/api/discussions", {
        "kind": "facilitation", "name": "Roles", "topic": "Every role carries one name", "pattern": "role_assignment",
        "slots": {"roles": roles}, "deadline": (timezone.now() + timedelta(hours=2)).isoformat(), "ttlHours": 24})
    assert answer.status_code == 201, answer.json()
    return answer.json()["data"]


@pytest.mark.parametrize("roles", NAMES)
def test_role_names_come_back_as_written(runner, roles):
    created = create_run(runner, roles)
    assert created["run"]["slots"]["roles"] == roles
    url = f"/api/discussions/{created['id']}"
    artifact = runner.get(f"{url}/artifact").json()["data"]
    # Every name as written (PostgreSQL's jsonb keeps an object's keys in an order of its own; the run's slots keep
    # the roles' order).
    assert sorted(artifact["roles"]) == sorted(roles) and artifact["roles"] == dict.fromkeys(roles)
    assert all(role in " ".join(artifact["missing"]) for role in roles)

    holders = dict(zip(roles, ["Ana", "Bo", None]))
    FacilitationRun.objects.filter(room_id=created["id"]).update(artifact={"roles": holders})
    assert runner.get(f"{url}/artifact").json()["data"]["roles"] == holders
    assert runner.get(url).json()["data"]["run"]["slots"]["roles"] == roles


@pytest.mark.parametrize("roles", NAMES)
def test_role_names_stay_as_written_once_the_run_was_reaped(runner, roles):
    created = create_run(runner, roles)
    holders = dict(zip(roles, ["Ana", None, "Cy"]))
    FacilitationRun.objects.filter(room_id=created["id"]).update(
        artifact={"roles": holders}, expires_at=timezone.now() - timedelta(seconds=1))
    assert do_reap_run(FacilitationRun.objects.get(room_id=created["id"]).pk)
    url = f"/api/discussions/{created['id']}"
    reaped = runner.get(f"{url}/artifact").json()["data"]
    assert reaped["reaped"] is True
    assert reaped["artifact"]["roles"] == holders and reaped["roles"] == holders  # the result at the top too
    assert reaped["slots"]["roles"] == roles
    log = runner.get(f"{url}/invocations", {"component": "goals.reap"}).json()["data"]
    assert log[0]["input"]["artifact"]["roles"] == holders


def test_field_names_are_still_camel_case_around_the_data(runner):
    created = create_run(runner, NAMES[0])
    artifact = runner.get(f"/api/discussions/{created['id']}/artifact").json()["data"]
    assert {"confirmedBy", "needsConfirmationFrom"} <= set(artifact)
    assert {"definitionOfDone", "reportToText", "joinCode"} <= set(created["run"])
    assert created["run"]["slots"] == {"roles": NAMES[0], "allowMultiple": False}
