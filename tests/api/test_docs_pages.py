"""The schema's formats and the documentation pages' addresses."""
import pytest

from tests.api.conftest import Api


@pytest.mark.parametrize("fmt, starts", [(None, b"{"), ("json", b"{"), ("yaml", b"openapi: 3")])
def test_the_schema_comes_in_json_and_yaml(db, fmt, starts):
    response = Api().get("/api/schema", {"format": fmt} if fmt else None)
    assert response.status_code == 200 and response.content.lstrip().startswith(starts)


@pytest.mark.parametrize("fmt", ["xml", "JSON", "openapi", "docx"])
def test_an_unsupported_schema_format_is_a_400_naming_it(db, fmt):
    response = Api().get("/api/schema", {"format": fmt})
    assert response.status_code == 400 and response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["success"] is False and body["error"]["code"] == "validation_error"
    assert body["error"]["details"] == {"format": ["Must be json or yaml."]}
