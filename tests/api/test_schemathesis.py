"""Property-based testing of the API from its own OpenAPI schema (schemathesis, in-process over WSGI).

Every operation in /api/schema gets a bounded number of generated requests, positive
and negative. Checks: no 5xx, the status code is documented, the content type is
documented, and the body conforms to the documented schema (the envelope included).
Path ids are mapped onto rows that exist half of the time, and create bodies onto
real agents, so the success paths are exercised and not only the 404s and 400s.
"""
import pytest
import schemathesis
from django.contrib.auth.models import User
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.config import SchemathesisConfig

from rooms.models import Agent, Persona, Role, RoomMember
from tests.api.conftest import new_discussion
from tests.factories import make_facilitator, make_participant, make_token, make_user

MAX_EXAMPLES = 12
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def keep_db_connection():
    """The WSGI handler closes the connection after each request; inside a test transaction it must not
    (Django's own test client disconnects the same signal handlers)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def world(db, keep_db_connection):
    owner = make_user("fuzzer")
    friend = make_user("friend")
    catalog = {"chair": make_facilitator("Fuzz Chair", key="fuzz-chair"),
               "ada": make_participant("Ada", alias="ada"), "bob": make_participant("Bob", alias="bob"),
               "cyd": make_participant("Cyd", alias="cyd")}
    rooms = [new_discussion(owner, catalog) for _ in range(3)]
    RoomMember.objects.create(room=rooms[0], user=friend)
    Persona.objects.create(key="fuzz-persona", name="Fuzz persona", prompt="p", created_by=owner)
    Role.objects.create(key="fuzz-role", name="Fuzz role", created_by=owner)
    Agent.objects.create(name="Fuzz agent", created_by=owner)
    return {"token": make_token(owner), "catalog": catalog, "rooms": rooms}


def _load_schema():
    # Loaded at import (one pytest item per operation). schemathesis' lazy ``from_fixture``
    # loader does not work with pytest 9 (it reads ``request.node._nodeid``).
    from config.wsgi import application

    config = SchemathesisConfig.from_dict({
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True},
        "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
        "suppress-health-check": ["all"],
    })
    return schemathesis.openapi.from_wsgi("/api/schema", application, config=config)


schema = _load_schema()


def _existing_ids(path: str) -> list:
    from rooms.queries import usable_by
    from rooms.models import Room

    if path.startswith("/api/discussions"):
        return list(Room.objects.order_by("pk").values_list("pk", flat=True))
    fuzzer = User.objects.get(username="fuzzer")
    for prefix, model in (("/api/agents", Agent), ("/api/personas", Persona), ("/api/roles", Role)):
        if path.startswith(prefix):
            return list(usable_by(model, fuzzer).order_by("pk").values_list("pk", flat=True))
    return []


def _point_at_real_rows(case, world) -> None:
    params = case.path_parameters or {}
    ident = params.get("id")
    if isinstance(ident, int) and ident % 2 == 0:
        ids = _existing_ids(case.path)
        if ids:
            params["id"] = ids[ident % len(ids)]
    if "username" in params and isinstance(params["username"], str) and len(params["username"]) % 2 == 0:
        params["username"] = "friend"
    body = case.body
    if case.method == "POST" and case.path == "/api/discussions" and isinstance(body, dict):
        catalog = world["catalog"]
        if isinstance(body.get("moderatorId"), int) and body["moderatorId"] % 2 == 0:
            body["moderatorId"] = catalog["chair"].pk
        speakers = [catalog["ada"].pk, catalog["bob"].pk, catalog["cyd"].pk]
        for i, p in enumerate(body.get("participants") or []):
            if isinstance(p, dict) and isinstance(p.get("agentId"), int):
                p["agentId"] = speakers[i % 3]


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_api_conforms_to_its_schema(case, world):
    _point_at_real_rows(case, world)
    case.call_and_validate(headers={"Authorization": f"Token {world['token']}"}, checks=CHECKS)
