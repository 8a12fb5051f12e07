"""The bot's own token for calls to the Bot Connector (client credentials), cached until it expires."""
import threading
import time

import httpx
from django.conf import settings

SCOPE = "https://api.botframework.com/.default"
MARGIN = 300  # seconds before expiry when a token is no longer used

_lock = threading.Lock()
_cache: dict[tuple[str, str], tuple[str, float]] = {}
fetches = 0


class TokenError(Exception):
    pass


def bot_token(force: bool = False) -> str:
    global fetches
    b = settings.BRIDGES
    key = (b["TEAMS_TOKEN_URL"], b["TEAMS_APP_ID"])
    with _lock:
        cached = _cache.get(key)
        if cached and not force and cached[1] > time.monotonic():
            return cached[0]
        try:
            response = httpx.post(b["TEAMS_TOKEN_URL"], timeout=15, data={
                "grant_type": "client_credentials", "client_id": b["TEAMS_APP_ID"],
                "client_secret": b["TEAMS_APP_PASSWORD"], "scope": SCOPE,
            })
        except httpx.HTTPError as exc:
            raise TokenError(f"The token endpoint could not be reached: {exc}") from exc
        if response.status_code != 200:
            raise TokenError(f"The token endpoint answered {response.status_code}: {response.text[:300]}")
        body = response.json()
        token, lifetime = body["access_token"], float(body.get("expires_in", 3600))
        _cache[key] = (token, time.monotonic() + max(0.0, lifetime - MARGIN))
        fetches += 1
        return token


def forget() -> None:
    with _lock:
        _cache.clear()
