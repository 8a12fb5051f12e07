"""The envelope on every response under /api/: errors of every kind, throttling, the schema and the docs."""
import pytest

from tests.api.conftest import Api, create_body


def _is_error_envelope(response, status, code=None):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["success"] is False and set(body) == {"success", "error"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    if code:
        assert body["error"]["code"] == code
    return body


@pytest.mark.parametrize("path", ["/api/nope", "/api/discussions/", "/api/discussions/abc", "/api/discussions/1/dance",
                                  "/api/", "/api", "/api/docs/assets/missing.js"])
def test_unknown_routes_are_404_envelopes(owner_api, path):
    _is_error_envelope(owner_api.get(path), 404, "not_found")


def test_unknown_routes_are_404_envelopes_for_anonymous_and_posts():
    _is_error_envelope(Api().post("/api/what/ever", {"a": 1}), 404, "not_found")


@pytest.mark.parametrize("method, path", [("put", "/api/discussions"), ("delete", "/api/discussions"),
                                          ("get", "/api/discussions/1/start"), ("post", "/api/discussions/1/turns"),
                                          ("put", "/api/agents/1")])
def test_wrong_methods_are_405_envelopes(owner_api, method, path):
    response = getattr(owner_api, method)(path)
    _is_error_envelope(response, 405, "method_not_allowed")
    assert response["Allow"]


def test_options_is_not_a_metadata_page(owner_api):
    _is_error_envelope(owner_api.client.options("/api/discussions"), 405)


@pytest.mark.parametrize("method, path, allowed", [
    ("options", "/api/discussions", {"GET", "HEAD", "POST"}),
    ("put", "/api/discussions", {"GET", "HEAD", "POST"}),
    ("get", "/api/discussions/1/start", {"POST"}),
    ("options", "/api/agents/1", {"GET", "HEAD", "PATCH", "DELETE"}),
])
def test_the_allow_header_lists_only_methods_that_are_answered(owner_api, method, path, allowed):
    response = getattr(owner_api.client, method)(path)
    _is_error_envelope(response, 405, "method_not_allowed")
    assert {m.strip() for m in response["Allow"].split(",")} == allowed


def test_unauthenticated_is_401_with_www_authenticate():
    response = Api().get("/api/discussions")
    _is_error_envelope(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


def test_a_bad_token_is_401(db):
    api = Api()
    api.client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    _is_error_envelope(api.get("/api/discussions"), 401, "authentication_failed")


def test_unhandled_errors_are_500_envelopes(owner_api, room, monkeypatch, caplog):
    from facilitation.api.views import discussions

    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(discussions, "detail_response", boom)
    body = _is_error_envelope(owner_api.get(f"/api/discussions/{room.pk}"), 500, "server_error")
    assert "kaboom" not in str(body)  # no internals leak
    assert any("kaboom" in str(r.exc_info) for r in caplog.records if r.exc_info)


def test_unhandled_errors_outside_drf_are_500_envelopes(owner_api, monkeypatch):
    from facilitation.api.views import docs

    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(docs, "serve", boom)
    _is_error_envelope(owner_api.get("/api/docs/assets/swagger-ui-dist/swagger-ui.css"), 500, "server_error")


def test_success_envelope_shape(owner_api, room):
    body = owner_api.get(f"/api/discussions/{room.pk}").json()
    assert body["success"] is True and "error" not in body and body["data"]["id"] == room.pk
    listed = owner_api.get("/api/discussions").json()
    assert set(listed) == {"success", "data", "meta"}


def test_camel_case_in_and_out(owner_api, catalog):
    data = owner_api.post("/api/discussions", create_body(catalog, maxRounds=4)).json()["data"]
    assert data["maxRounds"] == 4 and "max_rounds" not in data
    assert all("_" not in key for key in data) and all("_" not in key for key in data["usage"])


def test_create_is_throttled_with_retry_after(owner_api, catalog, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        "discussions.create": "2/min", "discussions.lifecycle": "2/min"}}
    from rooms.models import Room

    assert owner_api.post("/api/discussions", create_body(catalog)).status_code == 201
    assert owner_api.post("/api/discussions", create_body(catalog)).status_code == 201
    before = Room.objects.count()
    response = owner_api.post("/api/discussions", create_body(catalog))
    body = _is_error_envelope(response, 429, "throttled")
    assert 1 <= int(response["Retry-After"]) <= 60
    assert body["error"]["details"]["retryAfter"] == int(response["Retry-After"])
    assert Room.objects.count() == before
    assert owner_api.get("/api/discussions").status_code == 200  # reads are not throttled


def test_lifecycle_is_throttled_with_retry_after(owner_api, room, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        "discussions.create": "100/min", "discussions.lifecycle": "2/min"}}
    from rooms.models import Room

    assert owner_api.post(f"/api/discussions/{room.pk}/start").status_code == 200
    assert owner_api.post(f"/api/discussions/{room.pk}/pause").status_code == 200
    response = owner_api.post(f"/api/discussions/{room.pk}/resume")
    _is_error_envelope(response, 429, "throttled")
    assert int(response["Retry-After"]) >= 1
    assert Room.objects.get(pk=room.pk).status == "paused"


def test_schema_is_openapi_3_with_every_route(db):
    response = Api().get("/api/schema")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    paths = set(schema["paths"])
    expected = {"/api/discussions", "/api/discussions/{id}", "/api/discussions/{id}/moderator",
                "/api/discussions/{id}/turns", "/api/discussions/{id}/export", "/api/discussions/{id}/members",
                "/api/discussions/{id}/members/{username}", "/api/agents", "/api/agents/{id}", "/api/personas",
                "/api/personas/{id}", "/api/roles", "/api/roles/{id}",
                *(f"/api/discussions/{{id}}/{verb}" for verb in ("start", "pause", "resume", "stop", "conclude"))}
    assert expected <= paths
    create = schema["paths"]["/api/discussions"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    discussion = schema["components"]["schemas"][create.rsplit("/", 1)[1]]["oneOf"][0]["$ref"]  # [1]: a facilitation run
    props = schema["components"]["schemas"][discussion.rsplit("/", 1)[1]]["properties"]
    assert {"name", "topic", "format", "kind", "moderatorId", "maxRounds", "participants"} <= set(props)
    assert Api().get("/api/schema", {"format": "yaml"}).content.startswith(b"openapi: 3")


def test_docs_page_works_offline(db):
    response = Api().get("/api/docs")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "/api/docs/assets/swagger-ui-dist/swagger-ui-bundle.js" in html and "cdn" not in html.lower()
    asset = Api().get("/api/docs/assets/swagger-ui-dist/swagger-ui-bundle.js")
    assert asset.status_code == 200 and b"".join(asset.streaming_content)
    assert Api().get("/api/redoc").status_code == 200


def test_schema_generates_without_warnings(tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert (tmp_path / "schema.yaml").read_text().startswith("openapi: 3")


def test_no_json_answer_is_kept_in_a_cache(owner_api, room):
    """A browser going Back reads a page's requests from its cache unless told not to: the list then showed a
    discussion as it was before it started."""
    for response in (owner_api.get("/api/discussions"), owner_api.get(f"/api/discussions/{room.pk}"),
                     owner_api.get("/api/nope")):
        assert response["Content-Type"].startswith("application/json")
        assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"], response.headers
