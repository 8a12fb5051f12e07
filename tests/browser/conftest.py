"""Fixtures for the browser tests: Debian's chromium driven by Playwright against a live stack.

The stack runs the ``scripted`` model with a delay on every participant turn, so a
discussion lasts long enough to pause, resume and lose the connection in the middle.
Screenshots go to ``test-artifacts/screenshots/``.
"""
import json
import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
PASSWORD = "browser-pass-123"
TURN_DELAY = 0.7
LONG_TEXT = " ".join(["The long answer keeps going so the card has to fold behind a Show more toggle."] * 14)
HOSTILE_SPEAKER = "Hostile"
# Markdown and HTML a model (or a person) might write to break out of the page.
HOSTILE_TURN = "\n".join([
    "# A heading from the model",
    "A **bold claim** and an _italic aside_, with `code` and a [safe link](https://example.com/docs).",
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "<svg onload=\"window.__pwned = 'svg'\"></svg>",
    "[click me](javascript:window.__pwned='link') and <javascript:window.__pwned='autolink'>",
    "[quoted](https://example.com\" onmouseover=\"window.__pwned='attr')",
    "![tracker](http://127.0.0.1:9/pixel.png)",
    "<a href=\"#\" onclick=\"window.__pwned='raw-a'\">raw anchor</a> <iframe srcdoc=\"x\"></iframe>",
    "",
    "- first point for @architect",
    "- second point",
    "DECISION: keep the page inert",
    "VOTE: READY",
])
SCRIPT = [
    {"purpose": "contribution", "speaker": HOSTILE_SPEAKER, "text": HOSTILE_TURN},
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
def browser(shared_stack):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def shot(page, name, full_page=True):
    page.screenshot(path=str(screenshots_dir() / name), full_page=full_page)


def api(page, method, path, body=None):
    """A REST call from inside the signed-in page (session cookie and CSRF token): (status, json)."""
    return page.evaluate("""async ([method, path, body]) => {
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const init = { method, credentials: "same-origin", headers: { "X-CSRFToken": token, Accept: "application/json" } };
        if (body !== null) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
        const response = await fetch(`/api/${path}`, init);
        const text = await response.text();
        return [response.status, text ? JSON.parse(text) : null];
    }""", [method, path, body])


def vendor_files() -> list[Path]:
    from django.conf import settings

    vendor = Path(settings.BASE_DIR) / "frontend" / "static" / "vendor"
    return [vendor / name for name in ("socket.io.min.js", "markdown-it.min.js", "purify.min.js")]


@pytest.fixture(scope="session")
def shared_stack(django_db_setup, django_db_blocker, tmp_path_factory):
    """One Redis + worker + daphne for every browser test of the run, on the test database.

    Each test still gets an empty database (``browser_stack`` flushes it afterwards and
    seeds the presets first); sharing the processes saves their start-up per test.
    """
    from tests.conftest import _start_stack

    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium); the browser tests need Debian's chromium")
    missing = [str(f) for f in vendor_files() if not f.exists()]
    assert not missing, f"{missing} missing: run `npm --prefix frontend ci` (make install does)"
    script = tmp_path_factory.mktemp("browser") / "script.json"
    script.write_text(json.dumps(SCRIPT))
    with django_db_blocker.unblock():
        runtime = _start_stack(web=True, extra_env={"LLM_PROVIDER": "scripted", "CONVENE_SCRIPT_FILE": str(script),
                                                       "CONVENE_DEMO_ACCOUNT": "demo"})
    yield runtime
    runtime.stop()


@pytest.fixture
def browser_stack(shared_stack, transactional_db, settings):
    """The shared stack, this process pointed at its Redis; presets seeded; slow scripted participants."""
    from facilitation.presets.seed import seed_presets
    from tests.redis_target import point_at

    previous = settings.REDIS_URL
    point_at(shared_stack.redis_url, close_old=False)
    settings.REALTIME_BACKEND = "redis"
    seed_presets()
    yield shared_stack
    point_at(previous, close_old=False)


@pytest.fixture
def make_page(browser, browser_stack):
    """Open a signed-in page for a (new) user: ``make_page("alice")`` -> (page, user); ``locale``: the browser's language."""
    from tests.factories import make_user

    contexts = []

    def open_page(username, *, sign_in=True, viewport=None, locale=None):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.filter(username=username).first() or make_user(username)
        user.set_password(PASSWORD)
        user.save()
        context = browser.new_context(base_url=browser_stack.base_url, accept_downloads=True,
                                      viewport=viewport or {"width": 1280, "height": 900}, locale=locale)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20000)
        page.errors = []
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        # The pages run under the site's Content-Security-Policy: a violation is an error too.
        page.on("console", lambda msg: page.errors.append(msg.text) if "Content Security Policy" in msg.text else None)
        if sign_in:
            sign_in_as(page, username)
        return page, user

    yield open_page
    for context in contexts:
        context.close()


def pause_quietly(room) -> None:
    """The room paused with no step running (people may speak in it), as its event log says too: a page that joins
    replays the log's status, and a log still saying draft would close the comment box under the test."""
    from rooms.events import EventType, build, record_event
    from rooms.models import Room

    Room.objects.filter(pk=room.pk).update(status="paused")
    room.refresh_from_db()
    record_event(room, EventType.STATUS, build.status(room))


def sign_in_as(page, username, shot: str | None = None):
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    if shot:
        page.screenshot(path=str(screenshots_dir() / shot))
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
