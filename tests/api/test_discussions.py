"""Discussions over REST: creation and its validation, updates, the lifecycle, turns, pagination and filters."""
import jsonschema
import pytest

from facilitation.actions import lifecycle
from rooms.models import Invocation, Observation, Room, RoomEvent, Seat
from tests.api.conftest import create_body, new_discussion
from tests.factories import make_participant


def counts():
    return Room.objects.count(), Seat.objects.count(), RoomEvent.objects.count()


def test_create_returns_the_discussion_with_defaults(owner_api, catalog):
    body = create_body(catalog)
    del body["maxRounds"]
    response = owner_api.post("/api/discussions", body)
    assert response.status_code == 201
    data = response.json()["data"]
    assert data["status"] == "draft" and data["round"] == 0 and data["maxRounds"] == 5
    assert data["kind"] == "discussion" and data["format"] == "deliberation"
    assert data["moderator"]["id"] == catalog["chair"].pk
    assert [(p["agentId"], p["role"]) for p in data["participants"]] == [
        (catalog["ada"].pk, "participant"), (catalog["bob"].pk, "devil_advocate")]
    assert data["conclusion"] == "" and data["rehearsal"] is False and data["usage"]["calls"] == 0
    room = Room.objects.get(pk=data["id"])
    assert room.owner.username == "owner"
    assert list(room.seats.values_list("role", flat=True)) == ["facilitator", "participant", "devil_advocate"]


def test_create_accepts_kind_and_budgets(owner_api, catalog):
    body = create_body(catalog, kind="workspace", format="brainstorm", budgetTokens=5000, budgetUsd=1.25)
    data = owner_api.post("/api/discussions", body).json()["data"]
    assert (data["kind"], data["format"], data["budgetTokens"], data["budgetUsd"]) == ("workspace", "brainstorm", 5000, 1.25)


@pytest.mark.parametrize("change, field", [
    ({"maxRounds": 0}, "maxRounds"),
    ({"maxRounds": 21}, "maxRounds"),
    ({"maxRounds": "x"}, "maxRounds"),
    ({"maxRounds": 2.5}, "maxRounds"),
    ({"format": "debate"}, "format"),
    ({"kind": "party"}, "kind"),
    ({"name": ""}, "name"),
    ({"topic": "   "}, "topic"),
    ({"moderatorId": None}, "moderatorId"),
    ({"moderatorId": 999999}, "moderatorId"),
    ({"participants": []}, "participants"),
    ({"participants": "ada"}, "participants"),
    ({"budgetTokens": -1}, "budgetTokens"),
    ({"budgetUsd": "lots"}, "budgetUsd"),
    ({"budgetUsd": 1000000}, "budgetUsd"),  # more than the column holds
    ({"budgetUsd": 999999.9999995}, "budgetUsd"),  # rounds up to it
    ({"budgetUsd": 1e308}, "budgetUsd"),  # too many digits to round to the micro-unit
    ({"budgetUsd": "1e999"}, "budgetUsd"),
    ({"budgetUsd": -1e300}, "budgetUsd"),
    ({"name": "nul\x00byte"}, "name"),
])
def test_create_rejects_bad_fields_and_creates_nothing(owner_api, catalog, change, field):
    before = counts()
    response = owner_api.post("/api/discussions", create_body(catalog, **change))
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert response.json()["success"] is False and error["code"] == "validation_error"
    assert field in error["details"], error
    assert counts() == before


def test_create_rejects_unknown_role(owner_api, catalog):
    body = create_body(catalog, participants=[{"agentId": catalog["ada"].pk, "role": "heckler"}])
    before = counts()
    response = owner_api.post("/api/discussions", body)
    assert response.status_code == 400
    assert "participants[0].role" in response.json()["error"]["details"]
    assert counts() == before


def test_create_rejects_the_facilitator_as_participant(owner_api, catalog):
    body = create_body(catalog, participants=[{"agentId": catalog["ada"].pk, "role": "participant"},
                                              {"agentId": catalog["chair"].pk, "role": "participant"}])
    before = counts()
    response = owner_api.post("/api/discussions", body)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["participants[1].agentId"] == ["The facilitator cannot also be a participant."]
    assert counts() == before


def test_create_rejects_a_moderator_that_is_not_a_facilitator(owner_api, catalog):
    before = counts()
    response = owner_api.post("/api/discussions", create_body(catalog, moderatorId=catalog["cyd"].pk))
    assert response.status_code == 400
    assert "moderatorId" in response.json()["error"]["details"]
    assert counts() == before


def test_create_rejects_observers_only(owner_api, catalog):
    body = create_body(catalog, participants=[{"agentId": catalog["ada"].pk, "role": "observer"},
                                              {"agentId": catalog["bob"].pk, "role": "observer"}])
    before = counts()
    response = owner_api.post("/api/discussions", body)
    assert response.status_code == 400
    assert "participants" in response.json()["error"]["details"]
    assert counts() == before


def test_create_rejects_other_users_custom_agents(clients, catalog, people):
    from rooms.models import Agent

    theirs = Agent.objects.create(name="Private", alias="private", created_by=people["other"])
    body = create_body(catalog, participants=[{"agentId": theirs.pk, "role": "participant"}])
    response = clients["owner"].post("/api/discussions", body)
    assert response.status_code == 400 and "participants[0].agentId" in response.json()["error"]["details"]


@pytest.mark.parametrize("payload", [[1, 2], "text", 5])
def test_create_rejects_a_body_that_is_not_an_object(owner_api, payload):
    response = owner_api.post("/api/discussions", payload)
    assert response.status_code == 400 and response.json()["error"]["details"] == {"body": ["Send a JSON object."]}


def test_malformed_json_is_a_400_envelope(owner_api):
    response = owner_api.client.post("/api/discussions", "{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "parse_error"


def test_form_bodies_are_415(owner_api):
    response = owner_api.client.post("/api/discussions", {"name": "x"})  # multipart
    assert response.status_code == 415 and response.json()["error"]["code"] == "unsupported_media_type"


def test_patch_updates_fields(owner_api, room):
    response = owner_api.patch(f"/api/discussions/{room.pk}", {"name": "Renamed", "topic": "New topic", "format": "review",
                                                              "maxRounds": 7, "conclusion": "Draft notes"})
    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["name"], data["topic"], data["format"], data["maxRounds"], data["conclusion"]) == (
        "Renamed", "New topic", "review", 7, "Draft notes")


@pytest.mark.parametrize("change, field", [({"maxRounds": 0}, "maxRounds"), ({"maxRounds": 21}, "maxRounds"),
                                           ({"format": "debate"}, "format"), ({"name": ""}, "name"),
                                           ({"status": "exploded"}, "status"), ({"conclusion": 5}, "conclusion"),
                                           ({"moderatorId": 1}, "moderatorId"), ({"participants": []}, "participants"),
                                           ({"budgetTokens": 0}, "budgetTokens"), ({"budgetTokens": "lots"}, "budgetTokens"),
                                           ({"budgetUsd": -1}, "budgetUsd"), ({"budgetUsd": "NaN"}, "budgetUsd"),
                                           ({"budgetUsd": 1000000}, "budgetUsd"), ({"budgetUsd": 1e308}, "budgetUsd"),
                                           ({"budgetUsd": "-1e999"}, "budgetUsd")])
def test_patch_rejects_bad_fields_and_changes_nothing(owner_api, room, change, field):
    before = Room.objects.filter(pk=room.pk).values().get()
    response = owner_api.patch(f"/api/discussions/{room.pk}", {"name": "Would change", **change})
    assert response.status_code == 400
    assert field in response.json()["error"]["details"]
    assert Room.objects.filter(pk=room.pk).values().get() == before


def test_the_largest_budget_is_kept_and_read_back(owner_api, catalog, room):
    made = owner_api.post("/api/discussions", create_body(catalog, budgetUsd=999999.99))
    assert made.status_code == 201 and made.json()["data"]["budgetUsd"] == 999999.99
    assert owner_api.patch(f"/api/discussions/{room.pk}", {"budgetUsd": 999999.99}).status_code == 200
    assert owner_api.get("/api/discussions").status_code == 200  # every row still reads back


def test_patch_raises_a_budget_and_the_audit_row_says_from_what(owner_api, clients, room):
    Room.objects.filter(pk=room.pk).update(budget_tokens=1000)
    response = owner_api.patch(f"/api/discussions/{room.pk}", {"budgetTokens": 5000, "budgetUsd": 2.5})
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    assert (data["budgetTokens"], data["budgetUsd"]) == (5000, 2.5)
    update = Invocation.objects.filter(room=room, component="room.update").last()
    assert update.input["before"] == {"budgetTokens": 1000, "budgetUsd": None}
    assert update.input["after"] == {"budgetTokens": 5000, "budgetUsd": "2.500000"}
    assert clients["viewer"].patch(f"/api/discussions/{room.pk}", {"budgetTokens": 10**9}).status_code == 403
    assert Room.objects.get(pk=room.pk).budget_tokens == 5000


def test_patch_with_a_null_budget_removes_it_and_an_absent_one_stays(owner_api, room):
    Room.objects.filter(pk=room.pk).update(budget_tokens=1000, budget_usd=2)
    url = f"/api/discussions/{room.pk}"
    response = owner_api.patch(url, {"budgetTokens": None})
    assert response.status_code == 200, response.json()
    assert (response.json()["data"]["budgetTokens"], response.json()["data"]["budgetUsd"]) == (None, 2.0)
    update = Invocation.objects.filter(room=room, component="room.update").last()
    assert update.input["before"] == {"budgetTokens": 1000} and update.input["after"] == {"budgetTokens": None}
    response = owner_api.patch(url, {"budgetTokens": None, "budgetUsd": None, "name": None})
    assert response.status_code == 200, response.json()
    saved = Room.objects.get(pk=room.pk)
    assert (saved.budget_tokens, saved.budget_usd, saved.name) == (None, None, room.name)  # a null name stays as it is
    assert owner_api.patch(url, {"name": "Renamed"}).json()["data"]["budgetTokens"] is None


def test_patch_status_runs_the_lifecycle(owner_api, room):
    url = f"/api/discussions/{room.pk}"
    assert owner_api.patch(url, {"status": "active"}).json()["data"]["status"] == "active"
    assert Room.objects.get(pk=room.pk).started_at is not None
    assert owner_api.patch(url, {"status": "paused"}).json()["data"]["status"] == "paused"
    assert owner_api.patch(url, {"status": "active"}).json()["data"]["status"] == "active"  # resume
    assert owner_api.patch(url, {"status": "active"}).status_code == 200  # already there: nothing to do
    assert owner_api.patch(url, {"status": "stopped"}).json()["data"]["status"] == "stopped"


def test_patch_status_refused_is_409_and_rolls_back_the_other_fields(owner_api, room):
    before = Room.objects.filter(pk=room.pk).values().get()
    for status in ("paused", "stopped", "concluded", "failed"):
        response = owner_api.patch(f"/api/discussions/{room.pk}", {"name": "Would change", "status": status})
        assert response.status_code == 409, status
        assert response.json()["error"]["code"] == "invalid_transition"
    assert Room.objects.filter(pk=room.pk).values().get() == before


def test_format_changes_only_while_draft(owner_api, room):
    lifecycle.do_start_discussion(room)
    response = owner_api.patch(f"/api/discussions/{room.pk}", {"format": "brainstorm"})
    assert response.status_code == 409


def test_change_moderator_only_while_draft(owner_api, room, catalog):
    url = f"/api/discussions/{room.pk}/moderator"
    response = owner_api.patch(url, {"moderatorId": catalog["chair"].pk})
    assert response.status_code == 200 and response.json()["data"]["moderator"]["id"] == catalog["chair"].pk
    assert room.seats.get(role=Seat.Role.FACILITATOR).agent_id == catalog["chair"].pk
    lifecycle.do_start_discussion(room)
    other_chair = catalog["chair"]
    before = Room.objects.filter(pk=room.pk).values().get()
    response = owner_api.patch(url, {"moderatorId": other_chair.pk})
    assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
    assert Room.objects.filter(pk=room.pk).values().get() == before


def test_changing_to_the_facilitator_it_has_changes_nothing(owner_api, room, catalog):
    url = f"/api/discussions/{room.pk}/moderator"
    assert owner_api.patch(url, {"moderatorId": catalog["chair"].pk}).status_code == 200
    seat = room.seats.get(role=Seat.Role.FACILITATOR)
    logged = Invocation.objects.filter(room=room, component="room.change_moderator").count()
    again = owner_api.patch(url, {"moderatorId": catalog["chair"].pk})
    assert again.status_code == 200 and again.json()["data"]["moderator"]["id"] == catalog["chair"].pk
    assert room.seats.get(role=Seat.Role.FACILITATOR).pk == seat.pk  # the same seat, not a new one
    assert Invocation.objects.filter(room=room, component="room.change_moderator").count() == logged


def test_change_moderator_validates(owner_api, room, catalog):
    url = f"/api/discussions/{room.pk}/moderator"
    assert owner_api.patch(url, {"moderatorId": catalog["ada"].pk}).status_code == 400  # not a facilitator
    assert owner_api.patch(url, {}).status_code == 400


@pytest.mark.parametrize("verb, prepare", [
    ("pause", []), ("resume", []), ("stop", []), ("conclude", []),
    ("start", ["start"]), ("resume", ["start"]),
    ("start", ["start", "pause"]), ("pause", ["start", "pause"]),
    ("start", ["start", "stop"]), ("pause", ["start", "stop"]), ("resume", ["start", "stop"]),
    ("stop", ["start", "stop"]),  # a stopped discussion may still be concluded (test_copy_and_search)
])
def test_lifecycle_transitions_not_allowed_are_409_and_change_nothing(owner_api, room, verb, prepare):
    for step in prepare:
        getattr(lifecycle, f"do_{step}_discussion")(room)
    before = Room.objects.filter(pk=room.pk).values().get()
    events = RoomEvent.objects.count()
    response = owner_api.post(f"/api/discussions/{room.pk}/{verb}")
    assert response.status_code == 409, (verb, prepare)
    body = response.json()
    assert body["success"] is False and body["error"]["code"] == "invalid_transition"
    assert Room.objects.filter(pk=room.pk).values().get() == before
    assert RoomEvent.objects.count() == events


def test_lifecycle_happy_path(owner_api, room):
    url = f"/api/discussions/{room.pk}"
    assert owner_api.post(f"{url}/start").json()["data"]["status"] == "active"
    assert owner_api.post(f"{url}/pause").json()["data"]["status"] == "paused"
    assert owner_api.post(f"{url}/resume").json()["data"]["status"] == "active"
    data = owner_api.post(f"{url}/conclude").json()["data"]
    assert data["status"] == "active"  # the synthesis step is scheduled; concluded when it is written
    assert Room.objects.get(pk=room.pk).engine_state["phase"] == "synthesis"
    assert owner_api.post(f"{url}/stop").json()["data"]["status"] == "stopped"


def _observe(room, seq, kind="contribution", content="text", **extra):
    return Observation.objects.create(room=room, seq=seq, round=1, author_name="Ada", kind=kind, content=content, **extra)


def test_turns_are_ordered_by_seq_and_follow_after_seq(owner_api, room):
    for seq in (12, 10, 11):
        _observe(room, seq, content=f"turn {seq}")
    url = f"/api/discussions/{room.pk}/turns"
    body = owner_api.get(url).json()
    assert [t["seq"] for t in body["data"]] == [10, 11, 12]
    assert body["meta"] == {"count": 3, "afterSeq": 0, "lastSeq": 12, "hasMore": False, "status": "draft",
                            "round": 0, "maxRounds": room.max_rounds}
    assert [t["seq"] for t in owner_api.get(url, {"afterSeq": 10}).json()["data"]] == [11, 12]
    assert owner_api.get(url, {"afterSeq": 12}).json()["data"] == []
    limited = owner_api.get(url, {"limit": 2}).json()
    assert [t["seq"] for t in limited["data"]] == [10, 11] and limited["meta"]["hasMore"] is True
    turn = body["data"][0]
    assert set(turn) >= {"id", "seq", "round", "kind", "speaker", "content", "markers", "status", "provider", "rehearsal",
                         "createdAt"}


@pytest.mark.parametrize("params", [{"afterSeq": "x"}, {"afterSeq": -1}, {"afterSeq": 2**70}, {"limit": 0}])
def test_turns_reject_bad_parameters(owner_api, room, params):
    response = owner_api.get(f"/api/discussions/{room.pk}/turns", params)
    assert response.status_code == 400 and response.json()["error"]["code"] == "validation_error"


def test_list_is_paginated_with_counts(owner_api, people, catalog):
    owner = people["owner"]
    rooms = [new_discussion(owner, catalog, format=("brainstorm" if i % 2 else "review")) for i in range(5)]
    lifecycle.do_start_discussion(rooms[0])
    body = owner_api.get("/api/discussions", {"pageSize": 2}).json()
    assert len(body["data"]) == 2
    assert body["meta"]["total"] == 5 and body["meta"]["totalPages"] == 3 and body["meta"]["hasNext"] is True
    assert body["meta"]["counts"]["draft"] == 4 and body["meta"]["counts"]["active"] == 1
    assert [d["id"] for d in body["data"]] == [rooms[4].pk, rooms[3].pk]  # newest first
    page3 = owner_api.get("/api/discussions", {"pageSize": 2, "page": 3}).json()
    assert [d["id"] for d in page3["data"]] == [rooms[0].pk] and page3["meta"]["hasNext"] is False
    assert owner_api.get("/api/discussions", {"page": 9}).json()["data"] == []


def test_list_filters_by_status_format_and_kind(owner_api, people, catalog):
    owner = people["owner"]
    a = new_discussion(owner, catalog, format="brainstorm")
    b = new_discussion(owner, catalog, format="review")
    c = new_discussion(owner, catalog, format="review", kind="workspace")
    lifecycle.do_start_discussion(b)

    def ids(**params):
        return {d["id"] for d in owner_api.get("/api/discussions", params).json()["data"]}

    assert ids(status="active") == {b.pk}
    assert ids(status="draft,active") == {a.pk, b.pk, c.pk}
    assert ids(status=["active", "draft"]) == {a.pk, b.pk, c.pk}  # repeated: every value counts, not the last
    assert ids(format=["review", "brainstorm"], kind=["workspace"]) == {c.pk}
    assert owner_api.get("/api/discussions", {"status": ["active", "sleeping"]}).status_code == 400
    assert ids(format="review") == {b.pk, c.pk}
    assert ids(kind="workspace") == {c.pk}
    assert ids(format="review", status="draft") == {c.pk}
    meta = owner_api.get("/api/discussions", {"format": "review", "status": "draft"}).json()["meta"]
    assert meta["total"] == 1 and meta["counts"]["draft"] == 1 and meta["counts"]["active"] == 1


@pytest.mark.parametrize("params", [{"status": "sleeping"}, {"format": "poem"}, {"kind": "x"}, {"page": 0},
                                    {"page": "two"}, {"pageSize": 101}, {"pageSize": 0}])
def test_list_rejects_bad_filters(owner_api, params):
    response = owner_api.get("/api/discussions", params)
    assert response.status_code == 400 and set(response.json()["error"]["details"]) == set(params)


def test_detail_reports_rehearsal_and_usage(owner_api, room):
    _observe(room, 5, provider="rehearsal")
    data = owner_api.get(f"/api/discussions/{room.pk}").json()["data"]
    assert data["rehearsal"] is True
    assert set(data["usage"]) == {"calls", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens",
                                  "totalTokens", "costUsd"}


def test_delete_removes_the_discussion(owner_api, room):
    response = owner_api.delete(f"/api/discussions/{room.pk}")
    assert response.status_code == 200 and response.json() == {"success": True, "data": {"id": room.pk, "deleted": True}}
    assert not Room.objects.filter(pk=room.pk).exists()
    assert owner_api.get(f"/api/discussions/{room.pk}").status_code == 404


def test_members_share_and_unshare(owner_api, room, people, clients):
    url = f"/api/discussions/{room.pk}/members"
    listed = owner_api.get(url).json()["data"]
    assert {(m["username"], m["access"]) for m in listed} == {("viewer", "viewer"), ("participant", "participant")}
    assert clients["other"].get(f"/api/discussions/{room.pk}").status_code == 404
    assert owner_api.post(url, {"username": "other", "access": "participant"}).status_code == 201
    assert clients["other"].get(f"/api/discussions/{room.pk}").json()["data"]["access"] == "participant"
    assert owner_api.post(url, {"username": "other", "access": "viewer"}).status_code == 200  # changed
    assert owner_api.delete(f"{url}/other").status_code == 200
    assert clients["other"].get(f"/api/discussions/{room.pk}").status_code == 404
    assert owner_api.delete(url, QUERY_STRING="username=viewer").status_code == 200
    assert owner_api.delete(f"{url}/viewer").status_code == 404  # not a member any more


@pytest.mark.parametrize("body, field", [({"username": "nobody"}, "username"), ({"username": "other", "access": "admin"}, "access"),
                                         ({"username": "owner"}, "username")])
def test_members_validation(owner_api, room, body, field):
    response = owner_api.post(f"/api/discussions/{room.pk}/members", body)
    assert response.status_code == 400 and field in response.json()["error"]["details"]


def test_seated_agent_cannot_be_deleted_while_in_use(owner_api, people, catalog):
    agent = owner_api.post("/api/agents", {"name": "Mine"}).json()["data"]
    body = create_body(catalog, participants=[{"agentId": agent["id"], "role": "participant"}])
    assert owner_api.post("/api/discussions", body).status_code == 201
    response = owner_api.delete(f"/api/agents/{agent['id']}")
    assert response.status_code == 409 and response.json()["error"]["code"] == "in_use"


def test_custom_agent_can_be_seated_by_its_owner(owner_api, catalog):
    make_participant("Extra", alias="extra")
    agent = owner_api.post("/api/agents", {"name": "Custom chair", "isFacilitator": True}).json()["data"]
    response = owner_api.post("/api/discussions", create_body(catalog, moderatorId=agent["id"]))
    assert response.status_code == 201 and response.json()["data"]["moderator"]["id"] == agent["id"]


def test_a_patch_to_the_values_it_has_saves_pushes_and_logs_nothing(owner_api, room):
    url = f"/api/discussions/{room.pk}"
    assert owner_api.patch(url, {"name": "Renamed", "maxRounds": 7}).status_code == 200
    rows, events = Invocation.objects.filter(room=room).count(), RoomEvent.objects.filter(room=room).count()
    updated_at = Room.objects.get(pk=room.pk).updated_at
    same = owner_api.patch(url, {"name": "Renamed", "maxRounds": 7})
    assert same.status_code == 200 and same.json()["data"]["name"] == "Renamed"
    assert Invocation.objects.filter(room=room).count() == rows and RoomEvent.objects.filter(room=room).count() == events
    assert Room.objects.get(pk=room.pk).updated_at == updated_at
    changed = owner_api.patch(url, {"name": "Renamed", "maxRounds": 8})
    assert changed.status_code == 200
    update = Invocation.objects.filter(room=room, component="room.update").latest("id")
    assert (update.input["before"], update.input["after"]) == ({"maxRounds": 7}, {"maxRounds": 8})


def test_sharing_again_with_the_same_access_logs_nothing(owner_api, room, people):
    url = f"/api/discussions/{room.pk}/members"
    shares = Invocation.objects.filter(room=room, component="room.share").count()
    again = owner_api.post(url, {"username": "viewer", "access": "viewer"})  # the room fixture shares it so
    assert again.status_code == 200 and again.json()["data"]["access"] == "viewer"
    assert Invocation.objects.filter(room=room, component="room.share").count() == shares
    changed = owner_api.post(url, {"username": "viewer", "access": "participant"})
    assert changed.status_code == 200 and changed.json()["data"]["access"] == "participant"
    assert Invocation.objects.filter(room=room, component="room.share").count() == shares + 1


def test_turns_asked_after_a_seq_the_room_never_reached_point_back_to_the_rooms_seq(owner_api, room):
    Room.objects.filter(pk=room.pk).update(seq=12)
    _observe(room, 12, content="the latest turn")
    url = f"/api/discussions/{room.pk}/turns"
    ahead = owner_api.get(url, {"afterSeq": 500}).json()
    assert ahead["data"] == [] and ahead["meta"]["lastSeq"] == 12 and ahead["meta"]["afterSeq"] == 500
    _observe(room, 13, content="a new turn")
    Room.objects.filter(pk=room.pk).update(seq=13)
    following = owner_api.get(url, {"afterSeq": ahead["meta"]["lastSeq"]}).json()
    assert [t["content"] for t in following["data"]] == ["a new turn"]
    caught_up = owner_api.get(url, {"afterSeq": 13}).json()
    assert caught_up["data"] == [] and caught_up["meta"]["lastSeq"] == 13


def _schema_component(api, name: str) -> dict:
    schema = api.get("/api/schema").json()
    return schema["components"]["schemas"][name], schema["components"]


def _allows_null(node: dict, components: dict) -> bool:
    return jsonschema.Draft202012Validator({**node, "components": components}).is_valid(None)


def test_every_optional_create_field_takes_null_for_its_default_as_the_schema_says(owner_api, catalog):
    """An optional field of the create body sent as null is read as left out (its default), and the schema says
    each may be null and what null means: a client that writes null for "not set" is not told otherwise by either."""
    body_schema, components = _schema_component(owner_api, "DiscussionCreateInRequest")
    optional = sorted(set(body_schema["properties"]) - set(body_schema["required"]))
    assert {"format", "kind", "maxRounds", "template", "consensus", "maxParallel", "turnPolicy"} <= set(optional)
    for field in optional:
        node = body_schema["properties"][field]
        assert _allows_null(node, components), f"{field}: the schema does not say it may be null"
        assert "null" in node.get("description", ""), f"{field}: the schema does not say what null means"
    role = components["schemas"]["ParticipantInRequest"]["properties"]["role"]
    assert _allows_null(role, components) and "null" in role["description"]

    body = create_body(catalog, **dict.fromkeys(optional))
    body["participants"][0]["role"] = None
    jsonschema.Draft202012Validator({**body_schema, "components": components}).validate(body)
    response = owner_api.post("/api/discussions", body)
    assert response.status_code == 201, response.json()
    data = response.json()["data"]
    assert (data["format"], data["kind"], data["maxRounds"], data["template"], data["maxParallel"]) == (
        "deliberation", "discussion", 5, None, 1)
    assert (data["budgetTokens"], data["budgetUsd"], data["turnPolicy"]) == (None, None, None)
    assert data["consensus"] == {"threshold": 0.67, "rejectBlocks": True, "humanRequired": False}
    assert [p["role"] for p in data["participants"]] == ["participant", "devil_advocate"]
