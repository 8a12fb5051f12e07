"""The schema's 413 and 429 say what the server does: every operation that reads a body answers 413
`too_large` for one over the limit (and only those list it), and every operation, reads included,
answers 429 once the caller's address sent too many invalid tokens."""
import json

import jsonschema
import pytest
from rest_framework.test import APIClient

from rooms.models import (
    Agent, ApiToken, Chat, ChatIdentity, ChatLink, Narrative, Persona, PersonaAdaptation, Role, Room,
)
from tests.api.conftest import Api
from tests.factories import make_token
from tests.workspace.helpers import agent_seats, make_workspace

WRITES = ("post", "put", "patch", "delete")
WORKSPACE_ROUTES = ("adaptations", "archive", "complete", "narratives", "observations", "participants", "rounds", "tasks")


@pytest.fixture
def schema(db):
    return Api().get("/api/schema").json()


def _documented_body(schema, operation, status: str) -> dict:
    node = operation["responses"][status]["content"]["application/json"]["schema"]
    return {**node, "components": schema["components"]}


def _rows(people, room):
    """One of everything a write route names, the caller (the owner) may change."""
    owner = people["owner"]
    api = APIClient()
    api.force_authenticate(owner)
    ws = make_workspace(owner)
    assert api.post(f"/api/discussions/{ws.pk}/start").status_code == 200
    seat = agent_seats(ws)[0]
    assert api.patch(f"/api/discussions/{ws.pk}/participants/{seat.pk}",
                     {"personaId": seat.agent.persona_id, "version": 1}, format="json").status_code == 200
    make_token(owner)
    return api, {
        "room": room.pk, "workspace": ws.pk,
        "tid": api.post(f"/api/discussions/{ws.pk}/tasks", {"title": "t"}, format="json").json()["data"]["id"],
        "nid": Narrative.objects.create(room=ws, round=1, content="x", generated_content="x").pk,
        "seat_id": seat.pk, "aid": PersonaAdaptation.objects.filter(room=ws).first().pk,
        "link_id": ChatLink.objects.create(chat=Chat.objects.create(platform="telegram", external_id="-1"), room=room).pk,
        "username": "viewer",
        "/api/agents/": Agent.objects.create(name="Mine", created_by=owner).pk,
        "/api/personas/": Persona.objects.create(key="mine", name="Mine", prompt="p", created_by=owner).pk,
        "/api/roles/": Role.objects.create(key="mine", name="Mine", created_by=owner).pk,
        "/api/me/tokens/": ApiToken.objects.filter(user=owner).first().pk,
        "/api/me/chat-identities/": ChatIdentity.objects.create(platform="telegram", external_id="9", name="P", user=owner).pk,
    }


def _url(path: str, ids: dict) -> str:
    room = ids["workspace"] if any(f"/{word}" in path for word in WORKSPACE_ROUTES) else ids["room"]
    for prefix in ("/api/agents/", "/api/personas/", "/api/roles/", "/api/me/tokens/", "/api/me/chat-identities/"):
        if path.startswith(prefix):
            room = ids[prefix]
    url = path.replace("{id}", str(room))
    for name in ("tid", "nid", "seat_id", "aid", "link_id", "username"):
        url = url.replace(f"{{{name}}}", str(ids[name]))
    return url


def test_every_operation_that_reads_a_body_answers_413_and_only_those_list_it(schema, people, room, settings):
    api, ids = _rows(people, room)
    settings.API_MAX_BODY_BYTES = 100
    big = json.dumps({"note": "x" * 500})
    writes = [(path, method) for path, ops in schema["paths"].items() for method in ops if method in WRITES]
    # Deleting the room goes last: the other routes act in it.
    writes.sort(key=lambda pm: (pm[1] == "delete", pm == ("/api/discussions/{id}", "delete")))
    seen = {}
    for path, method in writes:
        operation = schema["paths"][path][method]
        media = "text/markdown" if path == "/api/discussions/import" else "application/json"
        answer = getattr(api, method)(_url(path, ids), big, content_type=media)
        seen[(method, path)] = answer.status_code
        assert (answer.status_code == 413) == ("413" in operation["responses"]), (method, path, answer.status_code)
        if answer.status_code == 413:
            assert answer.json()["error"]["code"] == "too_large"
            jsonschema.Draft202012Validator(_documented_body(schema, operation, "413")).validate(answer.json())
    # What the server reads: every body it documents, and the optional JSON body of the controls without fields.
    for key in (("post", "/api/agents"), ("patch", "/api/discussions/{id}/participants/{seat_id}"),
                ("post", "/api/discussions/{id}/start"), ("post", "/api/discussions/{id}/copy"),
                ("delete", "/api/discussions/{id}/members"), ("post", "/api/discussions/import")):
        assert seen[key] == 413, key
    assert seen[("delete", "/api/agents/{id}")] == 200  # a DELETE by id never reads its body
    assert not Room.objects.filter(pk=ids["room"]).exists()  # the last write went through: the probe reached it


def test_every_operation_documents_429_reads_included(schema):
    operations = [(path, method, op) for path, ops in schema["paths"].items() for method, op in ops.items()]
    reads = [(path, op) for path, method, op in operations if method == "get"]
    assert len(reads) > 20
    for path, method, operation in operations:
        throttled = operation["responses"].get("429")
        assert throttled and "Retry-After" in throttled["headers"], (method, path)
        assert ("invalid tokens" in throttled["description"]), (method, path)
        assert ("every write" in throttled["description"]) == (method in WRITES), (method, path)
        codes = list(operation["responses"])
        assert codes == sorted(codes), (method, path)


@pytest.mark.parametrize("path", ["/api/discussions", "/api/discussions/{id}", "/api/discussions/{id}/turns",
                                  "/api/agents", "/api/me/tokens"])
def test_a_read_is_throttled_for_an_address_that_sent_bad_tokens(schema, people, room, settings, path):
    settings.CONVENE_RATE_LIMITS = {**settings.CONVENE_RATE_LIMITS, "bad_token_ip": (2, 60)}
    url = path.replace("{id}", str(room.pk))
    guesser = Api()
    for i in range(2):
        guesser.client.credentials(HTTP_AUTHORIZATION=f"Token cvn_guess{i}")
        assert guesser.get(url).status_code == 401
    guesser.client.credentials(HTTP_AUTHORIZATION=f"Token {make_token(people['owner'])}")
    answer = guesser.get(url)
    assert answer.status_code == 429, answer.json()
    documented = schema["paths"][path]["get"]
    jsonschema.Draft202012Validator(_documented_body(schema, documented, "429")).validate(answer.json())
    assert int(answer["Retry-After"]) == answer.json()["error"]["details"]["retryAfter"] >= 1
    # A signed-in session sends no token: the address's bad tokens do not hold it up.
    session = APIClient()
    session.force_login(people["owner"])
    assert session.get(url).status_code == 200
