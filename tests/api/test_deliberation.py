"""REST for structured deliberation: creating with a template, votes, advancing phases."""
import pytest

from rooms.models import Room, RoomMember
from tests.api.conftest import Api, create_body
from tests.facilitation.discussions.test_phases import discussion

pytestmark = pytest.mark.django_db


def test_advance_over_rest_is_for_the_owner_and_409_without_phases(people, catalog):
    room = discussion(people["owner"], template="feature")
    member = Api(people["viewer"])
    RoomMember.objects.create(room=room, user=people["viewer"], access="viewer")
    assert member.post(f"/api/discussions/{room.pk}/advance").status_code == 403
    assert Api(people["other"]).post(f"/api/discussions/{room.pk}/advance").status_code == 404
    answer = Api(people["owner"]).post(f"/api/discussions/{room.pk}/advance")
    assert answer.status_code == 200 and answer.json()["data"]["phase"] == "shape"
    votes = member.get(f"/api/discussions/{room.pk}/votes").json()["data"]
    assert votes["phase"] == "shape" and votes["tally"] == {"ready": 0, "changes": 0, "reject": 0}
    plain = discussion(people["owner"])
    conflict = Api(people["owner"]).post(f"/api/discussions/{plain.pk}/advance")
    assert conflict.status_code == 409 and Room.objects.get(pk=plain.pk).phase == ""


def test_create_takes_template_consensus_and_max_parallel(people, catalog):
    api = Api(people["owner"])
    body = create_body(catalog, template="feature", consensus={"threshold": 0.8, "humanRequired": True}, maxParallel=2)
    made = api.post("/api/discussions", body)
    assert made.status_code == 201, made.content
    data = made.json()["data"]
    assert data["template"] == "feature" and data["phase"] == "explore" and data["maxParallel"] == 2
    assert data["consensus"] == {"threshold": 0.8, "rejectBlocks": True, "humanRequired": True}
    count = Room.objects.count()
    for bad in ({"template": "nope"}, {"consensus": {"threshold": 1.2}}, {"maxParallel": 0}, {"maxParallel": 4}):
        refused = api.post("/api/discussions", create_body(catalog, **bad))
        assert refused.status_code == 400, bad
    assert Room.objects.count() == count
