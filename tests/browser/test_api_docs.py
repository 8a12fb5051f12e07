"""The API's documentation pages render under their Content-Security-Policy without a refusal in the console:
ReDoc's bundle fetched its sidebar logo from cdn.redoc.ly, which the policy refuses."""
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_redoc_page_renders_without_a_policy_error(make_page):
    page, _ = make_page("reader", sign_in=False)
    page.goto("/api/redoc")
    page.get_by_role("link", name="API docs by Redocly").wait_for()
    page.get_by_text("Convene API").first.wait_for()
    page.wait_for_load_state("networkidle")
    assert page.errors == []
    logo = page.get_by_role("link", name="API docs by Redocly").locator("img")
    assert logo.get_attribute("src").startswith("data:image/svg+xml,")  # the footer keeps its (blank) image


def test_the_swagger_page_renders_without_a_policy_error(make_page):
    page, _ = make_page("reader", sign_in=False)
    page.goto("/api/docs")
    page.locator(".swagger-ui .opblock").first.wait_for()
    page.wait_for_load_state("networkidle")
    assert page.errors == []
