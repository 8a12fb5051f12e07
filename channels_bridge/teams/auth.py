"""Verifying the JWT that the Bot Connector puts on every request to our messaging endpoint.

Per the Bot Framework's authentication rules: the ``Authorization: Bearer`` token is signed
(RS256) by a key published in the JWKS named by ``TEAMS_OPENID_METADATA_URL``; its issuer is
``https://api.botframework.com``; its audience is our app id (``TEAMS_APP_ID``); it has not
expired (five minutes of clock skew allowed); the key's endorsements, when listed, include
the activity's channel; and its ``serviceurl`` claim equals the activity's ``serviceUrl``
(so a service URL is trusted only from a verified token), an https address of the Bot Connector
for Teams (``SERVICE_HOSTS``, or ``BRIDGES["TEAMS_SERVICE_HOSTS"]``) or the host of ``TEAMS_API_BASE``:
the bot sends its own token to that address, so it never goes anywhere else. Keys are cached and
fetched again when a token names a key id we do not know (keys rotate) or after a day.
"""
import threading
import time
from urllib.parse import urlsplit

import httpx
import jwt
from django.conf import settings

ISSUER = "https://api.botframework.com"
ALGORITHMS = ["RS256"]
LEEWAY = 300
KEYS_MAX_AGE = 24 * 3600
#: Where the Bot Connector serves Teams: the public cloud (``smba.trafficmanager.net/<region>/``) and the government
#: clouds (``smba.infra.gcc.teams.microsoft.com``, ``smba.infra.gov.teams.microsoft.us``...). A leading dot: any subdomain.
SERVICE_HOSTS = ("smba.trafficmanager.net", ".teams.microsoft.com", ".teams.microsoft.us")


class Unauthorized(Exception):
    """The request is not from the Bot Connector (or not for us): answer 401, change nothing."""


class OpenIdKeys:
    """The signing keys of one OpenID metadata document, cached."""

    def __init__(self, metadata_url: str, min_refresh_interval: float = 10.0):
        self.metadata_url = metadata_url
        self.min_refresh_interval = min_refresh_interval
        self._keys: dict[str, tuple[object, list[str]]] = {}
        self._fetched_at = 0.0
        self._lock = threading.Lock()
        self.fetches = 0

    def _fetch(self) -> None:
        with httpx.Client(timeout=10) as http:
            metadata = http.get(self.metadata_url).raise_for_status().json()
            jwks = http.get(metadata["jwks_uri"]).raise_for_status().json()
        keys = {}
        for jwk in jwks.get("keys", []):
            if not isinstance(jwk, dict) or not jwk.get("kid"):
                continue
            try:
                keys[jwk["kid"]] = (jwt.PyJWK(jwk, algorithm="RS256").key, list(jwk.get("endorsements") or []))
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, KeyError):
                continue
        self._keys = keys
        self._fetched_at = time.monotonic()
        self.fetches += 1

    def get(self, kid: str) -> tuple[object, list[str]] | None:
        with self._lock:
            age = time.monotonic() - self._fetched_at
            stale = not self._keys or age > KEYS_MAX_AGE
            unknown = kid not in self._keys and age >= self.min_refresh_interval
            if stale or unknown:
                try:
                    self._fetch()
                except (httpx.HTTPError, ValueError, KeyError) as exc:
                    if not self._keys:
                        raise Unauthorized(f"The signing keys could not be fetched: {exc}") from exc
            return self._keys.get(kid)


_keys_lock = threading.Lock()
_keys_by_url: dict[str, OpenIdKeys] = {}


def keys() -> OpenIdKeys:
    url = settings.BRIDGES["TEAMS_OPENID_METADATA_URL"]
    with _keys_lock:
        if url not in _keys_by_url:
            _keys_by_url[url] = OpenIdKeys(url, settings.BRIDGES.get("TEAMS_KEYS_MIN_REFRESH", 10.0))
        return _keys_by_url[url]


def forget_keys() -> None:
    with _keys_lock:
        _keys_by_url.clear()


def verify_token(authorization: str | None) -> tuple[dict, list[str]]:
    """The token's claims and its key's endorsements, or ``Unauthorized``."""
    app_id = settings.BRIDGES["TEAMS_APP_ID"]
    if not app_id:
        raise Unauthorized("Teams is not configured (TEAMS_APP_ID is empty).")
    if not authorization or not authorization.startswith("Bearer "):
        raise Unauthorized("A Bearer token is required.")
    token = authorization[len("Bearer "):].strip()
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise Unauthorized(f"Malformed token: {exc}") from exc
    if header.get("alg") not in ALGORITHMS:
        raise Unauthorized("The token is not signed with RS256.")
    found = keys().get(str(header.get("kid", "")))
    if found is None:
        raise Unauthorized("The token's signing key is unknown.")
    key, endorsements = found
    try:
        claims = jwt.decode(token, key, algorithms=ALGORITHMS, audience=app_id, issuer=ISSUER, leeway=LEEWAY,
                            options={"require": ["exp", "iss", "aud"]})
    except jwt.PyJWTError as exc:
        raise Unauthorized(f"The token is not valid: {exc}") from exc
    return claims, endorsements


def check_activity(claims: dict, endorsements: list[str], activity: dict) -> None:
    """The token vouches for this activity: its channel is endorsed and its serviceUrl matches."""
    channel = activity.get("channelId")
    if endorsements and channel not in endorsements:
        raise Unauthorized(f"The signing key is not endorsed for channel {channel!r}.")
    claimed = claims.get("serviceurl") or claims.get("serviceUrl")
    if not claimed or claimed.rstrip("/") != str(activity.get("serviceUrl", "")).rstrip("/"):
        raise Unauthorized("The activity's serviceUrl does not match the token.")
    if not service_url_allowed(str(claimed)):
        raise Unauthorized("The activity's serviceUrl is not a Bot Connector address for Teams.")


def service_url_allowed(url: str) -> bool:
    """An https address on a host of the Bot Connector for Teams, or the address of ``TEAMS_API_BASE`` (an emulator
    or a loopback connector: its scheme, host and port)."""
    try:
        parts, base = urlsplit(url), urlsplit(settings.BRIDGES["TEAMS_API_BASE"])
        port, base_port = parts.port, base.port
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    if not host:
        return False
    if (parts.scheme, host, port) == (base.scheme, (base.hostname or "").lower(), base_port):
        return True
    hosts = settings.BRIDGES.get("TEAMS_SERVICE_HOSTS") or SERVICE_HOSTS
    return parts.scheme == "https" and any(host.endswith(h) if h.startswith(".") else host == h for h in hosts)
