"""Agents, personas and roles over REST: CRUD, validation, ownership and read-only built-ins."""
import pytest

from rooms.models import Agent, Persona, Role


def test_agent_crud(owner_api):
    persona = owner_api.post("/api/personas", {"name": "Sharp critic", "prompt": "You find the weak spot.",
                                               "bestFor": ["review"], "modelTier": "sonnet"}).json()["data"]
    role = owner_api.post("/api/roles", {"name": "Security reviewer", "function": "Finds risks",
                                         "basePrompt": "Look for risks."}).json()["data"]
    assert persona["key"] == "sharp-critic" and persona["bestFor"] == ["review"] and persona["isBuiltin"] is False
    assert role["key"] == "security-reviewer" and role["basePrompt"] == "Look for risks."

    response = owner_api.post("/api/agents", {
        "name": "Critic", "personaId": persona["id"], "roleId": role["id"], "provider": "rehearsal", "model": "",
        "expertise": ["caching"], "concerns": ["cost"], "budgetTokens": 10000, "budgetUsd": 2.5})
    assert response.status_code == 201
    agent = response.json()["data"]
    assert agent["alias"] == "critic" and agent["persona"] == {"id": persona["id"], "key": "sharp-critic", "name": "Sharp critic"}
    assert agent["role"]["id"] == role["id"] and agent["budgetUsd"] == 2.5 and agent["isFacilitator"] is False
    row = Agent.objects.get(pk=agent["id"])
    assert row.created_by.username == "owner" and row.is_builtin is False

    updated = owner_api.patch(f"/api/agents/{agent['id']}", {"isFacilitator": True, "personaId": None}).json()["data"]
    assert updated["isFacilitator"] is True and updated["persona"] is None and updated["name"] == "Critic"
    assert owner_api.get(f"/api/agents/{agent['id']}").json()["data"]["isFacilitator"] is True

    assert owner_api.delete(f"/api/personas/{persona['id']}").status_code == 200
    assert owner_api.delete(f"/api/roles/{role['id']}").status_code == 409  # still used by the agent
    assert owner_api.delete(f"/api/agents/{agent['id']}").status_code == 200
    assert owner_api.delete(f"/api/roles/{role['id']}").status_code == 200
    assert not Agent.objects.filter(pk=agent["id"]).exists()


@pytest.mark.parametrize("kind, body, field", [
    ("agents", {}, "name"),
    ("agents", {"name": "x", "provider": "skynet"}, "provider"),
    ("agents", {"name": "x", "budgetTokens": -5}, "budgetTokens"),
    ("agents", {"name": "x", "budgetUsd": "lots"}, "budgetUsd"),
    ("agents", {"name": "x", "personaId": 999999}, "personaId"),
    ("agents", {"name": "x", "roleId": "seven"}, "roleId"),
    ("agents", {"name": "x", "expertise": "not a list"}, "expertise"),
    ("agents", {"name": "x" * 121}, "name"),
    ("personas", {"name": "No prompt"}, "prompt"),
    ("personas", {"name": "x", "prompt": "p", "bestFor": ["debate"]}, "bestFor[0]"),
    ("personas", {"name": "x", "prompt": "p", "key": "has spaces"}, "key"),
    ("roles", {"name": ""}, "name"),
    ("roles", {"name": "nul\x00"}, "name"),
])
def test_catalog_validation_creates_nothing(owner_api, kind, body, field):
    before = (Agent.objects.count(), Persona.objects.count(), Role.objects.count())
    response = owner_api.post(f"/api/{kind}", body)
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["details"]
    assert (Agent.objects.count(), Persona.objects.count(), Role.objects.count()) == before


def test_keys_are_unique_per_owner(owner_api, clients):
    assert owner_api.post("/api/roles", {"name": "Scribe", "key": "scribe"}).status_code == 201
    response = owner_api.post("/api/roles", {"name": "Another scribe", "key": "scribe"})
    assert response.status_code == 400 and "key" in response.json()["error"]["details"]
    # An omitted key is derived from the name and made unique among the owner's rows.
    second = owner_api.post("/api/roles", {"name": "Scribe"}).json()["data"]
    assert second["key"] == "scribe-2"
    # Another user neither learns of nor collides with someone else's keys.
    theirs = clients["other"].post("/api/roles", {"name": "Their scribe", "key": "scribe"})
    assert theirs.status_code == 201
    assert clients["other"].post("/api/roles", {"name": "Scribe"}).json()["data"]["key"] == "scribe-2"
    assert clients["other"].post("/api/personas", {"name": "P", "prompt": "p", "key": "scribe"}).status_code == 201
    assert Role.objects.filter(key="scribe").count() == 2


def test_built_in_keys_are_reserved(owner_api):
    builtin = Role.objects.create(key="moderator-x", name="Built-in", is_builtin=True)
    response = owner_api.post("/api/roles", {"name": "Mine", "key": builtin.key})
    assert response.status_code == 400
    assert owner_api.post("/api/roles", {"name": "Moderator X"}).json()["data"]["key"] == "moderator-x-2"


def test_agents_cannot_reference_other_users_personas(owner_api, clients):
    theirs = clients["other"].post("/api/personas", {"name": "Theirs", "prompt": "p"}).json()["data"]
    response = owner_api.post("/api/agents", {"name": "Mine", "personaId": theirs["id"]})
    assert response.status_code == 400 and "personaId" in response.json()["error"]["details"]


def test_builtins_are_read_only_even_for_staff(clients, catalog):
    builtin = catalog["ada"]
    for caller in ("owner", "staff"):
        response = clients[caller].patch(f"/api/agents/{builtin.pk}", {"name": "Hijacked"})
        assert response.status_code == 403 and response.json()["error"]["code"] == "builtin_readonly"
        assert clients[caller].delete(f"/api/agents/{builtin.pk}").status_code == 403
    assert Agent.objects.get(pk=builtin.pk).name == "Ada"


@pytest.mark.parametrize("body", [{"name": ""}, {"budgetUsd": "lots"}, {"expertise": "not a list"}, {"personaId": -1}])
def test_a_built_in_is_read_only_whatever_the_patch_says(clients, catalog, body):
    builtin = catalog["ada"]
    before = Agent.objects.filter(pk=builtin.pk).values().get()
    response = clients["owner"].patch(f"/api/agents/{builtin.pk}", body)
    assert response.status_code == 403 and response.json()["error"]["code"] == "builtin_readonly", response.json()
    persona = Persona.objects.filter(is_builtin=True).first() or Persona.objects.create(
        key="built-in-p", name="Built-in P", prompt="p", is_builtin=True)
    response = clients["owner"].patch(f"/api/personas/{persona.pk}", {"prompt": 5})
    assert response.status_code == 403 and response.json()["error"]["code"] == "builtin_readonly", response.json()
    assert Agent.objects.filter(pk=builtin.pk).values().get() == before


def test_staff_may_change_other_users_custom_rows(clients):
    persona = clients["owner"].post("/api/personas", {"name": "Mine", "prompt": "p"}).json()["data"]
    response = clients["staff"].patch(f"/api/personas/{persona['id']}", {"prompt": "Edited by staff"})
    assert response.status_code == 200 and response.json()["data"]["prompt"] == "Edited by staff"


def test_an_agent_says_whose_it_is_to_whoever_may_see_it(clients, catalog):
    """Every agent answer names the agent's owner by username (null for a built-in); staff, who see everyone's
    agents, read whose each is; nobody else sees another person's agent at all."""
    created = clients["owner"].post("/api/agents", {"name": "Critic"})
    assert created.status_code == 201 and created.json()["data"]["owner"] == "owner"
    agent_id = created.json()["data"]["id"]
    assert clients["owner"].patch(f"/api/agents/{agent_id}", {"description": "Finds gaps"}).json()["data"]["owner"] == "owner"
    assert clients["owner"].get(f"/api/agents/{agent_id}").json()["data"]["owner"] == "owner"
    mine = {a["id"]: a["owner"] for a in clients["owner"].get("/api/agents", {"pageSize": 100}).json()["data"]}
    assert mine[agent_id] == "owner" and mine[catalog["ada"].pk] is None
    assert clients["staff"].get(f"/api/agents/{agent_id}").json()["data"]["owner"] == "owner"
    assert clients["staff"].patch(f"/api/agents/{agent_id}", {"description": "Staff edit"}).json()["data"]["owner"] == "owner"
    everyone = {a["id"]: a["owner"] for a in clients["staff"].get("/api/agents", {"pageSize": 100}).json()["data"]}
    assert everyone[agent_id] == "owner"
    assert clients["other"].get(f"/api/agents/{agent_id}").status_code == 404
    assert agent_id not in {a["id"] for a in clients["other"].get("/api/agents", {"pageSize": 100}).json()["data"]}


def test_agent_filters(owner_api, catalog):
    owner_api.post("/api/agents", {"name": "Own chair", "isFacilitator": True})

    def names(**params):
        return {a["name"] for a in owner_api.get("/api/agents", {"pageSize": 100, **params}).json()["data"]}

    assert names(isFacilitator="true") == {"Chair API", "Own chair"}
    assert names(builtin="false") == {"Own chair"}
    assert names(isFacilitator="true", builtin="true") == {"Chair API"}
    assert "Ada" in names(isFacilitator="false")
    response = owner_api.get("/api/agents", {"isFacilitator": "maybe"})
    assert response.status_code == 400 and "isFacilitator" in response.json()["error"]["details"]


def test_catalog_lists_are_paginated(owner_api, catalog):
    body = owner_api.get("/api/agents", {"pageSize": 2}).json()
    assert len(body["data"]) == 2 and body["meta"]["total"] == 4 and body["meta"]["totalPages"] == 2


def test_agent_that_facilitates_must_stay_a_facilitator(owner_api, catalog):
    from tests.api.conftest import create_body

    chair = owner_api.post("/api/agents", {"name": "My chair", "isFacilitator": True}).json()["data"]
    assert owner_api.post("/api/discussions", create_body(catalog, moderatorId=chair["id"])).status_code == 201
    response = owner_api.patch(f"/api/agents/{chair['id']}", {"isFacilitator": False})
    assert response.status_code == 409
    assert Agent.objects.get(pk=chair["id"]).is_facilitator is True


@pytest.mark.parametrize("kind, body, details", [
    ("agents", {"name": "x", "expertise": ["caching", 5, "y" * 301]},
     {"expertise[1]": ["Must be text."], "expertise[2]": ["Ensure this field has no more than 300 characters."]}),
    ("agents", {"name": "x", "concerns": ["cost", ["nested"]]}, {"concerns[1]": ["Must be text."]}),
    ("personas", {"name": "x", "prompt": "p", "bestFor": ["review", "debate"]},
     {"bestFor[1]": ['"debate" is not a valid choice.']}),
])
def test_a_list_item_s_error_is_named_flat_as_the_discussions_name_theirs(owner_api, kind, body, details):
    """One key per wrong item, ``expertise[1]`` as a discussion's ``participants[0].agentId``, never an object of
    indexes under the field; nothing is created."""
    before = (Agent.objects.count(), Persona.objects.count())
    response = owner_api.post(f"/api/{kind}", body)
    assert response.status_code == 400 and response.json()["error"]["details"] == details
    assert (Agent.objects.count(), Persona.objects.count()) == before


def test_a_list_item_s_error_is_named_flat_on_patch_too(owner_api):
    agent = owner_api.post("/api/agents", {"name": "Critic", "expertise": ["caching"]}).json()["data"]
    response = owner_api.patch(f"/api/agents/{agent['id']}", {"expertise": ["ok", 7]})
    assert response.status_code == 400
    assert response.json()["error"] == {"code": "validation_error", "message": "expertise[1] must be text.",
                                        "details": {"expertise[1]": ["Must be text."]}}
    assert Agent.objects.get(pk=agent["id"]).expertise == ["caching"]
