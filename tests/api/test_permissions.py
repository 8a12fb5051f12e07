"""The permission matrix: every route, for anonymous, another user, viewer, participant, owner and staff.

Each cell asserts the status code and the envelope; a denied call must leave every
row as it was, and an allowed one must have its effect.
"""
from dataclasses import dataclass, field
from typing import Callable

import pytest

from facilitation.actions import lifecycle
from rooms.models import Agent, Invocation, Observation, Persona, Role, Room, RoomEvent, RoomMember, Seat

CALLERS = ("anonymous", "other", "viewer", "participant", "owner", "staff")
SNAPSHOT_MODELS = (Room, Seat, RoomMember, RoomEvent, Observation, Invocation, Agent, Persona, Role)


def snapshot() -> dict:
    return {m.__name__: list(m.objects.order_by("pk").values()) for m in SNAPSHOT_MODELS}


def expect(anonymous=401, other=404, viewer=200, participant=200, owner=200, staff=200) -> dict:
    return dict(anonymous=anonymous, other=other, viewer=viewer, participant=participant, owner=owner, staff=staff)


READ = expect()
CONTROL = expect(viewer=403, participant=403)
OWN_CATALOG = expect(other=404, viewer=404, participant=404)
BUILTIN_READONLY = expect(other=403, viewer=403, participant=403, owner=403, staff=403)
ANY_USER = expect(other=200, viewer=200, participant=200)
ANY_USER_CREATES = expect(other=201, viewer=201, participant=201, owner=201, staff=201)


@dataclass
class Route:
    name: str
    method: str
    path: str  # {room}, {custom}, {builtin} are filled in
    expected: dict
    body: Callable | None = None
    prepare: Callable | None = None  # room -> None, run before the call
    effect: Callable | None = None  # (ctx, response) -> None, for allowed calls
    params: dict = field(default_factory=dict)


def _status(value):
    return lambda ctx, r: _assert_room(ctx, status=value)


def _assert_room(ctx, **fields):
    room = Room.objects.get(pk=ctx["room"].pk)
    for name, value in fields.items():
        assert getattr(room, name) == value, (name, getattr(room, name), value)


def _start(room):
    lifecycle.do_start_discussion(room)


def _start_and_pause(room):
    lifecycle.do_start_discussion(room)
    lifecycle.do_pause_discussion(room)


def _created(model, **lookup):
    return lambda ctx, r: model.objects.get(pk=r.json()["data"]["id"], **lookup)


def _gone(model, key):
    return lambda ctx, r: not model.objects.filter(pk=ctx[key].pk).exists() or pytest.fail("row still exists")


def _member(username, present):
    def check(ctx, r):
        assert RoomMember.objects.filter(room=ctx["room"], user__username=username).exists() is present
    return check


def _body_for_create(ctx):
    return {"name": "New one", "topic": "T", "moderatorId": ctx["chair"].pk,
            "participants": [{"agentId": ctx["speaker"].pk, "role": "participant"}]}


ROUTES = [
    Route("list", "get", "/api/discussions", ANY_USER),
    Route("create", "post", "/api/discussions", ANY_USER_CREATES, body=_body_for_create,
          effect=lambda ctx, r: Room.objects.get(pk=r.json()["data"]["id"], name="New one")),
    Route("retrieve", "get", "/api/discussions/{room}", READ),
    Route("update", "patch", "/api/discussions/{room}", CONTROL, body=lambda ctx: {"name": "Renamed"},
          effect=lambda ctx, r: _assert_room(ctx, name="Renamed")),
    Route("update-status", "patch", "/api/discussions/{room}", CONTROL, body=lambda ctx: {"status": "active"},
          effect=_status("active")),
    Route("destroy", "delete", "/api/discussions/{room}", CONTROL, effect=_gone(Room, "room")),
    Route("moderator", "patch", "/api/discussions/{room}/moderator", CONTROL,
          body=lambda ctx: {"moderatorId": ctx["chair"].pk}, effect=lambda ctx, r: _assert_room(ctx, moderator_id=ctx["chair"].pk)),
    Route("start", "post", "/api/discussions/{room}/start", CONTROL, effect=_status("active")),
    Route("pause", "post", "/api/discussions/{room}/pause", CONTROL, prepare=_start, effect=_status("paused")),
    Route("resume", "post", "/api/discussions/{room}/resume", CONTROL, prepare=_start_and_pause, effect=_status("active")),
    Route("stop", "post", "/api/discussions/{room}/stop", CONTROL, prepare=_start, effect=_status("stopped")),
    Route("conclude", "post", "/api/discussions/{room}/conclude", CONTROL, prepare=_start,
          effect=lambda ctx, r: Room.objects.get(pk=ctx["room"].pk).engine_state["phase"] == "synthesis" or pytest.fail("no synthesis")),
    Route("turns", "get", "/api/discussions/{room}/turns", READ),
    Route("export-md", "get", "/api/discussions/{room}/export", READ, params={"format": "md"}),
    Route("export-docx", "get", "/api/discussions/{room}/export", READ, params={"format": "docx"}),
    Route("members", "get", "/api/discussions/{room}/members", CONTROL),
    Route("members-add", "post", "/api/discussions/{room}/members", expect(viewer=403, participant=403, owner=201, staff=201),
          body=lambda ctx: {"username": "other", "access": "viewer"}, effect=_member("other", True)),
    Route("members-remove", "delete", "/api/discussions/{room}/members", CONTROL,
          body=lambda ctx: {"username": "viewer"}, effect=_member("viewer", False)),
    Route("member-remove", "delete", "/api/discussions/{room}/members/participant", CONTROL,
          effect=_member("participant", False)),
]
for kind, model, body in (
    ("agents", Agent, lambda ctx: {"name": "Custom agent"}),
    ("personas", Persona, lambda ctx: {"name": "Custom persona", "prompt": "Speak plainly."}),
    ("roles", Role, lambda ctx: {"name": "Custom role"}),
):
    ROUTES += [
        Route(f"{kind}-list", "get", f"/api/{kind}", ANY_USER),
        Route(f"{kind}-create", "post", f"/api/{kind}", ANY_USER_CREATES, body=body, effect=_created(model)),
        Route(f"{kind}-retrieve-custom", "get", f"/api/{kind}/{{custom_{kind}}}", OWN_CATALOG),
        Route(f"{kind}-update-custom", "patch", f"/api/{kind}/{{custom_{kind}}}", OWN_CATALOG,
              body=lambda ctx: {"name": "Renamed"},
              effect=lambda ctx, r, m=model, k=kind: m.objects.get(pk=ctx[f"custom_{k}"].pk, name="Renamed")),
        Route(f"{kind}-destroy-custom", "delete", f"/api/{kind}/{{custom_{kind}}}", OWN_CATALOG,
              effect=lambda ctx, r, m=model, k=kind: _gone(m, f"custom_{k}")(ctx, r)),
        Route(f"{kind}-retrieve-builtin", "get", f"/api/{kind}/{{builtin_{kind}}}", expect(other=200, viewer=200, participant=200)),
        Route(f"{kind}-update-builtin", "patch", f"/api/{kind}/{{builtin_{kind}}}", BUILTIN_READONLY,
              body=lambda ctx: {"name": "Hijacked"}),
        Route(f"{kind}-destroy-builtin", "delete", f"/api/{kind}/{{builtin_{kind}}}", BUILTIN_READONLY),
    ]


@pytest.fixture
def ctx(people, room, catalog):
    owner = people["owner"]
    custom_persona = Persona.objects.create(key="owner-persona", name="Owner persona", prompt="Mine.", created_by=owner)
    custom_role = Role.objects.create(key="owner-role", name="Owner role", created_by=owner)
    custom_agent = Agent.objects.create(name="Owner agent", alias="owner-agent", created_by=owner)
    builtin_persona = Persona.objects.create(key="preset-persona", name="Preset persona", prompt="Preset.", is_builtin=True)
    builtin_role = Role.objects.create(key="preset-role", name="Preset role", is_builtin=True)
    return {
        "room": room, "chair": catalog["chair"], "speaker": catalog["cyd"],
        "custom_agents": custom_agent, "custom_personas": custom_persona, "custom_roles": custom_role,
        "builtin_agents": catalog["ada"], "builtin_personas": builtin_persona, "builtin_roles": builtin_role,
    }


def _path(route: Route, ctx) -> str:
    values = {"room": ctx["room"].pk, **{k: v.pk for k, v in ctx.items() if k.startswith(("custom_", "builtin_"))}}
    return route.path.format(**values)


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_permission_matrix(route, caller, ctx, clients):
    if route.prepare:
        route.prepare(ctx["room"])
    before = snapshot()
    api = clients[caller]
    path = _path(route, ctx)
    kwargs = {}
    if route.body:
        kwargs["body"] = route.body(ctx)
    if route.params:
        kwargs["params"] = route.params
    response = getattr(api, route.method)(path, **kwargs)

    expected = route.expected[caller]
    assert response.status_code == expected, (caller, route.name, response.status_code, response.content[:300])
    if expected >= 400:
        body = response.json()
        assert body["success"] is False and body["error"]["code"] and body["error"]["message"]
        assert snapshot() == before, f"{caller} was denied {route.name} but rows changed"
    elif response["Content-Type"].startswith("application/json"):
        assert response.json()["success"] is True
        if route.effect:
            route.effect(ctx, response)
    elif route.effect:
        route.effect(ctx, response)


def test_list_shows_only_visible_discussions(ctx, clients, people):
    mine = clients["other"].post("/api/discussions", _body_for_create(ctx)).json()["data"]["id"]
    seen = {name: {d["id"] for d in clients[name].get("/api/discussions").json()["data"]}
            for name in ("other", "viewer", "participant", "owner", "staff")}
    room = ctx["room"].pk
    assert seen["other"] == {mine}
    assert seen["viewer"] == {room} and seen["participant"] == {room} and seen["owner"] == {room}
    assert seen["staff"] == {room, mine}
    accesses = {name: clients[name].get(f"/api/discussions/{room}").json()["data"]["access"]
                for name in ("viewer", "participant", "owner", "staff")}
    assert accesses == {"viewer": "viewer", "participant": "participant", "owner": "owner", "staff": "staff"}


def test_catalog_lists_hide_other_users_custom_rows(ctx, clients):
    for kind in ("agents", "personas", "roles"):
        custom = ctx[f"custom_{kind}"].pk
        builtin = ctx[f"builtin_{kind}"].pk
        for caller, sees_custom in (("other", False), ("viewer", False), ("owner", True), ("staff", True)):
            ids = {row["id"] for row in clients[caller].get(f"/api/{kind}", {"pageSize": 100}).json()["data"]}
            assert (custom in ids) is sees_custom, (kind, caller)
            assert builtin in ids


def test_session_authentication_works_too(ctx, people):
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)
    client.force_login(people["viewer"])
    assert client.get(f"/api/discussions/{ctx['room'].pk}").status_code == 200
    # Session-authenticated writes need the CSRF token, like any browser form.
    response = client.patch(f"/api/discussions/{ctx['room'].pk}", {"name": "x"}, format="json")
    assert response.status_code == 403 and response.json()["success"] is False
