"""A body sent without Content-Length (``Transfer-Encoding: chunked``) is read like any other, over ASGI as the
server runs: before, DRF ignored it, so a PATCH answered 200 having changed nothing and a POST was refused for
fields it did send."""
import json

from asgiref.sync import async_to_sync
from django.test import AsyncClient
from django.test.client import FakePayload

from rooms.models import Agent, Role
from tests.factories import make_token


def _send(user, method: str, path: str, body: bytes, content_type: str = "application/json"):
    scope = {"method": method, "path": path, "query_string": "",
             "headers": [(b"host", b"testserver"), (b"content-type", content_type.encode()),
                         (b"transfer-encoding", b"chunked"), (b"authorization", f"Token {make_token(user)}".encode())],
             "_body_file": FakePayload(body)}
    return async_to_sync(AsyncClient().request)(**scope)


def test_a_chunked_patch_changes_what_it_says(people):
    agent = Agent.objects.create(name="Chunk target", created_by=people["owner"])
    answer = _send(people["owner"], "PATCH", f"/api/agents/{agent.pk}", json.dumps({"name": "Renamed"}).encode())
    assert answer.status_code == 200, answer.content
    agent.refresh_from_db()
    assert agent.name == "Renamed"


def test_a_chunked_post_is_read(people):
    answer = _send(people["owner"], "POST", "/api/roles", json.dumps({"name": "Scribe", "basePrompt": "Notes."}).encode())
    assert answer.status_code == 201, answer.content
    assert Role.objects.filter(name="Scribe", created_by=people["owner"]).exists()


def test_a_chunked_body_over_the_limit_is_413_and_writes_nothing(people, settings):
    settings.API_MAX_BODY_BYTES = 100
    before = Role.objects.count()
    answer = _send(people["owner"], "POST", "/api/roles", json.dumps({"name": "Scribe", "basePrompt": "x" * 500}).encode())
    assert answer.status_code == 413 and json.loads(answer.content)["error"]["code"] == "too_large"
    assert Role.objects.count() == before


def test_a_chunked_discussion_file_is_imported(people):
    from facilitation.discussions.file_io import EXAMPLE_FILE
    from tests.factories import make_facilitator, make_participant

    make_facilitator("The Impartial Chair", key="impartial-chair")
    make_participant("Architect", alias="architect")
    answer = _send(people["owner"], "POST", "/api/discussions/import", EXAMPLE_FILE.encode(), "text/markdown")
    assert answer.status_code == 201, answer.content
