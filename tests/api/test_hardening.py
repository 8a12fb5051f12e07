"""Bad input and abuse: 400 not 500, bounded text, throttled writes and bad tokens, races with a delete."""
import threading

import pytest
from django.db import connection

from facilitation.runs.scheduling import inline
from rooms.models import Agent, Invocation, Persona, Role, Room, RoomMember
from tests.api.conftest import Api, create_body

MB = 1024 * 1024


def _nested(depth: int):
    value = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("role", [["participant"], {"a": 1}, 3, ""])  # null is the default role, as left out
def test_a_participant_role_of_the_wrong_type_is_400(owner_api, catalog, role):
    body = create_body(catalog)
    body["participants"][0]["role"] = role
    before = Room.objects.count()
    response = owner_api.post("/api/discussions", body)
    assert response.status_code == 400, response.content
    assert "participants[0].role" in response.json()["error"]["details"]
    assert Room.objects.count() == before


@pytest.mark.parametrize("path", ["/api/discussions", "/api/agents", "/api/personas", "/api/roles"])
@pytest.mark.parametrize("depth", [25, 100_000])
def test_deeply_nested_bodies_are_400(owner_api, path, depth):
    raw = '{"name": ' + "[" * depth + "]" * depth + "}"
    response = owner_api.client.post(path, raw, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["success"] is False


def test_a_body_over_the_limit_is_413(owner_api, settings):
    response = owner_api.client.post("/api/roles", '{"name": "' + "x" * (settings.API_MAX_BODY_BYTES + 10) + '"}',
                                     content_type="application/json")
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"


def test_a_body_over_djangos_own_cap_is_413_too(owner_api, room, settings):
    # Django refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE wherever it is read first: the same answer as ours.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE, settings.API_MAX_BODY_BYTES = 1_000, 4_000
    for path in (f"/api/discussions/{room.pk}/comments", "/api/roles"):
        response = owner_api.client.post(path, '{"content": "' + "x" * 2_000 + '"}', content_type="application/json")
        assert response.status_code == 413, (path, response.content)
        assert response.json()["error"]["code"] == "too_large"


@pytest.mark.parametrize("path, body", [
    ("/api/personas", {"name": "Huge", "prompt": "p" * MB}),
    ("/api/roles", {"name": "Huge", "basePrompt": "p" * MB}),
])
def test_megabyte_prompts_are_refused(owner_api, path, body):
    response = owner_api.post(path, body)
    assert response.status_code == 400
    assert Persona.objects.filter(name="Huge").count() + Role.objects.filter(name="Huge").count() == 0


def test_megabyte_topics_and_conclusions_are_refused(owner_api, catalog, room):
    assert owner_api.post("/api/discussions", create_body(catalog, topic="t" * MB)).status_code == 400
    response = owner_api.patch(f"/api/discussions/{room.pk}", {"topic": "t" * MB})
    assert response.status_code == 400 and "topic" in response.json()["error"]["details"]
    assert owner_api.patch(f"/api/discussions/{room.pk}", {"conclusion": "c" * 200_001}).status_code == 400
    room.refresh_from_db()
    assert len(room.topic) < 1000 and room.conclusion == ""


def test_every_write_is_throttled_per_user(owner_api, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "writes.user": "5/min"}}
    answers = [owner_api.post("/api/roles", {"name": f"Role {i}"}).status_code for i in range(8)]
    assert answers == [201] * 5 + [429] * 3
    assert Role.objects.filter(name__startswith="Role ").count() == 5
    assert owner_api.get("/api/roles").status_code == 200  # reads go on


def test_writes_are_throttled_per_address_across_users(clients, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "writes.ip": "4/min"}}
    answers = [clients[who].post("/api/roles", {"name": f"R {who}"}).status_code
               for who in ("owner", "other", "viewer", "participant", "staff")]
    assert answers == [201, 201, 201, 201, 429]


def test_forged_forwarded_for_does_not_dodge_the_limit(owner_api, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "writes.ip": "2/min", "writes.user": None}}
    answers = [owner_api.post("/api/roles", {"name": f"F{i}"}, HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code
               for i in range(3)]
    assert answers == [201, 201, 429]


def test_bad_tokens_are_throttled_per_address(people, settings):
    settings.CONVENE_RATE_LIMITS = {**settings.CONVENE_RATE_LIMITS, "bad_token_ip": (3, 60)}
    guesser = Api()
    answers = []
    for i in range(5):
        guesser.client.credentials(HTTP_AUTHORIZATION=f"Token cvn_guess{i}")
        answers.append(guesser.get("/api/discussions").status_code)
    assert answers == [401, 401, 401, 429, 429]
    # Even a valid token waits from that address; another address is unaffected.
    from tests.factories import make_token

    key = make_token(people["owner"])
    guesser.client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert guesser.get("/api/discussions").status_code == 429
    assert guesser.get("/api/discussions", REMOTE_ADDR="10.9.9.9").status_code == 200


def test_sharing_answers_alike_for_unknown_and_deactivated_users(owner_api, room, people):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("dormant", is_active=False)
    unknown = owner_api.post(f"/api/discussions/{room.pk}/members", {"username": "nobody-here"})
    dormant = owner_api.post(f"/api/discussions/{room.pk}/members", {"username": "dormant"})
    assert unknown.status_code == dormant.status_code == 400
    assert unknown.json()["error"] == dormant.json()["error"]
    assert "nobody-here" not in unknown.content.decode()
    assert not RoomMember.objects.filter(room=room, user__username="dormant").exists()


@pytest.mark.django_db(transaction=True)
def test_deleting_while_others_control_answers_404_never_500(people, catalog):
    from tests.api.conftest import new_discussion

    room = new_discussion(people["owner"], catalog)
    owner, staff = Api(people["owner"]), Api(people["staff"])
    calls = [(owner, "delete", f"/api/discussions/{room.pk}")] + [
        (who, "post", f"/api/discussions/{room.pk}/{verb}") for who in (owner, staff) for verb in ("start", "pause", "stop")
    ] + [(staff, "patch", f"/api/discussions/{room.pk}")] + [(owner, "delete", f"/api/discussions/{room.pk}")]
    statuses, barrier = [], threading.Barrier(len(calls))

    def call(api, method, path):
        barrier.wait()
        try:
            body = {"name": "renamed"} if method == "patch" else None
            with inline():  # no broker in this test: steps are not enqueued (inline is per thread)
                statuses.append(getattr(api, method)(path, body).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=call, args=c) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 500 not in statuses, statuses
    assert set(statuses) <= {200, 404, 409}
    assert not Room.objects.filter(pk=room.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_discarded_call_for_a_deleted_room_is_dropped_quietly(people, catalog):
    from facilitation.actions.steps import CallRecord, Claim, record_discarded_call
    from tests.api.conftest import new_discussion

    room = new_discussion(people["owner"], catalog)
    claim = Claim(room_id=room.pk, step_seq=1, attempt=1, token="t")
    Room.objects.filter(pk=room.pk).delete()
    record_discarded_call(claim, CallRecord(component="participant.turn", agent_id=catalog["ada"].pk), "lease lost")
    assert not Invocation.objects.filter(room_id=room.pk).exists()
    assert Agent.objects.filter(pk=catalog["ada"].pk).exists()
