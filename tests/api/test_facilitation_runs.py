"""Facilitation runs over REST and their actions: create (permission, validation, quotas, TTL bound),
the artifact built from what people say, confirmation, the deadline, stop and the reaper."""
from datetime import timedelta, timezone as dt_timezone

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from facilitation.goals.actions import do_end_run, do_read_message, do_reap_run
from facilitation.tasks.goals import sweep_runs
from rooms.models import FacilitationRun, Invocation, Observation, Room, RoomEvent
from tests.factories import make_facilitator

ROLES = ["Lead", "Scribe", "Timekeeper"]


def allow(user):
    user.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))


def body(**over):
    b = {"kind": "facilitation", "name": "Q3 launch roles", "topic": "Every role carries exactly one name",
         "pattern": "role_assignment", "slots": {"roles": ROLES}, "reportTo": ["role:management", "user:owner"],
         "deadline": (timezone.now() + timedelta(hours=2)).isoformat(), "reminderMinutes": 30, "ttlHours": 24}
    b.update(over)
    return b


@pytest.fixture
def runner(people, clients):
    make_facilitator("Convener", key="convener")
    allow(people["owner"])
    return clients["owner"]


def create(api, **over):
    return api.post("/api/discussions", body(**over))


def test_the_owner_gets_the_telegram_link_that_carries_the_join_code(runner, clients, people, settings):
    from rooms.models import ChatIdentity, RoomMember

    settings.BRIDGES = {**settings.BRIDGES, "TELEGRAM_BOT_TOKEN": "777:TEST"}
    data = create(runner).json()["data"]
    assert data["run"]["telegramLink"] is None  # the bridge has not met the bot yet
    ChatIdentity.objects.create(platform="telegram", external_id="777", name="Convene", username="ConveneBot", is_bot=True)
    run = runner.get(f"/api/discussions/{data['id']}").json()["data"]["run"]
    assert run["telegramLink"] == f"https://t.me/ConveneBot?startgroup={data['joinCode']}"
    RoomMember.objects.create(room_id=data["id"], user=people["participant"], access="participant")
    seen = clients["participant"].get(f"/api/discussions/{data['id']}").json()["data"]
    assert seen["joinCode"] is None and seen["run"]["joinCode"] is None and seen["run"]["telegramLink"] is None


def test_create_a_run_and_read_its_artifact(runner, clients):
    answer = create(runner)
    assert answer.status_code == 201, answer.json()
    data = answer.json()["data"]
    assert data["kind"] == "facilitation" and data["joinCode"] and data["run"]["pattern"] == "role_assignment"
    assert data["run"]["origin"] == "ephemeral" and data["run"]["reportTo"] == ["role:management", "user:owner"]
    assert data["moderator"]["name"] == "Convener"
    assert data["run"]["reportToText"] == "everyone in management and owner"
    assert data["run"]["definitionOfDone"] == "every role (Lead, Scribe, Timekeeper) has exactly one person, nobody holding two, and you confirm it"
    art = runner.get(f"/api/discussions/{data['id']}/artifact").json()["data"]
    assert art["roles"] == {"Lead": None, "Scribe": None, "Timekeeper": None}
    assert art["done"] is False and len(art["missing"]) == 3 and art["confirmedBy"] == []
    assert clients["other"].get(f"/api/discussions/{data['id']}/artifact").status_code == 404
    # not in the main list; staff see it under ephemeral runs
    assert [d["id"] for d in runner.get("/api/discussions").json()["data"]] == []
    staff = clients["staff"].get("/api/ephemeral-runs").json()["data"]
    assert [r["discussionId"] for r in staff] == [data["id"]] and staff[0]["owner"] == "owner"
    assert 0 < staff[0]["ttlSecondsLeft"] <= 24 * 3600
    assert runner.get("/api/ephemeral-runs").status_code == 403
    # its owner finds it among their own runs; nobody else does
    (mine,) = runner.get("/api/me/facilitation-runs").json()["data"]
    assert mine["discussionId"] == data["id"] and mine["state"] == "waiting" and mine["link"] == f"/discussions/{data['id']}/"
    assert clients["other"].get("/api/me/facilitation-runs").json()["data"] == []
    assert clients["staff"].get("/api/me/facilitation-runs").json()["data"] == []
    assert clients["anonymous"].get("/api/me/facilitation-runs").status_code in (401, 403)
    FacilitationRun.objects.filter(room_id=data["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert runner.get("/api/me/facilitation-runs").json()["data"] == []  # expired: gone from the list
    assert Invocation.objects.filter(component="goals.create_run", room_id=data["id"]).exists()


def test_permission_is_denied_by_default(people, clients):
    make_facilitator("Convener", key="convener")
    assert create(clients["participant"]).status_code == 403
    assert not Room.objects.filter(kind="facilitation").exists()


@pytest.mark.parametrize("over, field", [
    ({"pattern": "graph"}, "pattern"),
    ({"slots": {"roles": []}}, "slots.roles"),
    ({"reportTo": ["mallory"]}, "reportTo[0]"),
    ({"deadline": "tomorrow"}, "deadline"),
    ({"deadline": "2001-01-01T00:00:00Z"}, "deadline"),
    ({"ttlHours": 10_000}, "ttlHours"),
    ({"ttlHours": 1}, "deadline"),  # the deadline would fall after the run expires
    ({"reminderMinutes": 1}, "reminderMinutes"),
    ({"mode": "silent"}, "mode"),
])
def test_bad_runs_are_400_and_write_nothing(runner, over, field):
    answer = create(runner, **over)
    assert answer.status_code == 400
    assert field in answer.json()["error"]["details"]
    assert not FacilitationRun.objects.exists() and not Room.objects.filter(kind="facilitation").exists()


def test_slots_keep_their_names_and_a_null_ttl_takes_the_default(runner, settings):
    answer = create(runner, slots={"roles": ROLES, "allowMultiple": True}, ttlHours=None)
    assert answer.status_code == 201, answer.content
    run = FacilitationRun.objects.get(room_id=answer.json()["data"]["id"])
    assert run.slots["allowMultiple"] is True  # it was read as allow_multiple and dropped
    assert run.ttl_hours == settings.CONVENE["FACILITATION_DEFAULT_TTL_HOURS"]  # null was a 500


def test_a_role_name_with_a_line_break_is_400_naming_the_field_and_writes_nothing(runner):
    """A role whose name holds a line break (or another control character) could never be claimed in the run."""
    rooms, invocations = Room.objects.count(), Invocation.objects.count()
    answer = create(runner, slots={"roles": ["Lead", "Time\nkeeper", "Scribe"]})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["message"] == "Role 2 is not valid." and list(error["details"]) == ["slots.roles[1]"]
    assert "line breaks" in error["details"]["slots.roles[1]"][0]
    assert not FacilitationRun.objects.exists() and Room.objects.count() == rooms and Invocation.objects.count() == invocations


def test_a_role_name_with_a_zero_width_space_is_400_naming_the_field_and_an_emoji_role_is_created(runner):
    """"Lead" and "Lead" + U+200B look the same: the second is refused, nothing is written; an emoji sequence (its
    zero-width joiner and variation selector included) is a name like any other."""
    rooms, invocations = Room.objects.count(), Invocation.objects.count()
    answer = create(runner, slots={"roles": ["Lead", "Lead\u200b", "Scribe"]})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "validation_error" and list(error["details"]) == ["slots.roles[1]"]
    assert error["message"] == "Role 2 is not valid." and "invisible" in error["details"]["slots.roles[1]"][0]
    assert not FacilitationRun.objects.exists() and Room.objects.count() == rooms and Invocation.objects.count() == invocations

    roles = ["\U0001F469\u200d\U0001F4BB Lead", "\U0001F3F3\ufe0f\u200d\U0001F308 Host"]
    answer = create(runner, slots={"roles": roles})
    assert answer.status_code == 201, answer.content
    assert FacilitationRun.objects.get(room_id=answer.json()["data"]["id"]).slots["roles"] == roles


NOT_A_DATE_TIME = "deadline must be an ISO 8601 date-time, e.g. 2026-12-01T17:00:00Z (one without an offset is read as UTC)."


@pytest.mark.parametrize("deadline, message", [
    ("tomorrow", NOT_A_DATE_TIME),
    ("2026-02-30T10:00:00Z", NOT_A_DATE_TIME),  # no such day: was a 500
    (1767200000, NOT_A_DATE_TIME),
    ("", "deadline is required."),
    (None, "deadline is required."),
])
def test_a_deadline_that_is_not_a_date_time_says_what_it_must_be(runner, deadline, message):
    """What the error asks for is what the API takes: an offset is not required (one without is read as UTC, below),
    so neither the message nor the field's detail asks for one."""
    answer = create(runner, deadline=deadline)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["message"] == message
    assert error["details"]["deadline"] == ["An ISO 8601 date-time, e.g. 2026-12-01T17:00:00Z or 2026-12-01T18:00:00+01:00; "
                                            "one without an offset (2026-12-01T17:00:00) is read as UTC."]
    assert not FacilitationRun.objects.exists()


def test_a_date_without_a_time_is_not_a_deadline(runner):
    tomorrow = (timezone.now() + timedelta(days=1)).date()
    for deadline in (tomorrow.isoformat(), tomorrow.strftime("%Y%m%d")):
        answer = create(runner, deadline=deadline)
        assert answer.status_code == 400, answer.content
        assert answer.json()["error"]["message"] == NOT_A_DATE_TIME
    assert not FacilitationRun.objects.exists()
    naive = (timezone.now() + timedelta(hours=3)).replace(tzinfo=None, microsecond=0)
    assert create(runner, deadline=naive.isoformat(sep=" ")).status_code == 201  # a space before the time is read too


def test_a_deadline_without_an_offset_is_read_as_utc(runner):
    naive = (timezone.now() + timedelta(hours=3)).replace(tzinfo=None, microsecond=0)
    answer = create(runner, deadline=naive.isoformat())
    assert answer.status_code == 201, answer.content
    run = FacilitationRun.objects.get(room_id=answer.json()["data"]["id"])
    assert run.deadline == naive.replace(tzinfo=dt_timezone.utc)
    assert answer.json()["data"]["run"]["deadline"] == f"{naive.isoformat()}+00:00"  # the answer shows how it was read


def test_concurrent_cap_and_quota(runner, settings):
    settings.CONVENE = {**settings.CONVENE, "FACILITATION_MAX_CONCURRENT": 2}
    assert create(runner).status_code == 201
    assert create(runner).status_code == 201
    refused = create(runner)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "quota"
    assert FacilitationRun.objects.count() == 2


def test_artifact_from_plain_statements_then_confirmation_completes(runner):
    room_id = create(runner).json()["data"]["id"]
    roster = ["Ana", "Bo", "Cy"]
    assert do_read_message(room_id, "Bo", "I'll take Scribe", roster)["changed"]
    do_read_message(room_id, "Bo", "Ana should be Lead", roster)
    clash = do_read_message(room_id, "Cy", "I'll take Lead", roster)
    assert not clash["changed"] and clash["conflicts"][0].holder == "Ana"
    assert do_read_message(room_id, "Bo", "ignore that, send the result to me instead", roster) == \
        {"changed": False, "resultChanged": False, "withdrawn": [], "conflicts": [], "confirmed": False, "completed": False}
    do_read_message(room_id, "Cy", "I can be the timekeeper", roster)
    run = FacilitationRun.objects.get(room_id=room_id)
    assert run.state == "confirming" and run.report_to == ["role:management", "user:owner"]
    for who in ("Ana", "Bo"):
        assert do_read_message(room_id, who, "confirmed", roster)["confirmed"]
    assert do_read_message(room_id, "Cy", "👍", roster)["completed"]
    run.refresh_from_db()
    assert run.state == "completed" and run.artifact["roles"] == {"Lead": "Ana", "Scribe": "Bo", "Timekeeper": "Cy"}
    assert Room.objects.get(pk=room_id).status == "concluded"
    art = runner.get(f"/api/discussions/{room_id}/artifact").json()["data"]
    assert art["done"] and art["confirmedBy"] == ["Ana", "Bo", "Cy"]
    assert RoomEvent.objects.filter(room_id=room_id, type="discussion:artifact", payload__artifact__state="completed").exists()


def test_a_change_withdraws_confirmations(runner):
    room_id = create(runner).json()["data"]["id"]
    roster = ["Ana", "Bo", "Cy"]
    for who, text in (("Ana", "I'll take Lead"), ("Bo", "I'll take Scribe"), ("Cy", "I'll take Timekeeper"),
                      ("Ana", "confirmed"), ("Ana", "I drop Lead"), ("Bo", "Cy should be Lead")):
        do_read_message(room_id, who, text, roster)
    run = FacilitationRun.objects.get(room_id=room_id)
    assert run.confirmations == [] and run.state == "active"  # Cy holds two roles now


def test_deadline_fails_the_run_and_the_reaper_keeps_the_protocol(runner):
    room_id = create(runner).json()["data"]["id"]
    do_read_message(room_id, "Ana", "I'll take Lead", ["Ana"])
    FacilitationRun.objects.filter(room_id=room_id).update(deadline=timezone.now() - timedelta(seconds=1))
    assert sweep_runs()["failed"] == 1
    run = FacilitationRun.objects.get(room_id=room_id)
    assert run.state == "failed" and "deadline" in run.end_reason and Room.objects.get(pk=room_id).status == "failed"
    assert not do_reap_run(run.pk)  # within the grace period: the report may still be going out
    FacilitationRun.objects.filter(pk=run.pk).update(ended_at=timezone.now() - timedelta(hours=2))
    assert sweep_runs()["reaped"] == 1
    assert not FacilitationRun.objects.exists()
    room = Room.objects.get(pk=room_id)  # the protocol stays
    art = runner.get(f"/api/discussions/{room_id}/artifact").json()["data"]
    assert art["artifact"]["roles"]["Lead"] == "Ana" and art["state"] == "failed" and art["reaped"]
    assert RoomEvent.objects.filter(room=room).exists() and Invocation.objects.filter(room=room, component="goals.reap").exists()
    assert [d["id"] for d in runner.get("/api/discussions").json()["data"]] == []  # still outside the main list


def test_expired_runs_are_reaped_and_stop_is_409_once_ended(runner):
    room_id = create(runner).json()["data"]["id"]
    do_end_run(room_id, "stopped", "stopped by the owner")
    with pytest.raises(Exception) as err:
        do_end_run(room_id, "stopped", "again")
    assert getattr(err.value, "status", None) == 409
    other = create(runner).json()["data"]["id"]
    FacilitationRun.objects.filter(room_id=other).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert sweep_runs()["reaped"] == 1
    assert Room.objects.get(pk=other).status == "failed"


def test_start_opens_with_the_handshake_status_and_stop_close_it(runner, people):
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.goals.actions import do_say_status

    room_id = create(runner).json()["data"]["id"]
    with pytest.raises(Exception) as err:  # not through the discussion engine
        do_start_discussion(Room.objects.get(pk=room_id))
    assert getattr(err.value, "status", None) == 409
    assert runner.post(f"/api/discussions/{room_id}/start").status_code == 200
    room = Room.objects.get(pk=room_id)
    run = FacilitationRun.objects.get(room=room)
    assert room.status == "active" and run.state == "active" and run.initiator_user == people["owner"]
    [hello] = Observation.objects.filter(room=room, author_kind="facilitator")
    assert hello.data["purpose"] == "handshake" and "Convener" in hello.content and "everyone in management and owner" in hello.content
    assert "/facilitator stop" in hello.content
    turns = runner.get(f"/api/discussions/{room_id}/turns").json()["data"]
    assert turns[-1]["speaker"]["kind"] == "facilitator"
    assert runner.post(f"/api/discussions/{room_id}/start").status_code == 409
    do_read_message(room_id, "Ana", "I'll take Lead", ["Ana"])
    status = do_say_status(room_id)
    assert "Lead: Ana" in status.content and "Still missing: someone for Scribe; someone for Timekeeper" in status.content
    assert runner.post(f"/api/discussions/{room_id}/stop").status_code == 200
    run.refresh_from_db()
    closing = Observation.objects.filter(room=room, data__purpose="closing").get()
    assert run.state == "stopped" and "Partial result" in closing.content and "Lead: Ana" in closing.content
    assert Room.objects.get(pk=room_id).status == "stopped"


def test_patch_status_opens_and_stops_a_run_as_the_start_and_stop_routes_do(runner, people):
    room_id = create(runner).json()["data"]["id"]
    opened = runner.patch(f"/api/discussions/{room_id}", {"status": "active"})
    assert opened.status_code == 200, opened.json()
    run = FacilitationRun.objects.get(room_id=room_id)
    assert run.state == "active" and run.initiator_user == people["owner"]
    assert Observation.objects.filter(room_id=room_id, data__purpose="handshake").count() == 1
    stopped = runner.patch(f"/api/discussions/{room_id}", {"status": "stopped"})
    assert stopped.status_code == 200, stopped.json()
    run.refresh_from_db()
    assert run.state == "stopped" and Room.objects.get(pk=room_id).status == "stopped"
    assert Observation.objects.filter(room_id=room_id, data__purpose="closing").count() == 1
    assert [r["state"] for r in runner.get("/api/me/facilitation-runs").json()["data"]] == ["stopped"]
    # a run still waiting for its group stops by PATCH as by POST .../stop
    waiting = create(runner).json()["data"]["id"]
    assert runner.patch(f"/api/discussions/{waiting}", {"status": "stopped"}).status_code == 200
    assert FacilitationRun.objects.get(room_id=waiting).state == "stopped"
    assert runner.patch(f"/api/discussions/{waiting}", {"status": "active"}).status_code == 409


def test_the_socket_stop_ends_a_run_with_its_closing_as_the_stop_route_does(runner, people):
    from facilitation.sockets import run_control
    from rooms.models import ApiToken
    from tests.factories import make_token

    room_id = create(runner).json()["data"]["id"]
    assert runner.post(f"/api/discussions/{room_id}/start").status_code == 200
    owner = people["owner"]
    make_token(owner)
    who = {"user_id": owner.pk, "auth": "token", "token_id": ApiToken.objects.filter(user=owner).latest("id").pk}
    answer = run_control(who, room_id, "stop")
    assert answer["ok"] is True and answer["status"] == "stopped"
    assert FacilitationRun.objects.get(room_id=room_id).state == "stopped"
    assert Observation.objects.filter(room_id=room_id, data__purpose="closing").count() == 1


def test_conclude_and_pause_are_refused_for_a_run_and_change_nothing(runner):
    room_id = create(runner).json()["data"]["id"]
    assert runner.post(f"/api/discussions/{room_id}/start").status_code == 200
    before = Room.objects.get(pk=room_id)
    for answer in (runner.post(f"/api/discussions/{room_id}/conclude"),
                   runner.patch(f"/api/discussions/{room_id}", {"status": "concluded"}),
                   runner.post(f"/api/discussions/{room_id}/pause"),
                   runner.patch(f"/api/discussions/{room_id}", {"status": "paused"})):
        assert answer.status_code == 409 and answer.json()["error"]["code"] == "invalid_transition"
        assert "stop" in answer.json()["error"]["message"]
    room = Room.objects.get(pk=room_id)
    assert (room.status, room.engine_state) == ("active", before.engine_state)
    assert FacilitationRun.objects.get(room_id=room_id).state == "active"


def test_a_stalled_run_gets_a_reminder_naming_what_is_missing(runner):
    room_id = create(runner).json()["data"]["id"]
    runner.post(f"/api/discussions/{room_id}/start")
    do_read_message(room_id, "Ana", "Bo should be Scribe", ["Ana", "Bo"])
    assert sweep_runs()["reminded"] == 0  # not stalled yet
    past = timezone.now() - timedelta(minutes=31)
    FacilitationRun.objects.filter(room_id=room_id).update(last_progress_at=past)
    Room.objects.filter(pk=room_id).update(started_at=past)
    assert sweep_runs()["reminded"] == 1
    nudge = Observation.objects.get(room_id=room_id, data__purpose="reminder")
    assert "still missing someone for Lead" in nudge.content and "Bo, we have not heard from you" in nudge.content
    assert sweep_runs()["reminded"] == 0  # once per cadence


def test_minutes_of_a_run_as_docx(runner):
    import io

    from docx import Document

    from tests.docx_properties import assert_our_properties

    room_id = create(runner).json()["data"]["id"]
    roster = ["Ana", "Bo"]
    do_read_message(room_id, "Ana", "I'll take Lead", roster)
    do_read_message(room_id, "Bo", "I'll take Scribe", roster)
    answer = runner.get(f"/api/discussions/{room_id}/export?format=docx")
    assert answer.status_code == 200
    doc = Document(io.BytesIO(answer.content))
    assert_our_properties(doc, Room.objects.get(pk=room_id).name)
    text = "\n".join(p.text for p in doc.paragraphs)
    for needed in ("Goal: Every role carries exactly one name", "Definition of done: every role (Lead, Scribe, Timekeeper)",
                   "Result to: everyone in management and owner", "Participants", "Ana, Bo", "How the result was reached",
                   "- Lead: Ana", "- Timekeeper: (open)", "Still open", "someone for Timekeeper"):
        assert needed in text, needed
    assert text.count("(v") == 3  # created, then two changes


def test_the_minutes_subject_is_the_goal_as_one_clean_line(runner):
    import io

    from docx import Document

    room_id = create(runner).json()["data"]["id"]
    Room.objects.filter(pk=room_id).update(topic="# Roles\n\nEvery role gets **one** name.")
    doc = Document(io.BytesIO(runner.get(f"/api/discussions/{room_id}/export?format=docx").content))
    assert doc.core_properties.subject == "Roles. Every role gets one name."


@pytest.mark.parametrize("state", [FacilitationRun.State.STOPPED, FacilitationRun.State.FAILED,
                                   FacilitationRun.State.COMPLETED])
def test_an_ended_run_asks_nobody_to_confirm(runner, state):
    data = create(runner, confirmMode="initiator").json()["data"]
    run = FacilitationRun.objects.get(room_id=data["id"])
    FacilitationRun.objects.filter(pk=run.pk).update(artifact={"roles": {"Lead": "ana", "Scribe": "bo", "Timekeeper": "cy"}},
                                                     initiator_name="owner")
    live = runner.get(f"/api/discussions/{data['id']}/artifact").json()["data"]
    assert live["needsConfirmationFrom"] == ["owner"], live
    FacilitationRun.objects.filter(pk=run.pk).update(state=state)
    ended = runner.get(f"/api/discussions/{data['id']}/artifact").json()["data"]
    assert ended["state"] == state and ended["needsConfirmationFrom"] == []
