"""Calls to the Bot Connector (the Bot Framework REST API) at an activity's ``serviceUrl``.

``POST /v3/conversations`` creates a conversation (a direct chat needs the tenant id);
``POST /v3/conversations/{id}/activities`` sends; ``POST .../activities/{activityId}`` replies to an
activity (in a channel, into the thread the conversation id names after ``;messageid=``, as the Agents SDK's
``reply_to_activity`` does for an answer in a turn); ``PUT .../activities/{activityId}``
updates a message in place; ``GET /v3/conversations/{id}/members`` lists the roster.
A file a person accepted goes to the OneDrive upload session Teams gave (``upload_file``).
"""
import threading
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from urllib.parse import quote, urlsplit

import httpx
from django.conf import settings

from channels_bridge.teams import tokens

_lock = threading.Lock()
_http: httpx.Client | None = None


class ConnectorError(Exception):
    def __init__(self, status: int, message: str, retry_after: float | None = None):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.retry_after = retry_after


def configured() -> bool:
    b = settings.BRIDGES
    return bool(b["TEAMS_APP_ID"] and b["TEAMS_APP_PASSWORD"])


def _client() -> httpx.Client:
    global _http
    with _lock:
        if _http is None:
            _http = httpx.Client(timeout=httpx.Timeout(20.0, connect=5.0))
        return _http


def _url(service_url: str, *parts: str) -> str:
    return service_url.rstrip("/") + "/v3/conversations" + "".join("/" + quote(p, safe="") for p in parts)


def _retry_after(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds: given as seconds, or as an HTTP date (RFC 9110), then the time until it."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _raise_for(response: httpx.Response) -> None:
    if response.status_code >= 400:
        try:
            detail = response.json().get("error", {}).get("message") or response.text
        except (ValueError, AttributeError):
            detail = response.text
        raise ConnectorError(response.status_code, str(detail)[:500], _retry_after(response))


def _call(method: str, url: str, body: dict | None = None) -> dict | list:
    for attempt in (1, 2):
        try:
            token = tokens.bot_token(force=attempt == 2)
        except tokens.TokenError as exc:
            raise ConnectorError(0, str(exc)) from exc
        try:
            response = _client().request(method, url, json=body, headers={"Authorization": f"Bearer {token}"})
        except httpx.HTTPError as exc:
            raise ConnectorError(0, f"The connector could not be reached: {exc}") from exc
        if response.status_code == 401 and attempt == 1:
            continue  # a revoked or rotated token: fetch a fresh one once
        _raise_for(response)
        if not response.content:
            return {}
        return response.json()
    raise ConnectorError(401, "The connector refused the bot's token.")


def send_activity(service_url: str, conversation_id: str, activity: dict) -> str:
    return str(_call("POST", _url(service_url, conversation_id, "activities"), activity).get("id", ""))


def reply_to_activity(service_url: str, conversation_id: str, activity_id: str, activity: dict) -> str:
    """Send ``activity`` as a reply to the activity ``activity_id`` (its ``replyToId``)."""
    body = {**activity, "replyToId": activity_id}
    return str(_call("POST", _url(service_url, conversation_id, "activities", activity_id), body).get("id", ""))


def update_activity(service_url: str, conversation_id: str, activity_id: str, activity: dict) -> str:
    body = {**activity, "id": activity_id}
    result = _call("PUT", _url(service_url, conversation_id, "activities", activity_id), body)
    return str((result or {}).get("id") or activity_id)


def create_conversation(service_url: str, *, bot_id: str, member_id: str, tenant_id: str) -> str:
    body = {"bot": {"id": bot_id}, "members": [{"id": member_id}], "isGroup": False,
            "tenantId": tenant_id, "channelData": {"tenant": {"id": tenant_id}}}
    return str(_call("POST", _url(service_url), body)["id"])


def get_members(service_url: str, conversation_id: str) -> list[dict]:
    result = _call("GET", _url(service_url, conversation_id, "members"))
    return result if isinstance(result, list) else []


def _upload_allowed(url: str) -> bool:
    """Uploads go to an https upload session, or to the connector's own host (an emulator on loopback)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.netloc:
        return True
    connector = urlsplit(settings.BRIDGES["TEAMS_API_BASE"])
    return parts.scheme == "http" and bool(parts.netloc) and parts.netloc == connector.netloc


def upload_file(upload_url: str, data: bytes) -> dict:
    """Put the whole file into the upload session in one request (``Content-Range: bytes 0-(n-1)/n``).

    The session's URL carries its own authorisation: the bot's token is not sent there.
    """
    if not _upload_allowed(upload_url):
        raise ConnectorError(400, "The upload address is not an https upload session.")
    size = len(data)
    headers = {"Content-Length": str(size), "Content-Range": f"bytes 0-{size - 1}/{size}"}
    try:
        response = _client().put(upload_url, content=data, headers=headers)
    except httpx.HTTPError as exc:
        raise ConnectorError(0, f"The upload session could not be reached: {exc}") from exc
    _raise_for(response)
    try:
        return response.json() if response.content else {}
    except ValueError:
        return {}
