"""Every write through the API leaves an audit Invocation naming who asked."""
from rooms.models import Invocation


def actions(**filters):
    return list(Invocation.objects.filter(kind=Invocation.Kind.ACTION, **filters).order_by("id"))


def test_create_lifecycle_and_delete_are_audited_with_the_caller(owner_api, people, catalog):
    from tests.api.conftest import create_body

    owner = people["owner"]
    response = owner_api.post("/api/discussions", create_body(catalog))
    assert response.status_code == 201
    room_id = response.json()["data"]["id"]
    for verb in ("start", "pause", "resume", "conclude"):
        assert owner_api.post(f"/api/discussions/{room_id}/{verb}").status_code == 200
    rows = actions(room_id=room_id)
    assert [r.component for r in rows] == ["room.create", "lifecycle.start", "lifecycle.pause", "lifecycle.resume",
                                           "lifecycle.conclude"]
    assert all(r.user == owner for r in rows)
    assert rows[2].input == {"before": {"status": "active"}, "after": {"status": "paused"}}
    assert len({r.correlation_id for r in rows}) == len(rows)  # separate requests, separate ids
    assert owner_api.post(f"/api/discussions/{room_id}/stop").status_code == 200
    assert actions(room_id=room_id)[-1].component == "lifecycle.stop"
    assert owner_api.delete(f"/api/discussions/{room_id}").status_code == 200
    (deleted,) = actions(component="room.delete")
    assert deleted.user == owner and deleted.input["before"]["id"] == room_id


def test_a_refused_transition_leaves_no_audit_row(owner_api, room):
    before = Invocation.objects.count()
    assert owner_api.post(f"/api/discussions/{room.pk}/pause").status_code == 409
    assert Invocation.objects.count() == before


def test_one_patch_is_one_correlation(owner_api, room, people):
    response = owner_api.patch(f"/api/discussions/{room.pk}", {"name": "Renamed", "status": "active"})
    assert response.status_code == 200
    update, start = actions(room=room)[-2:]
    assert (update.component, start.component) == ("room.update", "lifecycle.start")
    assert update.correlation_id == start.correlation_id
    assert update.user == start.user == people["owner"]


def test_moderator_members_and_catalog_are_audited(owner_api, room, people, catalog):
    owner = people["owner"]
    chair = catalog["chair"]
    assert owner_api.patch(f"/api/discussions/{room.pk}/moderator", {"moderatorId": chair.pk}).status_code == 200
    assert owner_api.post(f"/api/discussions/{room.pk}/members", {"username": "other", "access": "viewer"}).status_code == 201
    assert owner_api.post(f"/api/discussions/{room.pk}/members", {"username": "other", "access": "participant"}).status_code == 200
    assert owner_api.delete(f"/api/discussions/{room.pk}/members/other").status_code == 200
    assert [r.component for r in actions(room=room, user=owner)][-4:] == [
        "room.change_moderator", "room.share", "room.share", "room.unshare"]

    created = owner_api.post("/api/agents", {"name": "Mine"}).json()["data"]
    assert owner_api.patch(f"/api/agents/{created['id']}", {"model": "small"}).status_code == 200
    assert owner_api.delete(f"/api/agents/{created['id']}").status_code == 200
    role = owner_api.post("/api/roles", {"name": "Scribe"}).json()["data"]
    assert owner_api.patch(f"/api/roles/{role['id']}", {"function": "notes"}).status_code == 200
    assert owner_api.delete(f"/api/roles/{role['id']}").status_code == 200
    persona = owner_api.post("/api/personas", {"name": "Dry", "prompt": "Be dry."}).json()["data"]
    assert owner_api.patch(f"/api/personas/{persona['id']}", {"style": "terse"}).status_code == 200
    assert owner_api.delete(f"/api/personas/{persona['id']}").status_code == 200
    assert [r.component for r in actions(room=None, user=owner, component__startswith="catalog.")] == [
        "catalog.agent_create", "catalog.agent_update", "catalog.agent_delete",
        "catalog.role_create", "catalog.role_update", "catalog.role_delete",
        "catalog.persona_create", "catalog.persona_update", "catalog.persona_delete",
    ]


def test_socket_controls_are_audited_with_the_connection_user(people, room):
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.sockets import run_control
    from rooms.models import ApiToken
    from tests.factories import make_token

    owner = people["owner"]
    do_start_discussion(room, actor=owner)
    make_token(owner)
    who = {"user_id": owner.pk, "auth": "token", "token_id": ApiToken.objects.filter(user=owner).latest("id").pk}
    assert run_control(who, room.pk, "pause")["ok"] is True
    last = actions(room=room)[-1]
    assert (last.component, last.user, last.input["after"]) == ("lifecycle.pause", owner, {"status": "paused"})
    # A connection whose credential no longer stands is refused before anything is written.
    stale = {"user_id": owner.pk, "auth": "session", "session_key": None}
    assert run_control(stale, room.pk, "resume")["ok"] is False
    assert actions(room=room)[-1] == last
