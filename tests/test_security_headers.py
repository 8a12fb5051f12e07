"""Headers every page carries, and where the admin lives."""
import pytest
from django.urls import reverse


@pytest.mark.django_db
def test_pages_carry_a_strict_content_security_policy(client):
    policy = client.get("/login/")["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in policy and directives["object-src"] == "'none'"


@pytest.mark.django_db
def test_the_api_documentation_gets_its_own_policy(client):
    assert "'unsafe-inline'" in client.get("/api/docs")["Content-Security-Policy"]
    assert "'unsafe-inline'" not in client.get("/api/schema")["Content-Security-Policy"]


@pytest.mark.django_db
def test_the_admin_is_not_at_the_default_path(client, settings):
    assert client.get("/admin/").status_code == 404
    assert reverse("admin:index") == "/" + settings.ADMIN_PATH
    assert client.get(reverse("admin:index")).status_code == 302  # to the admin's sign-in


@pytest.mark.django_db
def test_the_api_docs_pages_load_nothing_from_outside_this_server(client):
    """ReDoc's page came with Google's web fonts (fetched by every visitor, refused by the policy anyway)."""
    for path in ("/api/docs", "/api/redoc"):
        page = client.get(path).content.decode()
        assert "googleapis" not in page and "gstatic" not in page, path
    redoc = client.get("/api/redoc").content.decode()
    assert '<redoc spec-url="/api/schema"' in redoc and "/api/docs/assets/redoc/" in redoc
