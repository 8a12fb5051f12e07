"""Text query parameters the server bounds say so in the schema: a value the schema allows is answered, one it
does not is the 400 the server gives (the search's ``q``, the invocation log's filters, the member to remove)."""
import pytest

from facilitation.api.views.workspace_manage import MAX_FILTER
from facilitation.workspace.search import MAX_QUERY
from tests.api.conftest import Api
from tests.workspace.helpers import make_workspace


@pytest.fixture
def schema(db):
    return Api().get("/api/schema").json()


def _query(schema, path: str, method: str, name: str) -> dict:
    return next(p["schema"] for p in schema["paths"][path][method]["parameters"] if p["in"] == "query" and p["name"] == name)


def test_the_search_query_is_described_as_the_server_reads_it(schema, owner_api, people):
    q = _query(schema, "/api/discussions/{id}/search", "get", "q")
    assert (q["minLength"], q["maxLength"], q["pattern"]) == (1, MAX_QUERY, r"\S")
    ws = make_workspace(people["owner"])
    path = f"/api/discussions/{ws.pk}/search"
    assert owner_api.get(path, {"q": "x" * MAX_QUERY}).status_code == 200
    for refused in ("", "   ", "x" * (MAX_QUERY + 1)):
        response = owner_api.get(path, {"q": refused})
        assert response.status_code == 400 and "q" in response.json()["error"]["details"], refused


@pytest.mark.parametrize("name", ["correlationId", "component"])
def test_the_invocation_log_filters_have_their_length_in_the_schema(schema, owner_api, people, name):
    assert _query(schema, "/api/discussions/{id}/invocations", "get", name)["maxLength"] == MAX_FILTER
    ws = make_workspace(people["owner"])
    path = f"/api/discussions/{ws.pk}/invocations"
    assert owner_api.get(path, {name: "x" * MAX_FILTER}).status_code == 200
    response = owner_api.get(path, {name: "x" * (MAX_FILTER + 1)})
    assert response.status_code == 400 and name in response.json()["error"]["details"]


def test_the_member_to_remove_is_never_empty(schema, owner_api, room):
    assert _query(schema, "/api/discussions/{id}/members", "delete", "username")["minLength"] == 1
    response = owner_api.delete(f"/api/discussions/{room.pk}/members?username=")
    assert response.status_code == 400 and "username" in response.json()["error"]["details"]
    assert owner_api.delete(f"/api/discussions/{room.pk}/members?username=viewer").status_code == 200
