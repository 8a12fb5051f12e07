"""The admin checks an agent's alias as the API does, with the same function (``alias_problem``): unique among
the owner's agents and the built-ins (compared without case), a slug, never empty (derived from the name). It
saved any alias before: a duplicate @mentions could not tell apart, a built-in's, or (for two built-ins) a 500."""
import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from rooms.models import Agent
from tests.factories import make_user

WITHOUT_CASE = "(aliases are compared without case)"


@pytest.fixture
def admin_client(client, db):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


def change(client, agent: Agent, **over):
    """POST the admin's change form of ``agent`` with ``over`` changed."""
    data = {"name": agent.name, "alias": agent.alias, "description": agent.description, "role": agent.role_id or "",
            "persona": agent.persona_id or "", "provider": agent.provider, "model": agent.model,
            "expertise": json.dumps(agent.expertise), "concerns": json.dumps(agent.concerns), "budget_tokens": "",
            "budget_usd": "", "created_by": agent.created_by_id or ""}
    if agent.is_facilitator:
        data["is_facilitator"] = "on"
    if agent.is_builtin:
        data["is_builtin"] = "on"
    data.update(over)
    return client.post(reverse("admin:rooms_agent_change", args=[agent.pk]), data)


def form_errors(response) -> dict:
    assert response.status_code == 200, response.status_code  # the form again, not a redirect
    return {name: [str(e) for e in errors] for name, errors in response.context["adminform"].form.errors.items()}


@pytest.fixture
def mine(owner_api):
    """Two agents of the owner, made through the API."""
    return [owner_api.post("/api/agents", {"name": name, "alias": alias}).json()["data"]
            for name, alias in (("Reviewer", "rev"), ("Writer", "writer"))]


def test_an_alias_another_of_the_owners_agents_has_is_a_form_error_as_in_the_api(admin_client, owner_api, mine):
    writer = Agent.objects.get(pk=mine[1]["id"])
    api = owner_api.patch(f"/api/agents/{writer.pk}", {"alias": "REV"}).json()["error"]["details"]["alias"]
    # named as stored ('rev'), not as typed
    assert api == [f"Your agent 'Reviewer' already uses the alias 'rev' {WITHOUT_CASE}; choose another."]
    # the staff member is not the owner: the agent is the owner's, not "yours"
    owner = writer.created_by.username
    assert form_errors(change(admin_client, writer, alias="REV")) == {
        "alias": [f"The agent 'Reviewer' of {owner} already uses the alias 'rev' {WITHOUT_CASE}; choose another."]}
    writer.refresh_from_db()
    assert writer.alias == "writer"


def test_a_staff_member_changing_their_own_agent_hears_it_is_theirs(admin_client):
    me = get_user_model().objects.get(username="root")  # admin_client signs in as root
    Agent.objects.create(name="Mine", alias="mine", created_by=me)
    other = Agent.objects.create(name="Other", alias="other", created_by=me)
    assert form_errors(change(admin_client, other, alias="MINE")) == {
        "alias": [f"Your agent 'Mine' already uses the alias 'mine' {WITHOUT_CASE}; choose another."]}


def test_a_built_ins_alias_is_a_form_error(admin_client, owner_api, mine, catalog):
    writer = Agent.objects.get(pk=mine[1]["id"])
    api = owner_api.patch(f"/api/agents/{writer.pk}", {"alias": "Ada"}).json()["error"]["details"]["alias"]
    assert form_errors(change(admin_client, writer, alias="Ada")) == {"alias": api}
    # two built-ins cannot share one either (that was a 500: the database's constraint)
    assert "alias" in form_errors(change(admin_client, catalog["bob"], alias="ada"))
    # nor can a built-in take an alias someone's agent has
    assert "alias" in form_errors(change(admin_client, catalog["bob"], alias="writer"))
    assert Agent.objects.get(pk=catalog["bob"].pk).alias == "bob"


def test_moving_an_agent_to_an_owner_who_has_its_alias_is_a_form_error(admin_client, owner_api, mine, people):
    theirs = Agent.objects.create(name="Other writer", alias="writer", created_by=people["other"])
    assert "alias" in form_errors(change(admin_client, theirs, created_by=people["owner"].pk))
    assert Agent.objects.get(pk=theirs.pk).created_by == people["other"]


@pytest.mark.parametrize("alias", ["two words", "naïve", "x" * 65])
def test_an_alias_that_is_no_slug_is_a_form_error(admin_client, mine, alias):
    writer = Agent.objects.get(pk=mine[1]["id"])
    assert "alias" in form_errors(change(admin_client, writer, alias=alias))
    assert Agent.objects.get(pk=writer.pk).alias == "writer"


def test_an_empty_alias_is_derived_from_the_name_and_a_free_one_is_saved(admin_client, mine):
    writer = Agent.objects.get(pk=mine[1]["id"])
    assert change(admin_client, writer, alias="", name="Reviewer two").status_code == 302
    assert Agent.objects.get(pk=writer.pk).alias == "reviewer-two"
    reviewer = Agent.objects.get(pk=mine[0]["id"])
    assert change(admin_client, reviewer, alias="", name="Writer").status_code == 302
    assert Agent.objects.get(pk=reviewer.pk).alias == "writer"  # writer is free again
    assert change(admin_client, reviewer, alias="42nd_writer").status_code == 302
    assert Agent.objects.get(pk=reviewer.pk).alias == "42nd_writer"


def test_an_older_duplicate_keeps_its_alias_when_edited(admin_client, people):
    first = Agent.objects.create(name="Old one", alias="dup", created_by=people["owner"])
    second = Agent.objects.create(name="Old two", alias="dup", created_by=people["owner"])  # before the rule
    assert change(admin_client, second, description="still here").status_code == 302
    assert Agent.objects.get(pk=second.pk).description == "still here" and first.alias == "dup"
