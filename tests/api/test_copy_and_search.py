"""Copy as a new draft, search in the list, and Conclude after a stop."""
from facilitation.actions import lifecycle
from rooms.models import Invocation, Observation, Room
from tests.api.conftest import new_discussion


def test_copy_makes_a_draft_with_the_same_setup_and_an_audit_row(clients, room, people):
    lifecycle.do_start_discussion(room)
    lifecycle.do_stop_discussion(room)
    response = clients["owner"].post(f"/api/discussions/{room.pk}/copy")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    copy = Room.objects.get(pk=data["id"])
    assert copy.pk != room.pk and copy.status == "draft" and copy.owner == people["owner"]
    assert data["name"] == "Test discussion (copy)" and copy.topic == room.topic and copy.format == room.format
    assert copy.moderator_id == room.moderator_id and copy.max_rounds == room.max_rounds
    seats = lambda r: list(r.seats.order_by("position").values_list("agent_id", "role"))  # noqa: E731
    assert seats(copy) == seats(room)
    assert not Observation.objects.filter(room=copy).exists()
    audit = Invocation.objects.get(room=copy, component="room.copy")
    assert audit.user == people["owner"] and audit.input["before"] == {"fromDiscussionId": room.pk} and audit.correlation_id
    assert data["usage"]["calls"] == 0  # the audit row is not a model call


def test_copy_needs_control_of_the_discussion(clients, room):
    before = Room.objects.count()
    assert clients["viewer"].post(f"/api/discussions/{room.pk}/copy").status_code == 403
    assert clients["other"].post(f"/api/discussions/{room.pk}/copy").status_code == 404
    assert clients["anonymous"].post(f"/api/discussions/{room.pk}/copy").status_code in (401, 403)
    assert Room.objects.count() == before and not Invocation.objects.filter(component="room.copy").exists()


def test_search_by_name_and_topic(owner_api, people, catalog):
    new_discussion(people["owner"], catalog, name="Pricing page", topic="Which plans do we show?")
    new_discussion(people["owner"], catalog, name="Cache review", topic="Redis in front of Postgres")
    names = lambda q: sorted(d["name"] for d in owner_api.get("/api/discussions", {"q": q}).json()["data"])  # noqa: E731
    assert names("pricing") == ["Pricing page"]
    assert names("postgres") == ["Cache review"]
    assert names("cache redis") == ["Cache review"]
    assert names("nothing-like-this") == []
    # Words no database can compare (PostgreSQL refuses a NUL in a query): 400 naming the parameter, not a 500.
    r = owner_api.get("/api/discussions", {"q": "cache\x00"})
    assert r.status_code == 400 and "q" in r.json()["error"]["details"]


def test_search_compares_without_case_in_every_script(owner_api, people, catalog):
    new_discussion(people["owner"], catalog, name="Über die Planung", topic="Ελληνικά και Ελλάδα")
    new_discussion(people["owner"], catalog, name="Cache review", topic="Redis in front of Postgres")
    names = lambda q: sorted(d["name"] for d in owner_api.get("/api/discussions", {"q": q}).json()["data"])  # noqa: E731
    assert names("über") == names("ÜBER") == names("Über") == ["Über die Planung"]
    assert names("ελληνικά ελλάδα") == ["Über die Planung"]
    assert names("%") == names("_ber") == []  # the words are text, not patterns


def test_conclude_after_a_stop_synthesizes_from_what_exists(owner_api, room):
    lifecycle.do_start_discussion(room)
    lifecycle.do_stop_discussion(room)
    response = owner_api.post(f"/api/discussions/{room.pk}/conclude")
    assert response.status_code == 200, response.content
    room.refresh_from_db()
    assert room.status == "active" and room.ended_at is None and room.engine_state["phase"] == "synthesis"
    room.status = "concluded"
    room.save()
    assert owner_api.post(f"/api/discussions/{room.pk}/conclude").status_code == 409


def test_a_copy_keeps_the_template_from_its_first_phase_the_consensus_rules_and_parallel_turns(owner_api, catalog):
    from tests.api.conftest import create_body

    made = owner_api.post("/api/discussions", create_body(
        catalog, template="adr", consensus={"threshold": 0.8, "rejectBlocks": False, "humanRequired": True},
        maxParallel=2)).json()["data"]
    original = Room.objects.get(pk=made["id"])
    Room.objects.filter(pk=original.pk).update(phase="decide")  # moved on before it was copied
    data = owner_api.post(f"/api/discussions/{original.pk}/copy").json()["data"]
    assert (data["template"], data["phase"], data["maxParallel"]) == ("adr", made["phase"], 2)
    assert data["consensus"] == {"threshold": 0.8, "rejectBlocks": False, "humanRequired": True}
    copy = Room.objects.get(pk=data["id"])
    assert (copy.template, copy.phase, copy.consensus, copy.max_parallel) == (
        "adr", made["phase"], original.consensus, 2)


def test_a_copy_of_a_workspace_keeps_its_turn_policy(owner_api, catalog):
    from tests.api.conftest import create_body

    made = owner_api.post("/api/discussions", create_body(
        catalog, kind="workspace", turnPolicy={"maxEvents": 4, "maxSeconds": 900})).json()["data"]
    data = owner_api.post(f"/api/discussions/{made['id']}/copy").json()["data"]
    assert data["kind"] == "workspace" and data["turnPolicy"] == {"maxEvents": 4, "maxSeconds": 900}
    assert Room.objects.get(pk=data["id"]).turn_policy == {"maxEvents": 4, "maxSeconds": 900}


def test_a_facilitation_run_is_not_copied(clients, people):
    from tests.api.test_facilitation_runs import allow, body
    from tests.factories import make_facilitator

    make_facilitator("Convener", key="convener")
    allow(people["owner"])
    run = clients["owner"].post("/api/discussions", body()).json()["data"]
    before = Room.objects.count()
    refused = clients["owner"].post(f"/api/discussions/{run['id']}/copy")
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"]["code"] == "validation_error" and list(refused.json()["error"]["details"]) == ["kind"]
    assert Room.objects.count() == before and not Invocation.objects.filter(component="room.copy").exists()


def test_a_copy_of_a_workspace_keeps_its_seats_own_personas_and_roles(owner_api, catalog, people):
    """What a seat was given for itself comes along; what the copier may not use is left to the agent's own."""
    from rooms.models import Persona, Role

    private = Persona.objects.create(key="private-eye", name="Private", prompt="Mine.", created_by=people["viewer"])
    body = {"name": "W", "topic": "Plan the migration", "kind": "workspace", "moderatorId": catalog["chair"].pk,
            "participants": [{"agentId": catalog["ada"].pk, "personaId": catalog["bob"].persona_id, "roleId": catalog["cyd"].role_id},
                             {"agentId": catalog["bob"].pk}]}
    made = owner_api.post("/api/discussions", body)
    assert made.status_code == 201, made.json()
    room = Room.objects.get(pk=made.json()["data"]["id"])
    room.seats.filter(agent=catalog["bob"]).update(persona=private, work_role=Role.objects.get(pk=catalog["ada"].role_id))
    data = owner_api.post(f"/api/discussions/{room.pk}/copy").json()["data"]
    own, other = data["participants"]
    assert (own["personaOverrideId"], own["roleOverrideId"]) == (catalog["bob"].persona_id, catalog["cyd"].role_id)
    assert (other["personaOverrideId"], other["roleOverrideId"]) == (None, catalog["ada"].role_id)
