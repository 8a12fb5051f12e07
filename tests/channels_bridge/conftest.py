"""Fixtures for the chat bridges: fake platforms on loopback, and running the bridge's tasks in-process."""
import time

import pytest

from tests.fakes.botframework import FakeBotFramework
from tests.fakes.telegram_server import FakeTelegram

SECRET = "webhook-secret-0123456789"
FAST_LIMITS = {"telegram_chat": (1000, 1000.0), "telegram_group": (1000, 1000.0), "telegram_global": (1000, 1000.0),
               "teams_conversation": (1000, 1000.0)}


@pytest.fixture(autouse=True)
def _bridge_env(settings):
    """Tasks are collected (no broker), buckets live in memory, caches start empty."""
    from channels_bridge import ratelimit
    from channels_bridge.teams import auth, tokens
    from rooms import dispatch

    settings.TASK_DISPATCH = "memory"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Fake credentials and dead loopback addresses: an accidental real call fails at once.
    settings.BRIDGES = {**settings.BRIDGES, "RATE_LIMIT_BACKEND": "memory", "TELEGRAM_WEBHOOK_SECRET": SECRET,
                        "RATE_LIMITS": FAST_LIMITS, "TEAMS_KEYS_MIN_REFRESH": 0.0, "TELEGRAM_BOT_TOKEN": "123456:TEST",
                        "TELEGRAM_API_BASE": "http://127.0.0.1:9", "TEAMS_API_BASE": "http://127.0.0.1:9/",
                        "TEAMS_OPENID_METADATA_URL": "http://127.0.0.1:9/openid", "TEAMS_TOKEN_URL": "http://127.0.0.1:9/token",
                        "TEAMS_APP_ID": "", "TEAMS_APP_PASSWORD": "", "TEAMS_TENANT_ID": ""}
    dispatch.sent.clear()
    ratelimit.reset_memory()
    auth.forget_keys()
    tokens.forget()
    yield
    dispatch.sent.clear()


@pytest.fixture
def telegram(settings):
    fake = FakeTelegram(token=settings.BRIDGES["TELEGRAM_BOT_TOKEN"])
    settings.BRIDGES = {**settings.BRIDGES, "TELEGRAM_API_BASE": fake.root}
    yield fake
    fake.stop()


@pytest.fixture
def teams(settings):
    fake = FakeBotFramework()
    settings.BRIDGES = {**settings.BRIDGES, **fake.settings()}
    yield fake
    fake.stop()


def committed(fn, *args, **kwargs):
    """Run ``fn`` and then what it registered to happen on commit (tests run inside one transaction)."""
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        return fn(*args, **kwargs)


def drain(max_rounds: int = 200, max_wait: float = 5.0) -> list[str]:
    """Run the bridge tasks the actions queued (and those they queue in turn), like a worker would.
    Tasks for other queues are left in ``dispatch.sent``."""
    from channels_bridge.processing import process_update
    from channels_bridge.sender import send_delivery
    from rooms import dispatch

    done, others = [], []
    for _ in range(max_rounds):
        if not dispatch.sent:
            dispatch.sent.extend(others)  # other queues' tasks stay for the test to run
            return done
        name, args, queue = dispatch.sent.pop(0)
        if queue != "bridge":
            others.append((name, args, queue))
            continue
        if name == "bridge.process_update":
            done.append(committed(process_update, *args))
        elif name == "bridge.send_delivery":
            again = committed(send_delivery, *args)
            if again is not None:
                time.sleep(min(again, max_wait))
                dispatch.sent.append((name, args, queue))
            done.append(f"delivery {args[0]}")
        else:
            done.append(name)
    raise AssertionError("the bridge tasks did not settle")


@pytest.fixture
def run_tasks():
    return drain


@pytest.fixture
def post_telegram(client, settings):
    """POST an update to the webhook as Telegram would (the right secret unless told otherwise)."""
    import json

    def post(update, secret=SECRET):
        headers = {"HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN": secret} if secret is not None else {}
        return committed(client.post, "/bridge/telegram/webhook", data=json.dumps(update), content_type="application/json", **headers)

    return post


@pytest.fixture
def post_teams(client, teams):
    import json

    def post(activity, authorization=None):
        headers = {"HTTP_AUTHORIZATION": authorization if authorization is not None else teams.authorization()}
        body = activity if isinstance(activity, (str, bytes)) else json.dumps(activity)
        return committed(client.post, "/bridge/teams/messages", data=body, content_type="application/json", **headers)

    return post
