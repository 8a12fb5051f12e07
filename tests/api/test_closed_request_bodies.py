"""A request body the server refuses unknown fields in is closed in the schema (``additionalProperties: false``),
and one whose unknown fields it ignores is not: a client built from the schema learns which is which."""
import pytest

from tests.api.conftest import Api
from tests.api.test_schema_limits import _rows, _url

UNKNOWN = "zzz"


@pytest.fixture
def schema(db):
    return Api().get("/api/schema").json()


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _closed(schema: dict, node: dict) -> bool:
    node = _resolve(schema, node)
    if "oneOf" in node:
        return all(_closed(schema, option) for option in node["oneOf"])
    return node.get("additionalProperties") is False


def test_the_schema_says_which_bodies_refuse_unknown_fields(schema, people, room):
    api, ids = _rows(people, room)
    checked, wrong = [], []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            answer = getattr(api, method)(_url(path, ids), {UNKNOWN: 1}, format="json")
            assert answer.status_code < 500, (method, path, answer.content)
            refused = answer.status_code == 400 and UNKNOWN in (answer.json()["error"].get("details") or {})
            checked.append((method, path))
            if refused != _closed(schema, body["schema"]):
                wrong.append((method, path, "refuses unknown fields" if refused else "ignores unknown fields"))
    assert not wrong, wrong
    assert len(checked) > 20
