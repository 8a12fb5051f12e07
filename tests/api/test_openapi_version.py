"""The schema is OpenAPI 3.1, valid as such, and its schemas are plain JSON Schema (2020-12): a value that may be
null says so in its ``type`` (or a ``oneOf`` with ``{"type": "null"}``), never with OpenAPI 3.0's ``nullable``,
which a JSON Schema validator does not know (it read ``nullable`` fields as never null)."""
import jsonschema
from openapi_spec_validator import validate

from tests.api.conftest import Api


def _keys(node):
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from _keys(item)


def test_the_schema_is_valid_openapi_3_1_without_nullable(db):
    schema = Api().get("/api/schema").json()
    assert schema["openapi"] == "3.1.0"
    validate(schema)  # raises on any error
    assert "nullable" not in set(_keys(schema["components"])) | set(_keys(schema["paths"]))


def test_a_null_the_server_sends_is_valid_as_plain_json_schema(owner_api, catalog):
    from tests.api.conftest import create_body

    schema = owner_api.get("/api/schema").json()
    moderator = schema["components"]["schemas"]["DiscussionOut"]["properties"]["moderator"]
    validator = jsonschema.Draft202012Validator({**moderator, "components": schema["components"]})
    assert validator.is_valid(None)  # a discussion without a facilitator
    sent = owner_api.post("/api/discussions", create_body(catalog)).json()["data"]["moderator"]
    assert sent is not None and validator.is_valid(sent)
    assert not validator.is_valid("Chair")
