"""The workspace REST routes: access (404/403), room state (409), bad input (400), rows and events."""
import pytest

from rooms.events.schemas import validate
from rooms.models import Agent, Invocation, Narrative, Observation, Role, RoomEvent, Seat, TaskAssignment
from tests.workspace.helpers import agent_seats, make_workspace


@pytest.fixture
def ws(people):
    return make_workspace(people["owner"], viewer=people["viewer"], participant=people["participant"])


def events(room, kind):
    """What was recorded for pushing (every event is pushed after its transaction commits)."""
    rows = [e.payload for e in RoomEvent.objects.filter(room=room, type=kind).order_by("seq")]
    for payload in rows:
        validate(kind, payload)
    return rows


def base(room):
    return f"/api/discussions/{room.pk}"


def start(clients, room):
    r = clients["owner"].post(f"{base(room)}/start")
    assert r.status_code == 200, r.json()
    return r.json()["data"]


def test_create_workspace_with_personas_and_policy(owner_api, catalog):
    body = {"name": "W", "topic": "Plan the migration", "kind": "workspace", "moderatorId": catalog["chair"].pk,
            "turnPolicy": {"maxEvents": 4, "maxSeconds": 60},
            "participants": [{"agentId": catalog["ada"].pk, "role": "participant", "personaId": catalog["bob"].persona_id},
                             {"agentId": catalog["bob"].pk, "role": "participant"}]}
    r = owner_api.post("/api/discussions", body)
    assert r.status_code == 201, r.json()
    data = r.json()["data"]
    assert data["kind"] == "workspace" and data["turnPolicy"] == {"maxEvents": 4, "maxSeconds": 60}
    first, second = data["participants"]
    assert first["personaId"] == catalog["bob"].persona_id and second["personaId"] == catalog["bob"].persona_id
    assert {"seatId", "roleId", "version"} <= set(first) and first["version"] == 1


@pytest.mark.parametrize("policy", [{"maxEvents": 0}, {"maxSeconds": 1}, {"other": 3}, "ten"])
def test_bad_turn_policy_is_400(owner_api, catalog, policy):
    body = {"name": "W", "topic": "T", "kind": "workspace", "moderatorId": catalog["chair"].pk, "turnPolicy": policy,
            "participants": [{"agentId": catalog["ada"].pk, "role": "participant"}]}
    r = owner_api.post("/api/discussions", body)
    assert r.status_code == 400 and r.json()["error"]["details"]


def test_start_opens_round_one_and_queues_every_agent(clients, ws):
    data = start(clients, ws)
    assert data["status"] == "active" and data["round"] == 1
    rounds = clients["viewer"].get(f"{base(ws)}/rounds").json()["data"]
    assert [r["number"] for r in rounds] == [1] and rounds[0]["endedAt"] is None
    assert [e["state"] for e in events(ws, "discussion:round")] == ["started"]


def test_person_publishes_observation_and_threading(clients, ws):
    start(clients, ws)
    r = clients["participant"].post(f"{base(ws)}/observations", {"type": "question", "content": "Which queue?", "confidence": 0.4})
    assert r.status_code == 201, r.json()
    q = r.json()["data"]
    assert q["type"] == "question" and q["round"] == 1 and q["author"]["kind"] == "human"
    r = clients["owner"].post(f"{base(ws)}/observations", {"type": "solution", "content": "Use the outbox pattern.",
                                                          "respondingToId": q["id"]})
    assert r.status_code == 201 and r.json()["data"]["respondingToId"] == q["id"]
    unanswered = clients["viewer"].get(f"{base(ws)}/observations?unanswered=true").json()["data"]
    assert [o["type"] for o in unanswered] == ["solution"]
    assert [o["id"] for o in clients["viewer"].get(f"{base(ws)}/observations?type=question").json()["data"]] == [q["id"]]
    assert [e["observation"]["id"] for e in events(ws, "discussion:observation")] == [q["id"], r.json()["data"]["id"]]
    inv = Invocation.objects.filter(room=ws, component__endswith="publish_observation")
    assert inv.count() == 2 and len(set(inv.values_list("correlation_id", flat=True))) == 1


def test_observations_page_from_either_end_and_say_when_more_exist(clients, ws):
    start(clients, ws)
    for i in range(5):
        r = clients["owner"].post(f"{base(ws)}/observations", {"type": "observation", "content": f"note {i}"})
        assert r.status_code == 201, r.json()
    every = [o["seq"] for o in clients["viewer"].get(f"{base(ws)}/observations").json()["data"]]
    assert len(every) == 5 and every == sorted(every)
    body = clients["viewer"].get(f"{base(ws)}/observations?limit=2").json()
    assert [o["seq"] for o in body["data"]] == every[:2] and body["meta"]["hasMore"] is True
    body = clients["viewer"].get(f"{base(ws)}/observations?afterSeq={every[2]}&limit=2").json()
    assert [o["seq"] for o in body["data"]] == every[3:] and body["meta"]["hasMore"] is False
    # The newest ones (what a desk shows first), in seq order, then the page before them.
    body = clients["viewer"].get(f"{base(ws)}/observations?latest=true&limit=2").json()
    assert [o["seq"] for o in body["data"]] == every[3:] and body["meta"]["hasMore"] is True
    body = clients["viewer"].get(f"{base(ws)}/observations?latest=true&limit=2&beforeSeq={every[3]}").json()
    assert [o["seq"] for o in body["data"]] == every[1:3] and body["meta"]["hasMore"] is True
    body = clients["viewer"].get(f"{base(ws)}/observations?latest=true&limit=2&beforeSeq={every[1]}").json()
    assert [o["seq"] for o in body["data"]] == every[:1] and body["meta"]["hasMore"] is False
    body = clients["viewer"].get(f"{base(ws)}/observations?latest=true").json()
    assert [o["seq"] for o in body["data"]] == every and body["meta"] == {**body["meta"], "count": 5, "hasMore": False}
    assert clients["viewer"].get(f"{base(ws)}/observations?beforeSeq=0").status_code == 400


@pytest.mark.parametrize("body,field", [
    ({"type": "rumour", "content": "x"}, "type"),
    ({"type": "question", "content": ""}, "content"),
    ({"type": "question", "content": "x", "confidence": 1.5}, "confidence"),
    ({"type": "question", "content": "x", "confidence": -0.1}, "confidence"),
    ({"type": "question", "content": "x", "confidence": True}, "confidence"),
    ({"type": "question", "content": "x", "respondingToId": 999999}, "respondingToId"),
    ({"type": "question", "content": "x", "respondingToId": 0}, "respondingToId"),
])
def test_bad_observations_are_400_and_write_nothing(clients, ws, body, field):
    start(clients, ws)
    before_obs, before_events, before_inv = Observation.objects.count(), RoomEvent.objects.count(), Invocation.objects.count()
    r = clients["owner"].post(f"{base(ws)}/observations", body)
    assert r.status_code == 400 and field in r.json()["error"]["details"], r.json()
    assert (Observation.objects.count(), RoomEvent.objects.count(), Invocation.objects.count()) == (before_obs, before_events, before_inv)


def test_responding_to_an_observation_of_another_room_is_400(clients, ws, people):
    other = make_workspace(people["owner"], name="Other")
    start(clients, ws)
    clients["owner"].post(f"/api/discussions/{other.pk}/start")
    foreign = clients["owner"].post(f"/api/discussions/{other.pk}/observations", {"type": "question", "content": "Mine?"}).json()["data"]
    r = clients["owner"].post(f"{base(ws)}/observations", {"type": "solution", "content": "x", "respondingToId": foreign["id"]})
    assert r.status_code == 400 and "respondingToId" in r.json()["error"]["details"]


def test_access_rules(clients, ws):
    start(clients, ws)
    obs = {"type": "question", "content": "Who?"}
    assert clients["other"].get(f"{base(ws)}/observations").status_code == 404
    assert clients["other"].post(f"{base(ws)}/observations", obs).status_code == 404
    assert clients["anonymous"].get(f"{base(ws)}/observations").status_code == 401
    assert clients["viewer"].get(f"{base(ws)}/observations").status_code == 200
    assert clients["viewer"].post(f"{base(ws)}/observations", obs).status_code == 403
    for path, body in (("tasks", {"title": "t", "priority": 2}), ("rounds/end", None), ("complete", None), ("archive", None)):
        assert clients["viewer"].post(f"{base(ws)}/{path}", body).status_code == 403, path
        assert clients["participant"].post(f"{base(ws)}/{path}", body).status_code == 403, path
        assert clients["other"].post(f"{base(ws)}/{path}", body).status_code == 404, path
    assert clients["viewer"].get(f"{base(ws)}/invocations").status_code == 403
    assert clients["staff"].get(f"{base(ws)}/invocations").status_code == 200
    assert TaskAssignment.objects.count() == 0
    for event in RoomEvent.objects.filter(room=ws):
        validate(event.type, event.payload)


def test_workspace_routes_on_a_discussion_are_409(clients, room):
    r = clients["owner"].get(f"/api/discussions/{room.pk}/observations")
    assert r.status_code == 409 and r.json()["error"]["code"] == "not_workspace"


def test_tasks_lifecycle_and_illegal_steps(clients, ws):
    seats = agent_seats(ws)
    r = clients["owner"].post(f"{base(ws)}/tasks", {"title": "Write the outbox", "priority": 5, "assigneeId": seats[0].pk})
    assert r.status_code == 201, r.json()
    task = r.json()["data"]
    assert task["status"] == "pending" and task["priority"] == 5 and task["assigneeId"] == seats[0].pk
    tid = task["id"]
    assert clients["owner"].post(f"{base(ws)}/tasks/{tid}/start").status_code == 409
    assert clients["owner"].post(f"{base(ws)}/tasks/{tid}/claim", {"seatId": seats[1].pk}).json()["error"]["code"] == "task_assigned"
    claimed = clients["owner"].post(f"{base(ws)}/tasks/{tid}/claim").json()["data"]
    assert claimed["status"] == "claimed" and claimed["claimedById"] == seats[0].pk and claimed["claimedAt"]
    assert clients["owner"].post(f"{base(ws)}/tasks/{tid}/claim").status_code == 409
    assert clients["owner"].post(f"{base(ws)}/tasks/{tid}/start").json()["data"]["status"] == "in_progress"
    done = clients["owner"].post(f"{base(ws)}/tasks/{tid}/complete").json()["data"]
    assert done["status"] == "completed" and done["completedAt"]
    r = clients["owner"].post(f"{base(ws)}/tasks/{tid}/claim")
    assert r.status_code == 409 and r.json()["error"]["code"] == "invalid_transition"
    r = clients["owner"].patch(f"{base(ws)}/tasks/{tid}", {"priority": 2, "version": done["version"]})
    assert r.status_code == 409 and r.json()["error"]["code"] == "task_completed"
    assert [e["task"]["status"] for e in events(ws, "discussion:task")] == ["pending", "claimed", "in_progress", "completed"]
    components = list(Invocation.objects.filter(room=ws, component__contains="task").values_list("component", flat=True))
    assert components == ["manager.create_task", "manager.claim_task", "manager.start_task", "manager.complete_task"]
    assert clients["viewer"].get(f"{base(ws)}/tasks").json()["data"][0]["id"] == tid


def test_a_task_edit_names_its_version_and_a_stale_one_is_409_with_the_current_task(clients, ws, people):
    """Two tabs editing one task: the second save, made on the version both read, is refused with the task as it is
    now (as a narrative's stale edit is), and changes nothing."""
    seats = agent_seats(ws)
    task = clients["owner"].post(f"{base(ws)}/tasks", {"title": "Write the outbox", "priority": 2}).json()["data"]
    assert task["version"] == 1
    url = f"{base(ws)}/tasks/{task['id']}"
    r = clients["owner"].patch(url, {"title": "Write the outbox table", "version": 1})
    assert r.status_code == 200, r.json()
    assert r.json()["data"]["version"] == 2 and r.json()["data"]["title"] == "Write the outbox table"
    r = clients["owner"].patch(url, {"priority": 5, "version": 1})  # the other tab, on what it read
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale_version", r.json()
    assert r.json()["error"]["message"] == ("The task changed meanwhile: compare your changes with the current task "
                                            "and save again.")
    details = r.json()["error"]["details"]
    assert details["yourVersion"] == 1
    assert details["current"] == clients["viewer"].get(f"{base(ws)}/tasks").json()["data"][0]
    assert details["current"]["title"] == "Write the outbox table" and details["current"]["version"] == 2
    row = TaskAssignment.objects.get(pk=task["id"])
    assert (row.priority, row.version) == (2, 2)
    assert Invocation.objects.filter(room=ws, component="manager.edit_task").count() == 1
    assert len(events(ws, "discussion:task")) == 2  # created, edited once
    # With a version that is not a whole number from 1, nothing changes either: 400 on it.
    for body in ({"priority": 5, "version": 0}, {"priority": 5, "version": "2"}, {"priority": 5, "version": True}):
        r = clients["owner"].patch(url, body)
        assert r.status_code == 400 and list(r.json()["error"]["details"]) == ["version"], (body, r.json())
    assert TaskAssignment.objects.get(pk=task["id"]).priority == 2
    # Every step moves the version on too: an edit made before a claim is stale after it.
    claimed = clients["owner"].post(f"{url}/claim", {"seatId": seats[0].pk}).json()["data"]
    assert claimed["version"] == 3
    r = clients["owner"].patch(url, {"description": "Before the claim", "version": 2})
    assert r.status_code == 409 and r.json()["error"]["details"]["current"]["status"] == "claimed"
    r = clients["owner"].patch(url, {"description": "After the claim", "version": 3})
    assert r.status_code == 200 and r.json()["data"]["version"] == 4
    assert [e["task"]["version"] for e in events(ws, "discussion:task")] == [1, 2, 3, 4]
    assert TaskAssignment.objects.get(pk=task["id"]).description == "After the claim"
    # A client that sends no version (the route took none before tasks had one) edits the task as it is.
    for body in ({"priority": 4}, {"priority": 3, "version": None}):
        r = clients["owner"].patch(url, body)
        assert r.status_code == 200, (body, r.json())
    row = TaskAssignment.objects.get(pk=task["id"])
    assert (row.priority, row.version, row.description) == (3, 6, "After the claim")


def test_an_agent_s_step_moves_a_task_s_version_on(clients, ws):
    """A task an agent claims meanwhile has changed too: an edit made before is stale."""
    from django.db import transaction

    from facilitation.workspace.actions.tasks import advance_task
    from facilitation.workspace.rules import locked

    seat = agent_seats(ws)[0]
    task = clients["owner"].post(f"{base(ws)}/tasks", {"title": "Measure the queue", "assigneeId": seat.pk}).json()["data"]
    with transaction.atomic():
        room = locked(ws)
        advance_task(room, TaskAssignment.objects.select_for_update().get(pk=task["id"]), "claim", seat, agent_id=seat.agent_id)
    r = clients["owner"].patch(f"{base(ws)}/tasks/{task['id']}", {"priority": 5, "version": task["version"]})
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale_version"
    assert r.json()["error"]["details"]["current"]["claimedById"] == seat.pk
    assert TaskAssignment.objects.get(pk=task["id"]).priority == 3


def test_the_manager_deletes_a_task_that_is_not_done_and_nobody_else_may(clients, ws, people):
    seats = agent_seats(ws)
    made = [clients["owner"].post(f"{base(ws)}/tasks", {"title": title, "assigneeId": seats[0].pk}).json()["data"]
            for title in ("Made by mistake", "Kept", "Done")]
    mistake, kept, done = (t["id"] for t in made)
    for other in ("viewer", "participant"):
        assert clients[other].delete(f"{base(ws)}/tasks/{mistake}").status_code == 403
    assert clients["owner"].post(f"{base(ws)}/tasks/{mistake}/claim").status_code == 200  # claimed: still deletable
    r = clients["owner"].delete(f"{base(ws)}/tasks/{mistake}")
    assert r.status_code == 200, r.json()
    assert r.json()["data"]["title"] == "Made by mistake" and r.json()["data"]["status"] == "claimed"
    assert [t["id"] for t in clients["viewer"].get(f"{base(ws)}/tasks").json()["data"]] == [kept, done]
    assert clients["owner"].delete(f"{base(ws)}/tasks/{mistake}").status_code == 404
    last = events(ws, "discussion:task")[-1]
    assert last["deleted"] is True and last["task"]["id"] == mistake
    logged = Invocation.objects.get(room=ws, component="manager.delete_task")
    assert logged.input == {"taskId": mistake, "before": r.json()["data"]} and logged.user == people["owner"]
    # A completed task records work done: it stays.
    for verb in ("claim", "start", "complete"):
        assert clients["owner"].post(f"{base(ws)}/tasks/{done}/{verb}").status_code == 200
    r = clients["owner"].delete(f"{base(ws)}/tasks/{done}")
    assert r.status_code == 409 and r.json()["error"]["code"] == "task_completed"
    # Once the scope is closed nothing is deleted.
    assert clients["owner"].post(f"{base(ws)}/archive").status_code == 200
    assert clients["owner"].delete(f"{base(ws)}/tasks/{kept}").status_code == 409
    assert TaskAssignment.objects.filter(room=ws).count() == 2


@pytest.mark.parametrize("body,field", [
    ({"title": "t", "priority": 0}, "priority"), ({"title": "t", "priority": 6}, "priority"),
    ({"title": "t", "priority": "high"}, "priority"), ({"title": "", "priority": 3}, "title"),
    ({"title": "t", "assigneeId": 999999}, "assigneeId"), ({"title": "t", "status": "completed"}, "status"),
    ({"title": "t", "assigneeId": 0}, "assigneeId"), ({"title": "t", "assigneeId": -3}, "assigneeId"),
])
def test_bad_tasks_are_400(clients, ws, body, field):
    r = clients["owner"].post(f"{base(ws)}/tasks", body)
    assert r.status_code == 400 and field in r.json()["error"]["details"], r.json()
    assert TaskAssignment.objects.count() == 0


def test_narrative_edit_stale_version_and_audit(clients, ws):
    start(clients, ws)
    narrative = Narrative.objects.create(room=ws, round=1, content="Generated text.", generated_content="Generated text.",
                                         correlation_id="chain-1")
    url = f"{base(ws)}/narratives/{narrative.pk}"
    r = clients["owner"].patch(url, {"content": "Edited by the manager.", "nextSteps": ["Ship it"], "version": 1})
    assert r.status_code == 200, r.json()
    data = r.json()["data"]
    assert data["version"] == 2 and data["editedBy"] == "owner" and data["generatedContent"] == "Generated text."
    inv = Invocation.objects.get(component="manager.edit_narrative")
    assert inv.correlation_id == "chain-1"
    assert inv.input["before"]["content"] == "Generated text." and inv.input["after"]["content"] == "Edited by the manager."
    r = clients["owner"].patch(url, {"content": "Late edit", "version": 1})
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale_version"
    assert r.json()["error"]["details"]["current"]["content"] == "Edited by the manager."
    assert clients["owner"].patch(url, {"blockers": [123456], "version": 2}).status_code == 400
    assert clients["owner"].patch(url, {"version": 2}).status_code == 400
    assert clients["viewer"].patch(url, {"content": "x", "version": 2}).status_code == 403
    assert Narrative.objects.get(pk=narrative.pk).content == "Edited by the manager."
    assert len(events(ws, "discussion:narrative")) == 1


def test_persona_swap_keeps_adaptations_apart(clients, ws, catalog):
    seat = agent_seats(ws)[0]
    own = seat.agent.persona_id
    url = f"{base(ws)}/participants/{seat.pk}"
    r = clients["owner"].patch(url, {"personaId": catalog["ada"].persona_id, "version": 1})
    assert r.status_code == 200, r.json()
    assert r.json()["data"]["personaId"] == catalog["ada"].persona_id and r.json()["data"]["version"] == 2
    assert clients["owner"].patch(url, {"personaId": own, "version": 1}).status_code == 409
    assert clients["owner"].patch(url, {"personaId": own, "version": 2}).status_code == 200
    adaptations = clients["owner"].get(f"{base(ws)}/adaptations").json()["data"]
    pairs = {(a["agentId"], a["personaId"]) for a in adaptations}
    assert {(seat.agent_id, catalog["ada"].persona_id), (seat.agent_id, own)} <= pairs
    detail = clients["owner"].get(base(ws)).json()["data"]
    assert detail["participants"][0]["personaId"] == own and detail["participants"][0]["version"] == 3
    assert Invocation.objects.filter(component="manager.swap_persona").count() == 2


def test_a_seat_says_its_own_persona_and_role_apart_from_its_agent_s(owner_api, catalog):
    """``personaId``/``roleId`` are what a seat works with now (its agent's while it has none of its own);
    ``personaOverrideId``/``roleOverrideId`` what was chosen for the seat itself, so a desk shows that."""
    body = {"name": "W", "topic": "Plan the migration", "kind": "workspace", "moderatorId": catalog["chair"].pk,
            "participants": [{"agentId": catalog["ada"].pk, "role": "participant", "personaId": catalog["bob"].persona_id},
                             {"agentId": catalog["bob"].pk, "role": "participant"}]}
    r = owner_api.post("/api/discussions", body)
    assert r.status_code == 201, r.json()
    room_id = r.json()["data"]["id"]
    own, plain = r.json()["data"]["participants"]
    assert (own["personaId"], own["personaOverrideId"]) == (catalog["bob"].persona_id, catalog["bob"].persona_id)
    assert (plain["personaId"], plain["personaOverrideId"]) == (catalog["bob"].persona_id, None)
    assert (plain["roleId"], plain["roleOverrideId"]) == (catalog["bob"].role_id, None)
    # A swap of the role only: the seat's own role is said; its persona stays its own.
    url = f"/api/discussions/{room_id}/participants/{own['seatId']}"
    r = owner_api.patch(url, {"roleId": catalog["cyd"].role_id, "version": own["version"]})
    assert r.status_code == 200, r.json()
    assert r.json()["data"]["roleOverrideId"] == catalog["cyd"].role_id
    assert r.json()["data"]["personaOverrideId"] == catalog["bob"].persona_id
    # Back to the agent's own persona: none of its own any more, and the one it works with is the agent's.
    r = owner_api.patch(url, {"personaId": None, "version": r.json()["data"]["version"]})
    assert r.status_code == 200, r.json()
    seat = owner_api.get(f"/api/discussions/{room_id}").json()["data"]["participants"][0]
    assert (seat["personaId"], seat["personaOverrideId"]) == (catalog["ada"].persona_id, None)
    assert (seat["roleId"], seat["roleOverrideId"]) == (catalog["cyd"].role_id, catalog["cyd"].role_id)
    assert {k: v for k, v in r.json()["data"].items() if k in seat} == {k: seat[k] for k in r.json()["data"] if k in seat}


def test_a_role_swap_is_logged_as_a_role_swap(clients, ws):
    """A role swap leaves ``manager.swap_role`` (not the persona swap's component); swapping both leaves one of each
    in one correlation, and either way one ``discussion:participant`` event."""
    seat = agent_seats(ws)[0]
    url = f"{base(ws)}/participants/{seat.pk}"
    worker = Role.objects.create(key="release-reviewer", name="Release reviewer", function="Checks a plan can ship",
                                 created_by=ws.owner)
    r = clients["owner"].patch(url, {"roleId": worker.pk, "version": 1})
    assert r.status_code == 200, r.json()
    (log,) = Invocation.objects.filter(room=ws, component__startswith="manager.swap_")
    assert log.component == "manager.swap_role" and log.user.username == "owner"
    assert log.input["seatId"] == seat.pk and log.input["before"]["roleId"] != worker.pk == log.input["after"]["roleId"]
    listed = clients["owner"].get(f"{base(ws)}/invocations", {"component": "manager.swap_role"}).json()["data"]
    assert [i["id"] for i in listed] == [log.pk]
    assert len(events(ws, "discussion:participant")) == 1

    r = clients["owner"].patch(url, {"roleId": None, "personaId": seat.agent.persona_id, "version": 2})
    assert r.status_code == 200, r.json()
    both = list(Invocation.objects.filter(room=ws, component__startswith="manager.swap_").exclude(pk=log.pk).order_by("id"))
    assert [i.component for i in both] == ["manager.swap_persona", "manager.swap_role"]
    assert both[0].correlation_id == both[1].correlation_id and both[0].input == both[1].input
    assert len(events(ws, "discussion:participant")) == 2


def test_adaptation_tune_is_versioned(clients, ws):
    seat = agent_seats(ws)[0]
    clients["owner"].patch(f"{base(ws)}/participants/{seat.pk}", {"personaId": seat.agent.persona_id, "version": 1})
    row = clients["owner"].get(f"{base(ws)}/adaptations").json()["data"][0]
    url = f"{base(ws)}/adaptations/{row['id']}"
    r = clients["owner"].patch(url, {"learnedThresholds": {"confidence": 0.9}, "version": row["version"]})
    assert r.status_code == 200 and r.json()["data"]["learnedThresholds"]["confidence"] == 0.9
    assert clients["owner"].patch(url, {"learnedThresholds": {"confidence": 0.1}, "version": row["version"]}).status_code == 409
    assert clients["owner"].patch(url, {"learnedThresholds": {"confidence": 2}, "version": row["version"] + 1}).status_code == 400


def test_complete_then_everything_is_409(clients, ws):
    start(clients, ws)
    seat = agent_seats(ws)[0]
    task = clients["owner"].post(f"{base(ws)}/tasks", {"title": "t"}).json()["data"]
    r = clients["owner"].post(f"{base(ws)}/complete")
    assert r.status_code == 200 and r.json()["data"]["status"] == "completed"
    seq = RoomEvent.objects.filter(room=ws).count()
    writes = [
        ("post", "observations", {"type": "question", "content": "x"}),
        ("post", "tasks", {"title": "t"}),
        ("patch", f"tasks/{task['id']}", {"priority": 2}),
        ("post", f"tasks/{task['id']}/claim", {"seatId": seat.pk}),
        ("post", "rounds/end", None),
        ("patch", f"participants/{seat.pk}", {"personaId": None, "version": 1}),
        ("post", "complete", None),
        ("post", "start", None), ("post", "pause", None),
        ("patch", "", {"name": "New name"}),
    ]
    for method, path, body in writes:
        r = getattr(clients["owner"], method)(f"{base(ws)}/{path}".rstrip("/"), body)
        assert r.status_code == 409, (path, r.status_code, r.json())
    assert RoomEvent.objects.filter(room=ws).count() == seq
    assert clients["owner"].post(f"{base(ws)}/archive").json()["data"]["status"] == "archived"
    assert clients["owner"].post(f"{base(ws)}/archive").status_code == 409


def test_a_draft_cannot_be_completed_but_can_be_archived(clients, ws):
    r = clients["owner"].post(f"{base(ws)}/complete")
    assert r.status_code == 409 and r.json()["error"]["code"] == "invalid_transition"
    assert "never ran" in r.json()["error"]["message"]
    assert clients["owner"].patch(base(ws), {"status": "completed"}).status_code == 409
    assert clients["owner"].get(base(ws)).json()["data"]["status"] == "draft"
    assert not Invocation.objects.filter(room=ws, component="manager.complete_room").exists()
    assert clients["owner"].post(f"{base(ws)}/archive").json()["data"]["status"] == "archived"


def test_end_round_by_manager_opens_the_next(clients, ws):
    start(clients, ws)
    clients["owner"].post(f"{base(ws)}/observations", {"type": "blocker", "content": "No staging queue."})
    r = clients["owner"].post(f"{base(ws)}/rounds/end")
    assert r.status_code == 200 and r.json()["data"]["number"] == 1 and r.json()["data"]["eventCount"] == 1
    rounds = clients["owner"].get(f"{base(ws)}/rounds").json()["data"]
    assert [(x["number"], x["endedBy"]) for x in rounds] == [(1, "manager"), (2, None)]
    # Round 1's narrative has not been written yet (no worker here): ending round 2 must wait.
    r = clients["owner"].post(f"{base(ws)}/rounds/end")
    assert r.status_code == 409 and r.json()["error"]["code"] == "narrative_pending"


def test_turn_policy_ends_the_round_after_max_events(clients, people):
    room = make_workspace(people["owner"], turn_policy={"maxEvents": 2})
    start(clients, room)
    for i in range(2):
        clients["owner"].post(f"{base(room)}/observations", {"type": "observation", "content": f"note {i}"})
    rounds = clients["owner"].get(f"{base(room)}/rounds").json()["data"]
    assert rounds[0]["endedBy"] == "policy" and rounds[0]["eventCount"] == 2 and rounds[1]["number"] == 2


def test_invocation_log_filters(clients, ws):
    start(clients, ws)
    clients["owner"].post(f"{base(ws)}/observations", {"type": "question", "content": "x"})
    chain = Invocation.objects.filter(room=ws, component="round.start").get().correlation_id
    rows = clients["owner"].get(f"{base(ws)}/invocations", {"correlationId": chain}).json()["data"]
    assert [r["component"] for r in rows] == ["round.start", "manager.publish_observation"]
    rows = clients["owner"].get(f"{base(ws)}/invocations", {"component": "manager.start_room"}).json()["data"]
    assert len(rows) == 1 and rows[0]["user"] == "owner"


@pytest.mark.parametrize("key", ["facilitator", "observer"])
def test_a_workspace_agent_cannot_work_as_facilitator_or_observer(clients, ws, key):
    """Those are seat roles no workspace agent works in: 400 on roleId, the seat unchanged, nothing logged or pushed."""
    role = Role.objects.filter(key=key).first() or Role.objects.create(key=key, name=key.title(), is_builtin=True)
    seat = agent_seats(ws)[0]
    before = (seat.work_role_id, seat.version, seat.role)
    r = clients["owner"].patch(f"{base(ws)}/participants/{seat.pk}", {"roleId": role.pk, "version": 1})
    assert r.status_code == 400, r.json()
    error = r.json()["error"]
    assert error["code"] == "validation_error" and list(error["details"]) == ["roleId"]
    assert f"cannot work as {role.name}" in error["details"]["roleId"][0]
    seat.refresh_from_db()
    assert (seat.work_role_id, seat.version, seat.role) == before
    assert not Invocation.objects.filter(room=ws, component__in=["manager.swap_persona", "manager.swap_role"]).exists()
    assert events(ws, "discussion:participant") == []
    # A working role is still taken.
    worker = Role.objects.create(key="release-reviewer", name="Release reviewer", function="Checks a plan can ship", created_by=ws.owner)
    r = clients["owner"].patch(f"{base(ws)}/participants/{seat.pk}", {"roleId": worker.pk, "version": 1})
    assert r.status_code == 200, r.json()
    assert r.json()["data"]["roleId"] == worker.pk and r.json()["data"]["role"] == "participant"


def test_a_seat_says_which_agent_it_is_beyond_its_name(clients, ws, people):
    """Agents of one name are told apart by their alias and whose they are: a seat carries both (the desk labels
    "Architect (@architect-2, yours)" from them), in the swap's answer, its event and its audit row."""
    builtin = agent_seats(ws)[0]
    mine = Agent.objects.create(name=builtin.agent.name, alias="twin-2", created_by=people["owner"])
    twin = Seat.objects.create(room=ws, agent=mine, role="participant", position=50)
    r = clients["owner"].patch(f"{base(ws)}/participants/{twin.pk}", {"roleId": None, "version": 1})
    assert r.status_code == 200, r.json()
    seat = r.json()["data"]
    assert (seat["name"], seat["alias"], seat["isBuiltin"], seat["owner"]) == (builtin.agent.name, "twin-2", False, "owner")
    assert seat["agentOwner"] == "owner"  # its older name, kept
    assert events(ws, "discussion:participant")[-1]["participant"] == seat
    assert Invocation.objects.get(room=ws, component="manager.swap_role").input["after"] == seat
    r = clients["owner"].patch(f"{base(ws)}/participants/{builtin.pk}", {"roleId": None, "version": 1})
    assert {k: r.json()["data"][k] for k in ("alias", "isBuiltin", "owner", "agentOwner")} == {
        "alias": builtin.agent.alias, "isBuiltin": True, "owner": None, "agentOwner": None}


def test_search_finds_a_narrative_by_its_key_decisions_and_next_steps(clients, ws):
    start(clients, ws)
    narrative = Narrative.objects.create(room=ws, round=1, content="The round went well.", generated_content="x")
    url = f"{base(ws)}/search"
    assert clients["viewer"].get(url, {"q": "flag"}).json()["data"]["narratives"] == []
    r = clients["owner"].patch(f"{base(ws)}/narratives/{narrative.pk}", {
        "content": "The round went well.", "keyDecisions": ["Ship behind a feature flag"], "nextSteps": ["Write the rollback runbook"],
        "version": 1})
    assert r.status_code == 200, r.json()
    for q in ("flag", "rollback runbook", "feature fl"):
        found = clients["viewer"].get(url, {"q": q}).json()["data"]["narratives"]
        assert [n["id"] for n in found] == [narrative.pk], q
        assert found[0]["keyDecisions"] == ["Ship behind a feature flag"]


def test_a_seat_can_start_with_a_role_of_its_own(owner_api, catalog):
    """``roleId`` on create is the seat's own functional role, as ``personaId`` is its own persona."""
    body = {"name": "W", "topic": "Plan the migration", "kind": "workspace", "moderatorId": catalog["chair"].pk,
            "participants": [{"agentId": catalog["ada"].pk, "roleId": catalog["bob"].role_id},
                             {"agentId": catalog["bob"].pk, "roleId": None}]}
    r = owner_api.post("/api/discussions", body)
    assert r.status_code == 201, r.json()
    own, plain = r.json()["data"]["participants"]
    assert (own["roleId"], own["roleOverrideId"]) == (catalog["bob"].role_id, catalog["bob"].role_id)
    assert (plain["roleId"], plain["roleOverrideId"]) == (catalog["bob"].role_id, None)
    assert Seat.objects.get(pk=own["seatId"]).work_role_id == catalog["bob"].role_id


def _rooms():
    from rooms.models import Room

    return Room.objects.count()


@pytest.mark.parametrize("kind, participant, key, says", [
    ("workspace", {"roleId": 987654}, "participants[0].roleId", "Unknown role 987654"),
    ("workspace", {"roleId": "observer"}, "participants[0].roleId", "cannot work as"),
    ("workspace", {"roleId": "private"}, "participants[0].roleId", "Unknown role"),
    ("discussion", {"roleId": "bob"}, "participants[0].roleId", "roleId is for workspace rooms"),
    ("discussion", {"personaId": "bob"}, "participants[0].personaId", "personaId is for workspace rooms"),
])
def test_a_seat_s_own_role_that_cannot_be_is_400_and_creates_nothing(owner_api, catalog, people, kind, participant, key, says):
    observer, _ = Role.objects.get_or_create(key="observer", defaults={"name": "Observer", "base_prompt": "Watch.", "is_builtin": True})
    private = Role.objects.create(key="someone-else-s", name="Theirs", base_prompt="Mine.", created_by=people["viewer"])
    values = {"observer": observer.pk, "private": private.pk, "bob": catalog["bob"].role_id}
    item = {"agentId": catalog["ada"].pk, "role": "participant"}
    for field, value in participant.items():
        item[field] = values.get(value, value) if field == "roleId" else catalog["bob"].persona_id
    body = {"name": "W", "topic": "Plan the migration", "kind": kind, "moderatorId": catalog["chair"].pk,
            "participants": [item, {"agentId": catalog["bob"].pk, "role": "participant"}]}
    before = _rooms()
    r = owner_api.post("/api/discussions", body)
    assert r.status_code == 400, r.json()
    details = r.json()["error"]["details"]
    assert key in details and says in " ".join(details[key]), details
    assert _rooms() == before


def test_the_schema_says_ids_start_at_one_as_the_server_reads_them(clients):
    """Every id a workspace body names is at least 1 in the schema; the server answers a 0 with 400 (above)."""
    bodies = clients["owner"].get("/api/schema", HTTP_ACCEPT="application/json").json()["components"]["schemas"]
    for name, field in (("ObservationInRequest", "respondingToId"), ("TaskInRequest", "assigneeId"),
                        ("PatchedTaskPatchInRequest", "assigneeId"), ("TaskStepInRequest", "seatId"),
                        ("PatchedSeatPatchInRequest", "personaId"), ("PatchedSeatPatchInRequest", "roleId")):
        assert bodies[name]["properties"][field]["minimum"] == 1, (name, field)
