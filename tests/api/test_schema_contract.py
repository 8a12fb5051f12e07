"""What the OpenAPI schema promises matches what the server does: rate limits, required fields,
the bodies it takes, and the formats of values (the QA findings of an integration over REST)."""
import re
from pathlib import Path

import jsonschema
import pytest
from django.conf import settings as django_settings

from rooms.models import Agent
from tests.api.conftest import Api

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
WRITES = ("post", "put", "patch", "delete")


@pytest.fixture
def schema(db):
    return Api().get("/api/schema").json()


def resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def validator(schema: dict, node: dict):
    """A validator for ``node`` that resolves the document's own ``#/components/...`` refs."""
    return jsonschema.Draft202012Validator({**node, "components": schema["components"]})


def request_schema(schema: dict, path: str, method: str, media="application/json") -> dict:
    return resolve(schema, schema["paths"][path][method]["requestBody"]["content"][media]["schema"])


# --- 1. every write documents its 429 -----------------------------------------------------------

def test_every_write_operation_documents_429_with_retry_after(schema):
    writes = [(path, method) for path, ops in schema["paths"].items() for method in ops if method in WRITES]
    assert len(writes) > 30
    for path, method in writes:
        throttled = schema["paths"][path][method]["responses"].get("429")
        assert throttled, (method, path)
        assert "Retry-After" in throttled["headers"], (method, path)
        body = resolve(schema, throttled["content"]["application/json"]["schema"])
        assert body["properties"]["error"]["properties"]["code"]["enum"] == ["throttled"]


def test_a_throttled_agent_patch_answers_what_the_schema_says(schema, owner_api, people, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "writes.user": "2/min"}}
    agent = Agent.objects.create(name="Mine", created_by=people["owner"])
    answers = [owner_api.patch(f"/api/agents/{agent.pk}", {"description": f"d{i}"}) for i in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    documented = schema["paths"]["/api/agents/{id}"]["patch"]["responses"]["429"]
    validator(schema, documented["content"]["application/json"]["schema"]).validate(answers[2].json())
    assert int(answers[2]["Retry-After"]) == answers[2].json()["error"]["details"]["retryAfter"] >= 1
    agent.refresh_from_db()
    assert agent.description == "d1"


def test_the_guide_states_the_rates_that_apply():
    text = " ".join(DOCS.read_text().split())
    rates = django_settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    for scope, who in (("writes.user", "user"), ("writes.ip", "address"), ("discussions.create", "user"),
                       ("discussions.lifecycle", "user")):
        count, period = rates[scope].split("/")
        assert period.startswith("min")
        assert f"{count} per minute per {who} (`{scope}`)" in text, scope
    assert "600 controls per minute" not in text
    bad_tokens, window = django_settings.CONVENE_RATE_LIMITS["bad_token_ip"]
    assert window == 60 and f"after {bad_tokens} invalid tokens within a minute" in text


# --- 2. PATCH bodies say what the server requires --------------------------------------------------

def test_patch_bodies_require_what_the_server_refuses_without(schema, clients, people, room):
    from rooms.models import Narrative
    from tests.workspace.helpers import agent_seats, make_workspace

    owner = clients["owner"]
    ws = make_workspace(people["owner"])
    seat = agent_seats(ws)[0]
    narrative = Narrative.objects.create(room=ws, round=1, content="Generated.", generated_content="Generated.")
    cases = [
        ("/api/discussions/{id}/narratives/{nid}", f"/api/discussions/{ws.pk}/narratives/{narrative.pk}",
         {"content": "Edited."}, "version"),
        ("/api/discussions/{id}/participants/{seat_id}", f"/api/discussions/{ws.pk}/participants/{seat.pk}",
         {"personaId": None}, "version"),
        ("/api/discussions/{id}/moderator", f"/api/discussions/{room.pk}/moderator", {}, "moderatorId"),
    ]
    for documented, url, body, field in cases:
        operation = schema["paths"][documented]["patch"]
        assert operation["requestBody"].get("required") is True, documented
        assert field in request_schema(schema, documented, "patch").get("required", []), documented
        answer = owner.patch(url, body)
        assert answer.status_code == 400, (url, answer.json())
        assert field in answer.json()["error"]["details"] or field in answer.json()["error"]["message"], answer.json()
    narrative.refresh_from_db()
    assert narrative.content == "Generated."


def test_catalogue_patch_bodies_still_require_nothing(schema, owner_api, people):
    for path in ("/api/agents/{id}", "/api/personas/{id}", "/api/roles/{id}"):
        assert not request_schema(schema, path, "patch").get("required"), path
    agent = Agent.objects.create(name="Mine", created_by=people["owner"])
    assert owner_api.patch(f"/api/agents/{agent.pk}", {"description": "only this"}).status_code == 200


# --- 3. the body that creates a facilitation run is described ------------------------------------

def _one_match(schema, node, body) -> str:
    """The name of the one ``oneOf`` alternative ``body`` is valid against (the body is valid as a whole)."""
    validator(schema, node).validate(body)
    matches = [alt["$ref"].rsplit("/", 1)[1] for alt in node["oneOf"]
               if validator(schema, alt).is_valid(body)]
    assert len(matches) == 1, matches
    return matches[0]


def test_a_client_can_build_a_facilitation_run_from_the_schema(schema, clients, people, catalog):
    from datetime import timedelta

    from django.contrib.auth.models import Permission
    from django.utils import timezone

    from rooms.models import FacilitationRun
    from tests.api.conftest import create_body

    create = schema["paths"]["/api/discussions"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    node = resolve(schema, create)
    run_schema = resolve(schema, node["oneOf"][1])
    assert {"pattern", "slots", "reportTo", "deadline", "reminderMinutes", "ttlHours"} <= set(run_schema["properties"])
    assert {"name", "topic", "kind", "pattern", "deadline"} <= set(run_schema["required"])
    assert "participants" not in run_schema["properties"] and "moderatorId" not in run_schema["required"]

    run = {"kind": "facilitation", "name": "Launch roles", "topic": "Each role has one name", "pattern": "role_assignment",
           "slots": {"roles": ["Lead", "Scribe"]}, "reportTo": ["user:owner"],
           "deadline": (timezone.now() + timedelta(hours=2)).isoformat(), "reminderMinutes": 30, "ttlHours": 24}
    assert _one_match(schema, node, run) == "FacilitationRunCreateInRequest"
    discussion = create_body(catalog)
    assert _one_match(schema, node, discussion) == "DiscussionCreateInRequest"
    # A discussion body that says kind facilitation is neither: the server reads it as a run and refuses it.
    assert not validator(schema, node).is_valid({**discussion, "kind": "facilitation"})

    people["owner"].user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    answer = clients["owner"].post("/api/discussions", run)
    assert answer.status_code == 201, answer.json()
    assert FacilitationRun.objects.get(room_id=answer.json()["data"]["id"]).slots["roles"] == ["Lead", "Scribe"]
    assert clients["owner"].post("/api/discussions", discussion).status_code == 201
    refused = clients["owner"].post("/api/discussions", {**discussion, "kind": "facilitation"})
    assert refused.status_code == 400


# --- 4. importing a discussion file ----------------------------------------------------------------

def test_the_import_body_is_required_and_its_example_imports(schema, owner_api):
    from facilitation.deliberation.discussion_file import MAGIC
    from rooms.models import Observation, Room
    from tests.factories import make_facilitator, make_participant

    body = schema["paths"]["/api/discussions/import"]["post"]["requestBody"]
    assert body["required"] is True
    examples = list(body["content"]["text/markdown"]["examples"].values())
    text = examples[0]["value"]
    assert text.splitlines()[0] == MAGIC
    make_facilitator("The Impartial Chair", key="impartial-chair")
    make_participant("Architect", alias="architect")
    answer = owner_api.client.post("/api/discussions/import", text, content_type="text/markdown")
    assert answer.status_code == 201, answer.json()
    room = Room.objects.get(pk=answer.json()["data"]["id"])
    assert room.status == "concluded" and Observation.objects.get(room=room).content.endswith("VOTE: READY")
    empty = owner_api.client.post("/api/discussions/import", "", content_type="text/markdown")
    assert empty.status_code == 400 and empty.json()["error"]["code"] == "malformed_file"


def test_an_oversized_import_is_413_like_an_oversized_json_body(schema, owner_api, settings):
    from rooms.models import Room

    from facilitation.discussions.file_io import EXAMPLE_FILE

    settings.API_MAX_BODY_BYTES = 2_000
    big = EXAMPLE_FILE + "x" * 3_000
    answer = owner_api.client.post("/api/discussions/import", big, content_type="text/markdown")
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "too_large", answer.content
    json_answer = owner_api.client.post("/api/roles", '{"name": "' + "x" * 3_000 + '"}', content_type="application/json")
    assert json_answer.status_code == 413 and json_answer.json()["error"]["code"] == "too_large"
    assert not Room.objects.exists()
    assert "413" in schema["paths"]["/api/discussions/import"]["post"]["responses"]


def test_the_error_table_names_the_import_codes():
    rows = {line.split("|")[1].strip(): line for line in DOCS.read_text().splitlines() if re.match(r"^\| \d{3} \|", line)}
    for code in ("malformed_file", "unknown_facilitator", "unknown_participant"):
        assert f"`{code}`" in rows["400"], code
    assert "too_large" not in rows["400"] and "discussion file" in rows["413"]


# --- 5. amounts and trimmed text as the server reads them --------------------------------------------

def test_an_agent_budget_in_usd_is_described_as_the_decimal_it_is(schema, owner_api):
    from decimal import Decimal

    budget = request_schema(schema, "/api/agents", "post")["properties"]["budgetUsd"]
    assert budget["type"] == ["number", "null"] and budget["format"] == "decimal" and budget["minimum"] == 0
    assert budget["exclusiveMaximum"] == 1_000_000 and "maximum" not in budget  # OpenAPI 3.1: the bound itself
    assert "6 decimal places" in budget["description"]
    kept = owner_api.post("/api/agents", {"name": "Exact", "budgetUsd": 999999.999999})
    assert kept.status_code == 201, kept.json()
    assert Agent.objects.get(pk=kept.json()["data"]["id"]).budget_usd == Decimal("999999.999999")
    for refused in (1.1234567, 1_000_000):
        answer = owner_api.post("/api/agents", {"name": "Too precise", "budgetUsd": refused})
        assert answer.status_code == 400 and "budgetUsd" in answer.json()["error"]["details"], (refused, answer.json())
    assert not Agent.objects.filter(name="Too precise").exists()


@pytest.mark.parametrize("path, component_path, method, field, body", [
    ("/api/agents", "/api/agents", "post", "name", {"name": "   "}),
    ("/api/roles", "/api/roles", "post", "name", {"name": " \t "}),
    ("/api/personas", "/api/personas", "post", "prompt", {"name": "P", "prompt": "   "}),
    ("/api/discussions", None, "post", "name", None),
])
def test_text_of_spaces_is_refused_by_the_server_and_by_the_schema(schema, owner_api, catalog, path, component_path,
                                                                  method, field, body):
    from tests.api.conftest import create_body

    if component_path is None:  # the discussion alternative of the create body
        node = resolve(schema, resolve(schema, schema["paths"][path][method]["requestBody"]["content"]["application/json"]
                                      ["schema"])["oneOf"][0])
        body = create_body(catalog, name="   ")
    else:
        node = request_schema(schema, component_path, method)
    prop = node["properties"][field]
    assert not validator(schema, prop).is_valid(body[field]), prop
    assert validator(schema, prop).is_valid("x " + body[field])
    answer = owner_api.post(path, body)
    assert answer.status_code == 400 and field in answer.json()["error"]["details"], answer.json()


# --- 6. a value of the wrong type is named as such ---------------------------------------------------

def test_wrong_types_in_a_new_discussion_say_what_type_is_wanted(owner_api, catalog):
    from rooms.models import Room
    from tests.api.conftest import create_body

    cases = [({"moderatorId": str(catalog["chair"].pk)}, "moderatorId must be a whole number.", "moderatorId",
              "Must be a whole number."),
             ({"name": 123}, "name must be text.", "name", "Must be text."),
             ({"name": ["x"]}, "name must be text.", "name", "Must be text."),
             ({"topic": {"t": 1}}, "topic must be text.", "topic", "Must be text.")]
    for override, headline, field, detail in cases:
        answer = owner_api.post("/api/discussions", create_body(catalog, **override))
        assert answer.status_code == 400, answer.json()
        error = answer.json()["error"]
        assert (error["message"], error["details"][field]) == (headline, [detail]), error
    assert not Room.objects.exists()
    missing = owner_api.post("/api/discussions", {k: v for k, v in create_body(catalog).items() if k != "moderatorId"})
    assert missing.json()["error"]["message"] == "moderatorId is required."


def test_wrong_types_for_the_facilitator_and_a_token(clients, people, room, catalog):
    from rest_framework.test import APIClient

    from rooms.models import ApiToken

    answer = clients["owner"].patch(f"/api/discussions/{room.pk}/moderator", {"moderatorId": "6"})
    assert answer.status_code == 400 and answer.json()["error"]["message"] == "moderatorId must be a whole number."
    assert clients["owner"].patch(f"/api/discussions/{room.pk}/moderator", {}).json()["error"]["message"] == \
        "moderatorId is required."
    session = APIClient()
    session.force_login(people["owner"])
    before = ApiToken.objects.filter(user=people["owner"]).count()  # the API client's own
    days = session.post("/api/me/tokens", {"expiresInDays": "10"}, format="json")
    assert days.status_code == 400 and days.json()["error"]["message"] == "expiresInDays must be a whole number."
    out_of_range = session.post("/api/me/tokens", {"expiresInDays": 400}, format="json")
    assert out_of_range.json()["error"]["message"] == "expiresInDays is out of range."
    name = session.post("/api/me/tokens", {"name": 5}, format="json")
    assert name.status_code == 400 and name.json()["error"]["message"] == "name must be text."
    assert ApiToken.objects.filter(user=people["owner"]).count() == before


@pytest.mark.parametrize("body, field, headline", [
    ({"name": 5}, "name", "name must be text."),
    ({"name": ["x"]}, "name", "name must be text."),
    ({"name": "Ok", "isFacilitator": "yes"}, "isFacilitator", "isFacilitator must be true or false."),
    ({"name": "Ok", "isFacilitator": 1}, "isFacilitator", "isFacilitator must be true or false."),
    ({"name": "Ok", "alias": 7}, "alias", "alias must be text."),
    ({"name": "Ok", "roleId": "3"}, "roleId", "roleId must be a whole number."),
    ({"name": "Ok", "budgetTokens": 10.0}, "budgetTokens", "budgetTokens must be a whole number."),
])
def test_agents_refuse_values_of_the_wrong_type_instead_of_converting_them(owner_api, people, body, field, headline):
    answer = owner_api.post("/api/agents", body)
    assert answer.status_code == 400, answer.json()
    assert answer.json()["error"]["message"] == headline and field in answer.json()["error"]["details"]
    assert not Agent.objects.filter(created_by=people["owner"]).exists()
    mine = Agent.objects.create(name="Mine", created_by=people["owner"])
    patched = owner_api.patch(f"/api/agents/{mine.pk}", {k: v for k, v in body.items() if k != "name" or len(body) == 1})
    assert patched.status_code == 400 and patched.json()["error"]["message"] == headline
    mine.refresh_from_db()
    assert mine.name == "Mine" and mine.is_facilitator is False


def test_personas_and_roles_refuse_wrong_types_too(owner_api):
    persona = owner_api.post("/api/personas", {"name": "P", "prompt": "Be brief.", "isFacilitator": "true"})
    assert persona.json()["error"]["message"] == "isFacilitator must be true or false."
    role = owner_api.post("/api/roles", {"name": 42})
    assert role.status_code == 400 and role.json()["error"]["message"] == "name must be text."


# --- 7. agent aliases are unique per owner and apart from the built-ins' ------------------------------

def test_an_alias_a_builtin_or_another_agent_of_yours_has_is_refused(clients, people, catalog):
    owner, other = clients["owner"], clients["other"]
    builtin = owner.post("/api/agents", {"name": "Second Ada", "alias": "ADA"})  # catalog: the built-in "ada"
    assert builtin.status_code == 400 and "alias" in builtin.json()["error"]["details"], builtin.json()
    assert "built-in" in builtin.json()["error"]["details"]["alias"][0]
    first = owner.post("/api/agents", {"name": "Architect one", "alias": "architect"})
    assert first.status_code == 201, first.json()
    second = owner.post("/api/agents", {"name": "Architect two", "alias": "architect"})
    assert second.status_code == 400 and "Architect one" in second.json()["error"]["details"]["alias"][0]
    assert other.post("/api/agents", {"name": "Their architect", "alias": "architect"}).status_code == 201  # per owner
    mine = owner.post("/api/agents", {"name": "Reviewer", "alias": "reviewer"}).json()["data"]
    renamed = owner.patch(f"/api/agents/{mine['id']}", {"alias": "architect"})
    assert renamed.status_code == 400 and Agent.objects.get(pk=mine["id"]).alias == "reviewer"
    assert owner.patch(f"/api/agents/{mine['id']}", {"alias": "reviewer", "description": "same alias"}).status_code == 200
    listed = owner.get("/api/agents", {"alias": "architect"}).json()["data"]
    assert [a["name"] for a in listed] == ["Architect one"]
    derived = owner.post("/api/agents", {"name": "Ada"}).json()["data"]  # the name's slug is the built-in's alias
    assert derived["alias"] == "ada-2"


def test_old_duplicate_aliases_resolve_to_one_agent_in_an_import(owner_api, people, catalog):
    from facilitation.discussions.file_io import _agent

    own = Agent.objects.create(name="My Ada", alias="ada", created_by=people["owner"])  # as older rows may be
    assert _agent(people["owner"], "Ada", "ada", False) == catalog["ada"]  # the name matches the built-in's
    assert _agent(people["owner"], "My Ada", "ada", False) == own
    assert _agent(people["owner"], "Someone else", "ada", False) == own  # the owner's own before a built-in


# --- 8. controls without fields still read the body they are sent -----------------------------------

@pytest.mark.parametrize("verb", ["start", "pause", "resume", "stop", "conclude"])
def test_a_malformed_body_stops_a_lifecycle_control(owner_api, room, verb):
    from rooms.models import Room

    if verb in ("pause", "stop", "conclude"):
        assert owner_api.post(f"/api/discussions/{room.pk}/start").status_code == 200
    if verb == "resume":
        assert owner_api.post(f"/api/discussions/{room.pk}/start").status_code == 200
        assert owner_api.post(f"/api/discussions/{room.pk}/pause").status_code == 200
    def state():
        row = Room.objects.get(pk=room.pk)
        return row.status, row.seq  # every change records an event (conclude stays active until the synthesis)

    before = state()
    url = f"/api/discussions/{room.pk}/{verb}"
    malformed = owner_api.client.post(url, '{"bogus":1', content_type="application/json")
    assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "parse_error", malformed.content
    assert owner_api.client.post(url, "[1, 2]", content_type="application/json").status_code == 400
    assert state() == before
    assert owner_api.client.post(url).status_code == 200  # no body at all
    assert state() != before


def test_the_other_controls_without_fields_refuse_malformed_json_and_take_no_body(owner_api, room, people):
    from rooms.models import Room
    from tests.workspace.helpers import make_workspace

    copies = Room.objects.count()
    assert owner_api.client.post(f"/api/discussions/{room.pk}/copy", "{", content_type="application/json").status_code == 400
    assert Room.objects.count() == copies
    assert owner_api.client.post(f"/api/discussions/{room.pk}/copy", "", content_type="application/json").status_code == 201
    ws = make_workspace(people["owner"])
    assert owner_api.client.post(f"/api/discussions/{ws.pk}/start").status_code == 200
    assert owner_api.client.post(f"/api/discussions/{ws.pk}/complete", "{x", content_type="application/json").status_code == 400
    assert Room.objects.get(pk=ws.pk).status == "active"
    assert owner_api.post(f"/api/discussions/{ws.pk}/complete", {}).status_code == 200


def test_a_control_posted_as_an_empty_form_still_runs(owner_api, room):
    from django.test import Client

    from rooms.models import Room

    browser = Client()
    browser.force_login(room.owner)
    assert browser.post(f"/api/discussions/{room.pk}/start").status_code == 200  # multipart, no fields
    assert Room.objects.get(pk=room.pk).status == "active"


def test_a_discussion_patch_of_nulls_is_what_the_schema_allows_and_changes_only_the_budgets(schema, owner_api, room):
    """Every field of the PATCH body may be null, as the server takes it: unchanged, a budget removed."""
    body = {"name": None, "topic": None, "format": None, "status": None, "conclusion": None, "maxRounds": None,
            "turnPolicy": None, "budgetTokens": None, "budgetUsd": None}
    node = request_schema(schema, "/api/discussions/{id}", "patch")
    assert set(body) == set(node["properties"])
    assert [e.message for e in validator(schema, node).iter_errors(body)] == []
    room.budget_tokens = 5000
    room.save(update_fields=["budget_tokens"])
    before = {f: getattr(room, f) for f in ("name", "topic", "format", "status", "conclusion", "max_rounds")}
    answer = owner_api.patch(f"/api/discussions/{room.pk}", body)
    assert answer.status_code == 200, answer.json()
    room.refresh_from_db()
    assert {f: getattr(room, f) for f in before} == before and room.budget_tokens is None
