"""Fixtures for the browser tests: Debian's chromium driven by Playwright against a live stack.

The stack runs the ``scripted`` model with a delay on every participant turn, so a
discussion lasts long enough to pause, resume and lose the connection in the middle.
Screenshots go to ``test-artifacts/screenshots/``.
"""
import json
import os
from pathlib import Path

import pytest

from tests.waiting import wait_for

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
PASSWORD = "browser-pass-123"
TURN_DELAY = 0.7
LONG_TEXT = " ".join(["The long answer keeps going so the card has to fold behind a Show more toggle."] * 14)
SCRIPT = [
    {"purpose": "contribution", "round": 2, "delay": TURN_DELAY,
     "text": "{speaker} in round {round}.\nQ: which data is read most?\n" + LONG_TEXT + "\nCONCERN: stale prices"},
    {"purpose": "contribution", "delay": TURN_DELAY,
     "text": "{speaker} in round {round}: cache the catalogue, not the cart.\nDECISION: start with a 60 s TTL\n"
             "CONCERN: invalidation on price changes\nVOTE: READY\nTODO: measure the hit rate @architect"},
    {"purpose": "evaluation", "round": 3, "text": "I am not sure what to do next."},
    {"purpose": "synthesis", "text": "## Outcome\nCache the **catalogue** with a short TTL.\n\n## Next steps\n- Measure the hit rate\n- Review invalidation"},
]

# Playwright's sync API keeps an event loop in this thread; the ORM calls the tests make
# between browser steps are ordinary blocking calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def screenshots_dir() -> Path:
    from django.conf import settings

    path = Path(settings.BASE_DIR) / "test-artifacts" / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium); the browser tests need Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def browser_stack(stack_factory, settings, tmp_path):
    """Redis + worker + daphne on the test database; presets seeded; slow scripted participants."""
    from facilitation.presets.seed import seed_presets

    vendor = Path(settings.BASE_DIR) / "frontend" / "static" / "vendor" / "socket.io.min.js"
    assert vendor.exists(), f"{vendor} is missing: run `npm --prefix frontend ci` (make install does)"

    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    runtime = stack_factory(web=True, extra_env={"LLM_PROVIDER": "scripted", "CONVENE_SCRIPT_FILE": str(script)})
    settings.REALTIME_BACKEND = "redis"
    seed_presets()
    return runtime


@pytest.fixture
def make_page(browser, browser_stack):
    """Open a signed-in page for a (new) user: ``make_page("alice")`` -> (page, user)."""
    from tests.factories import make_user

    contexts = []

    def open_page(username, *, sign_in=True, viewport=None):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.filter(username=username).first() or make_user(username)
        user.set_password(PASSWORD)
        user.save()
        context = browser.new_context(base_url=browser_stack.base_url, accept_downloads=True,
                                      viewport=viewport or {"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20000)
        page.errors = []
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        if sign_in:
            sign_in_as(page, username)
        return page, user

    yield open_page
    for context in contexts:
        context.close()


def sign_in_as(page, username, shot: str | None = None):
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    if shot:
        page.screenshot(path=str(screenshots_dir() / shot))
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
