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


@pytest.mark.parametrize("page", ["/api/docs", "/api/redoc"])
def test_a_docs_page_with_a_trailing_slash_redirects_to_the_page(db, page):
    response = Api().get(page + "/")
    assert response.status_code == 301 and response["Location"] == page
    assert Api().get(page + "/", {"x": "1"})["Location"] == page + "?x=1"
    assert Api().get(page).status_code == 200


def test_other_api_routes_keep_answering_404_to_a_trailing_slash(db):
    assert Api().get("/api/schema/").status_code == 404
    assert Api().get("/api/docs/assets/").status_code == 404
