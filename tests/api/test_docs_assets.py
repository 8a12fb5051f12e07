"""The ReDoc page loads nothing from outside this server: its bundle's sidebar logo came from cdn.redoc.ly,
which the page's Content-Security-Policy refuses (an error in the console of every visitor)."""
import re

from tests.api.conftest import Api


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_the_redoc_bundle_the_page_loads_takes_its_logo_from_no_other_server(db):
    page = Api().get("/api/redoc").content.decode()
    scripts = re.findall(r'<script src="([^"]+)"', page)
    bundle = next(src for src in scripts if src.endswith("redoc.standalone.js"))
    response = Api().get(bundle)
    assert response.status_code == 200 and "javascript" in response["Content-Type"]
    body = _body(response).decode()
    assert "cdn.redoc.ly" not in body and "Redoc" in body and len(body) > 100_000
    logo = re.search(r'alt:"redocly logo",onError:[^,]+,src:"([^"]+)"', body)
    assert logo and logo.group(1).startswith("data:image/svg+xml,")  # img-src allows data: on the docs pages
    assert "cdn" not in page.lower()
    policy = Api().get("/api/redoc")["Content-Security-Policy"]
    assert "img-src 'self' data:;" in policy + ";" and "redoc.ly" not in policy


def test_other_assets_are_served_as_they_are(db):
    response = Api().get("/api/docs/assets/swagger-ui-dist/swagger-ui-bundle.js")
    assert response.status_code == 200 and response.streaming
    assert Api().get("/api/docs/assets/redoc/bundles/missing.js").status_code == 404
