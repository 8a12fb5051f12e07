"""A facilitation run's answers validate against the OpenAPI schema the server publishes.

``DiscussionOut`` is closed (``additionalProperties: false``), and it did not list the ``run`` and
``joinCode`` a facilitation run's detail carries, so a client generated from the schema refused the
answers of ``POST /api/discussions`` (kind facilitation), ``GET /api/discussions/{id}`` and
``POST .../stop``; the artifact was documented as any object. Each answer here is validated with
jsonschema against the schema of its own operation and status."""
from datetime import timedelta

import jsonschema
import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from facilitation.goals.actions import do_reap_run
from facilitation.goals.shapes import run_shape
from rooms.models import ChatIdentity, FacilitationRun, RoomMember
from tests.api.conftest import Api
from tests.factories import make_facilitator


@pytest.fixture
def schema(db):
    return Api().get("/api/schema").json()


@pytest.fixture
def runner(people, clients):
    make_facilitator("Convener", key="convener")
    people["owner"].user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    return clients["owner"]


def check(schema, path: str, method: str, answer, status: int = 200) -> dict:
    """Validate ``answer`` against the schema of its operation and status, read as plain JSON Schema (the schema
    is OpenAPI 3.1, whose schemas are JSON Schema 2020-12: no ``nullable`` to translate); returns its data."""
    assert answer.status_code == status, answer.json()
    documented = schema["paths"][path][method]["responses"][str(status)]["content"]["application/json"]["schema"]
    validator = jsonschema.Draft202012Validator({**documented, "components": schema["components"]})
    errors = sorted(validator.iter_errors(answer.json()), key=lambda e: list(e.path))
    assert not errors, [(list(e.path), e.message[:300]) for e in errors]
    return answer.json()["data"]


def body(pattern="role_assignment", slots=None):
    return {"kind": "facilitation", "name": "Q3 launch roles", "topic": "Every role carries exactly one name",
            "pattern": pattern, "slots": slots if slots is not None else {"roles": ["Lead", "Scribe_x", "Timekeeper"]},
            "reportTo": ["user:owner"], "deadline": (timezone.now() + timedelta(hours=2)).isoformat(),
            "reminderMinutes": 30, "ttlHours": 24}


def test_a_runs_answers_validate_against_the_schema(schema, runner, clients, people, settings):
    settings.BRIDGES = {**settings.BRIDGES, "TELEGRAM_BOT_TOKEN": "777:TEST"}
    ChatIdentity.objects.create(platform="telegram", external_id="777", name="Convene", username="ConveneBot", is_bot=True)
    created = check(schema, "/api/discussions", "post", runner.post("/api/discussions", body()), 201)
    assert created["joinCode"] and created["run"]["joinCode"] == created["joinCode"]
    assert created["run"]["telegramLink"].endswith(created["joinCode"])
    url = f"/api/discussions/{created['id']}"
    check(schema, "/api/discussions/{id}", "get", runner.get(url))
    check(schema, "/api/discussions/{id}/artifact", "get", runner.get(f"{url}/artifact"))

    RoomMember.objects.create(room_id=created["id"], user=people["participant"], access="participant")
    seen = check(schema, "/api/discussions/{id}", "get", clients["participant"].get(url))
    assert seen["joinCode"] is None and seen["run"]["joinCode"] is None and seen["run"]["telegramLink"] is None

    started = check(schema, "/api/discussions/{id}/start", "post", runner.post(f"{url}/start"))
    assert started["run"]["state"] == "active" and started["run"]["initiator"]
    FacilitationRun.objects.filter(room_id=created["id"]).update(artifact={"roles": {"Lead": "Ana", "Scribe_x": None,
                                                                                    "Timekeeper": "Cy"}})
    check(schema, "/api/discussions/{id}/artifact", "get", runner.get(f"{url}/artifact"))
    stopped = check(schema, "/api/discussions/{id}/stop", "post", runner.post(f"{url}/stop"))
    assert stopped["status"] == "stopped" and stopped["run"]["state"] == "stopped"
    check(schema, "/api/discussions/{id}/artifact", "get", runner.get(f"{url}/artifact"))

    mine = check(schema, "/api/me/facilitation-runs", "get", runner.get("/api/me/facilitation-runs"))
    assert [row["discussionId"] for row in mine] == [created["id"]]
    assert check(schema, "/api/ephemeral-runs", "get", clients["staff"].get("/api/ephemeral-runs"))

    # reaped: the detail's run is null, and the artifact is the protocol the room kept
    run = FacilitationRun.objects.get(room_id=created["id"])
    FacilitationRun.objects.filter(pk=run.pk).update(ended_at=timezone.now() - timedelta(hours=2))
    assert do_reap_run(run.pk)
    gone = check(schema, "/api/discussions/{id}", "get", runner.get(url))
    assert gone["run"] is None and gone["joinCode"] is None
    reaped = check(schema, "/api/discussions/{id}/artifact", "get", runner.get(f"{url}/artifact"))
    assert reaped["reaped"] is True and reaped["roles"]["Lead"] == "Ana"


@pytest.mark.parametrize("pattern, slots", [("decision", {"options": ["Kafka", "Redis_streams"]}), ("list", {"min": 2})])
def test_the_artifact_of_each_pattern_validates(schema, runner, pattern, slots):
    created = check(schema, "/api/discussions", "post", runner.post("/api/discussions", body(pattern, slots)), 201)
    url = f"/api/discussions/{created['id']}/artifact"
    check(schema, "/api/discussions/{id}/artifact", "get", runner.get(url))
    artifact = {"choice": "Kafka", "proposals": ["Kafka"]} if pattern == "decision" else {
        "items": [{"text": "Ship the beta", "by": "Ana"}]}
    FacilitationRun.objects.filter(room_id=created["id"]).update(artifact=artifact)
    data = check(schema, "/api/discussions/{id}/artifact", "get", runner.get(url))
    assert {k: data[k] for k in artifact} == artifact


def test_other_rooms_carry_no_run(schema, owner_api, catalog):
    from tests.api.conftest import create_body

    data = check(schema, "/api/discussions", "post", owner_api.post("/api/discussions", create_body(catalog)), 201)
    assert "run" not in data and "joinCode" not in data
    required = schema["components"]["schemas"]["DiscussionOut"]["required"]
    assert "run" not in required and "joinCode" not in required


def test_the_run_component_lists_what_the_run_shape_carries(schema, runner):
    """The run is rendered through its component: a key added to ``run_shape`` must be documented there."""
    created = runner.post("/api/discussions", body()).json()["data"]
    keys = set(run_shape(FacilitationRun.objects.get(room_id=created["id"]))) | {"telegramLink"}
    assert keys == set(schema["components"]["schemas"]["FacilitationRunOut"]["properties"])
    artifact = schema["components"]["schemas"]["ArtifactOut"]
    assert artifact.get("additionalProperties") is False
    assert {"roles", "choice", "proposals", "items", "done", "missing", "confirmedBy"} <= set(artifact["properties"])
