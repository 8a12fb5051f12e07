"""Agent aliases are never empty and are looked up without case.

A name that slugifies to nothing (``日本語``, ``!!!``) gave ``alias: ""``, shared by every such agent;
``PATCH {"alias": ""}`` wiped an alias; ``?alias=`` (empty) ignored the filter; and ``?alias=ARCHITECT``
found nothing though ``architect`` exists (aliases are unique without case, as @mentions compare them)."""
import pytest

from rooms.models import Agent


@pytest.mark.parametrize("name", ["日本語", "!!!"])
def test_a_name_without_latin_letters_or_digits_gets_a_usable_alias(owner_api, name):
    first = owner_api.post("/api/agents", {"name": name})
    assert first.status_code == 201, first.json()
    assert first.json()["data"]["alias"] == "agent"
    second = owner_api.post("/api/agents", {"name": f"{name} {name}"})
    assert second.status_code == 201, second.json()
    assert second.json()["data"]["alias"] == "agent-2"  # numbered like any derived alias
    found = owner_api.get("/api/agents", {"alias": "agent-2"}).json()["data"]
    assert [a["id"] for a in found] == [second.json()["data"]["id"]]


def test_an_alias_sent_empty_is_derived_from_the_name(owner_api):
    created = owner_api.post("/api/agents", {"name": "Architect", "alias": ""}).json()["data"]
    assert created["alias"] == "architect"
    other = owner_api.post("/api/agents", {"name": "Reviewer", "alias": "rev"}).json()["data"]
    wiped = owner_api.patch(f"/api/agents/{other['id']}", {"alias": ""})
    assert wiped.status_code == 200, wiped.json()
    assert wiped.json()["data"]["alias"] == "reviewer"  # derived again, not wiped
    renamed = owner_api.patch(f"/api/agents/{other['id']}", {"name": "Architect (second)", "alias": "  "}).json()["data"]
    assert renamed["alias"] == "architect-second"
    again = owner_api.patch(f"/api/agents/{created['id']}", {"alias": ""}).json()["data"]
    assert again["alias"] == "architect"  # its own alias does not stand in its way
    unnamed = owner_api.post("/api/agents", {"name": "!!!"}).json()["data"]
    assert owner_api.patch(f"/api/agents/{unnamed['id']}", {"alias": ""}).json()["data"]["alias"] == "agent"
    assert not Agent.objects.filter(alias="").exists()


@pytest.mark.parametrize("route, param", [("/api/agents", "alias"), ("/api/personas", "key"), ("/api/roles", "key")])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_lookup_is_a_400(owner_api, route, param, value):
    answer = owner_api.get(route, {param: value})
    assert answer.status_code == 400, answer.json()
    error = answer.json()["error"]
    assert error["code"] == "validation_error" and list(error["details"]) == [param]


def test_alias_lookup_ignores_case(owner_api, catalog):
    mine = owner_api.post("/api/agents", {"name": "Systems architect", "alias": "architect"}).json()["data"]
    for asked in ("ARCHITECT", "Architect", "architect"):
        found = owner_api.get("/api/agents", {"alias": asked}).json()["data"]
        assert [a["id"] for a in found] == [mine["id"]], asked
    assert [a["id"] for a in owner_api.get("/api/agents", {"alias": "ADA"}).json()["data"]] == [catalog["ada"].pk]
    assert owner_api.get("/api/agents", {"alias": "architec"}).json()["data"] == []


def test_the_schema_says_so(owner_api):
    schema = owner_api.get("/api/schema").json()
    params = {p["name"]: p for p in schema["paths"]["/api/agents"]["get"]["parameters"]}
    assert params["alias"]["schema"]["minLength"] == 1 and "without case" in params["alias"]["description"]
    alias = schema["components"]["schemas"]["AgentInRequest"]["properties"]["alias"]
    assert "derived from the name" in alias["description"]


def test_a_taken_alias_is_named_as_it_is_stored(owner_api, catalog):
    """The refusal named the alias as the caller typed it (``'REV'``), which hid what it clashed with."""
    reviewer = owner_api.post("/api/agents", {"name": "Reviewer", "alias": "rev"}).json()["data"]
    created = owner_api.post("/api/agents", {"name": "Second reviewer", "alias": "REV"})
    assert created.status_code == 400
    assert created.json()["error"]["details"]["alias"] == [
        "Your agent 'Reviewer' already uses the alias 'rev' (aliases are compared without case); choose another."]
    assert not Agent.objects.filter(name="Second reviewer").exists()
    writer = owner_api.post("/api/agents", {"name": "Writer", "alias": "writer"}).json()["data"]
    for asked, stored, holder in (("Rev", "rev", "Your agent 'Reviewer'"), ("ADA", "ada", "The built-in agent 'Ada'")):
        changed = owner_api.patch(f"/api/agents/{writer['id']}", {"alias": asked})
        assert changed.status_code == 400
        message = changed.json()["error"]["details"]["alias"][0]
        assert message.startswith(f"{holder} ") and f"the alias {stored!r} (aliases are compared without case)" in message
    same = owner_api.patch(f"/api/agents/{writer['id']}", {"alias": "rev"}).json()["error"]["details"]["alias"]
    assert same == ["Your agent 'Reviewer' already uses the alias 'rev'; choose another."]  # typed as stored
    assert Agent.objects.get(pk=writer["id"]).alias == "writer" and reviewer["alias"] == "rev"
