"""A workspace seats only agents that work: an agent whose own role is the facilitator's or an observer's is refused."""
import pytest

from rooms.models import Invocation, Role, Room, Seat


def _body(catalog, agent, kind="workspace", role="participant"):
    return {"name": "W", "topic": "Plan the migration", "kind": kind, "moderatorId": catalog["chair"].pk,
            "participants": [{"agentId": catalog["ada"].pk, "role": "participant"}, {"agentId": agent.pk, "role": role}]}


@pytest.mark.parametrize("key", ["facilitator", "observer"])
def test_creating_a_workspace_refuses_an_agent_whose_role_does_not_work(owner_api, catalog, key):
    role = Role.objects.filter(key=key).first() or Role.objects.create(key=key, name=key.title(), is_builtin=True)
    agent = catalog["bob"]
    agent.role = role
    agent.save(update_fields=["role"])
    rooms, audits = Room.objects.count(), Invocation.objects.count()
    r = owner_api.post("/api/discussions", _body(catalog, agent))
    assert r.status_code == 400, r.json()
    details = r.json()["error"]["details"]
    assert list(details) == ["participants[1].agentId"], details
    assert f"works as {role.name}" in details["participants[1].agentId"][0]
    assert (Room.objects.count(), Invocation.objects.count()) == (rooms, audits)

    # The same agent sits in a discussion as before, and in a workspace as a seat that does not work.
    r = owner_api.post("/api/discussions", _body(catalog, agent, kind="discussion"))
    assert r.status_code == 201, r.json()
    r = owner_api.post("/api/discussions", _body(catalog, agent, role="observer"))
    assert r.status_code == 201, r.json()
    seat = Seat.objects.get(room_id=r.json()["data"]["id"], agent=agent)
    assert seat.role == "observer" and not seat.is_speaking
