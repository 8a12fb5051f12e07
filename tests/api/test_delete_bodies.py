"""The two DELETEs that may name their row in a JSON body (a member to stop sharing with, a chat link) document
that body in the schema, as optional (the row may be named in the query instead), and the body it describes works."""
import jsonschema
import pytest

from rooms.models import Chat, ChatLink, RoomMember
from tests.api.conftest import Api


@pytest.fixture
def schema(db):
    return Api().get("/api/schema").json()


def _body_schema(schema, path: str) -> dict:
    body = schema["paths"][path]["delete"]["requestBody"]
    assert body["required"] is False
    return {**body["content"]["application/json"]["schema"], "components": schema["components"]}


def test_a_member_named_in_the_documented_body_is_removed(schema, owner_api, room):
    documented = _body_schema(schema, "/api/discussions/{id}/members")
    body = {"username": "viewer"}
    jsonschema.validate(body, documented)
    answer = owner_api.delete(f"/api/discussions/{room.pk}/members", body)
    assert answer.status_code == 200, answer.content
    assert not RoomMember.objects.filter(room=room, user__username="viewer").exists()


def test_a_link_named_in_the_documented_body_is_removed(schema, owner_api, room):
    documented = _body_schema(schema, "/api/discussions/{id}/links")
    link = ChatLink.objects.create(chat=Chat.objects.create(platform="telegram", external_id="-5", title="Team"), room=room)
    body = {"linkId": link.pk}
    jsonschema.validate(body, documented)
    answer = owner_api.delete(f"/api/discussions/{room.pk}/links", body)
    assert answer.status_code == 200, answer.content
    assert answer.json()["data"]["id"] == link.pk


def test_no_other_delete_documents_a_body(schema):
    with_body = sorted(path for path, ops in schema["paths"].items() if "requestBody" in ops.get("delete", {}))
    assert with_body == ["/api/discussions/{id}/links", "/api/discussions/{id}/members"]
