"""One owner's agents have names of their own (compared without case), so a facilitator picked by name is
the one meant; other owners and the built-ins may share a name, and an older duplicate keeps its own."""
import pytest

from rooms.actions import catalog
from rooms.errors import ValidationFailed
from rooms.models import Agent, Invocation
from tests.factories import make_user


@pytest.mark.django_db
def test_a_second_agent_of_one_name_is_refused_and_nothing_is_written():
    owner = make_user("namer")
    first = catalog.do_create_agent(owner, name="Chair", is_facilitator=True)
    agents, audits = Agent.objects.count(), Invocation.objects.count()
    with pytest.raises(ValidationFailed) as refused:
        catalog.do_create_agent(owner, name=" chair ", is_facilitator=True)
    assert list(refused.value.details) == ["name"] and "already have an agent named 'chair'" in refused.value.details["name"][0]
    assert (Agent.objects.count(), Invocation.objects.count()) == (agents, audits)
    # Renaming another agent to it is refused too; the agent itself may keep or recase its name.
    other = catalog.do_create_agent(owner, name="Scribe")
    with pytest.raises(ValidationFailed):
        catalog.do_update_agent(other, owner, name="CHAIR")
    assert Agent.objects.get(pk=other.pk).name == "Scribe"
    assert catalog.do_update_agent(first, owner, name="CHAIR", description="recased").name == "CHAIR"


@pytest.mark.django_db
def test_other_owners_builtins_and_older_duplicates_are_not_held_to_it():
    owner, other = make_user("one"), make_user("two")
    catalog.do_create_agent(owner, name="Chair")
    assert catalog.do_create_agent(other, name="Chair").name == "Chair"
    Agent.objects.create(name="Architect", alias="architect-builtin-x", is_builtin=True)
    assert catalog.do_create_agent(owner, name="Architect").name == "Architect"
    twin = Agent.objects.create(name="Chair", alias="chair-old", created_by=owner)  # as rows from before the rule may be
    assert catalog.do_update_agent(twin, owner, description="still a twin").description == "still a twin"


@pytest.mark.django_db
def test_the_rest_route_answers_400_on_name(client):
    client.force_login(make_user("rest"))
    assert client.post("/api/agents", {"name": "Ada Twin"}, content_type="application/json").status_code == 201
    r = client.post("/api/agents", {"name": "ada twin"}, content_type="application/json")
    assert r.status_code == 400 and list(r.json()["error"]["details"]) == ["name"], r.json()
