"""A fake Bot Framework on loopback: the connector, its token endpoint, and the OpenID metadata
with a JWKS whose keys sign test tokens (RSA keys made with ``cryptography``).

- ``GET /v1/.well-known/openidconfiguration`` and ``GET /v1/.well-known/keys`` (keys carry
  ``endorsements``, as the Bot Framework's do); ``rotate()`` adds a new signing key.
- ``POST /botframework.com/oauth2/v2.0/token``: client credentials -> ``access_token``.
- Connector under ``service_url`` (``{root}/amer/``): ``POST v3/conversations``,
  ``POST v3/conversations/{id}/activities``, ``POST v3/conversations/{id}/activities/{aid}`` (a reply to the
  activity ``aid``, recorded as its ``replyTo``), ``PUT v3/conversations/{id}/activities/{aid}``,
  ``GET v3/conversations/{id}/members``; every call needs a token from the token endpoint.
  Scriptable: ``fail_next(status, retry_after=...)``, ``refuse_direct(member_id)`` (403).
- ``sign(...)`` makes the JWT the connector would put on a request to the bot;
  ``activity(...)`` and friends build activities as Teams sends them.
"""
import base64
import itertools
import secrets
import threading
import time
import uuid
from collections import deque
from urllib.parse import unquote

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.loopback import LoopbackServer

ISSUER = "https://api.botframework.com"


def _b64(n: int) -> str:
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class SigningKey:
    def __init__(self, endorsements=("msteams", "emulator")):
        self.kid = uuid.uuid4().hex[:16]
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.endorsements = list(endorsements)

    def jwk(self) -> dict:
        numbers = self.private.public_key().public_numbers()
        return {"kty": "RSA", "use": "sig", "kid": self.kid, "x5t": self.kid, "n": _b64(numbers.n), "e": _b64(numbers.e),
                "endorsements": self.endorsements}


class FakeBotFramework(LoopbackServer):
    def __init__(self, app_id: str = "00000000-0000-0000-0000-00000000b07a", app_password: str = "test-secret",
                 tenant_id: str = "72f988bf-0000-0000-0000-000000000000"):
        super().__init__()
        self.app_id, self.app_password, self.tenant_id = app_id, app_password, tenant_id
        self.bot_id = f"28:{app_id}"
        self.bot_name = "Convene"  # the app's name as Teams shows it (and people @mention it)
        self.keys = [SigningKey()]
        self.issued: dict[str, float] = {}
        self.token_requests = 0
        self.key_requests = 0
        self.activities: list[dict] = []     # sent: {"conversation", "activity", "id", "at", "replyTo"}
        self.updates: list[dict] = []        # updated in place: {"conversation", "id", "activity"}
        self.conversations: list[dict] = []  # created: {"id", "params"}
        self.members: dict[str, list[dict]] = {}
        self._faults: deque = deque()
        self._refused: set[str] = set()
        self._ids = itertools.count(1)
        self._fault_lock = threading.Lock()
        self.route("GET", r"/v1/\.well-known/openidconfiguration", self._metadata)
        self.route("GET", r"/v1/\.well-known/keys", self._jwks)
        self.route("POST", r"/botframework\.com/oauth2/v2\.0/token", self._token)
        self.route("POST", r"/amer/v3/conversations", self._create)
        self.route("POST", r"/amer/v3/conversations/(?P<conv>[^/]+)/activities", self._send)
        self.route("POST", r"/amer/v3/conversations/(?P<conv>[^/]+)/activities/(?P<aid>[^/]+)", self._send)
        self.route("PUT", r"/amer/v3/conversations/(?P<conv>[^/]+)/activities/(?P<aid>[^/]+)", self._update)
        self.route("GET", r"/amer/v3/conversations/(?P<conv>[^/]+)/members", self._members)
        # A OneDrive upload session (the address a file consent invoke names); no bearer token, as in OneDrive.
        self.route("PUT", r"/upload/(?P<item>[^/]+)", self._upload)
        self.uploads: list[dict] = []  # {"item", "data", "headers"}
        self.upload_faults: deque = deque()

    # -- configuration for the app under test ---------------------------------------------------

    @property
    def service_url(self) -> str:
        return f"{self.root}/amer/"

    @property
    def metadata_url(self) -> str:
        return f"{self.root}/v1/.well-known/openidconfiguration"

    @property
    def token_url(self) -> str:
        return f"{self.root}/botframework.com/oauth2/v2.0/token"

    def settings(self) -> dict:
        """The BRIDGES settings pointing at this fake."""
        return {"TEAMS_APP_ID": self.app_id, "TEAMS_APP_PASSWORD": self.app_password, "TEAMS_TENANT_ID": self.tenant_id,
                "TEAMS_API_BASE": self.service_url, "TEAMS_OPENID_METADATA_URL": self.metadata_url,
                "TEAMS_TOKEN_URL": self.token_url}

    def env(self) -> dict:
        return {k: v for k, v in self.settings().items()}

    # -- scripting --------------------------------------------------------------------------------

    def rotate(self) -> SigningKey:
        key = SigningKey()
        self.keys.append(key)
        return key

    def fail_next(self, status: int, *, times: int = 1, retry_after: float | None = None) -> None:
        with self._fault_lock:
            for _ in range(times):
                self._faults.append((status, retry_after))

    def refuse_direct(self, member_id: str) -> None:
        self._refused.add(member_id)

    def delete(self, conversation: str, activity_id: str) -> None:
        """Someone deleted the bot's message: updating it now answers 404."""
        with self._lock:
            self.activities = [a for a in self.activities if not (a["conversation"] == conversation and a["id"] == activity_id)]

    def sent_to(self, conversation: str) -> list[dict]:
        return [a for a in self.activities if a["conversation"] == conversation]

    # -- tokens the connector puts on requests to the bot --------------------------------------------

    def sign(self, *, service_url: str | None = None, audience: str | None = None, issuer: str = ISSUER,
             expires_in: int = 3600, key: SigningKey | None = None, kid: str | None = None, **claims) -> str:
        now = int(time.time())
        key = key or self.keys[-1]
        body = {"iss": issuer, "aud": audience or self.app_id, "nbf": now - 5, "iat": now - 5, "exp": now + expires_in,
                "serviceurl": service_url or self.service_url, **claims}
        return jwt.encode(body, key.private, algorithm="RS256", headers={"kid": kid or key.kid, "typ": "JWT"})

    def authorization(self, **kwargs) -> str:
        return f"Bearer {self.sign(**kwargs)}"

    # -- handlers ---------------------------------------------------------------------------------------

    def _metadata(self, request):
        return 200, {"issuer": ISSUER, "authorization_endpoint": "https://invalid.botframework.com",
                     "jwks_uri": f"{self.root}/v1/.well-known/keys", "id_token_signing_alg_values_supported": ["RS256"],
                     "token_endpoint_auth_methods_supported": ["private_key_jwt"]}, {}

    def _jwks(self, request):
        self.key_requests += 1
        return 200, {"keys": [k.jwk() for k in self.keys]}, {}

    def _token(self, request):
        form = request.form
        if (form.get("grant_type") != "client_credentials" or form.get("client_id") != self.app_id
                or form.get("client_secret") != self.app_password):
            return 401, {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."}, {}
        if form.get("scope") != "https://api.botframework.com/.default":
            return 400, {"error": "invalid_scope", "error_description": "AADSTS70011: The provided scope is not valid."}, {}
        token = secrets.token_urlsafe(24)
        self.issued[token] = time.time() + 3600
        self.token_requests += 1
        return 200, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token}, {}

    def _authorized(self, request) -> bool:
        auth = request.headers.get("authorization", "")
        token = auth[7:] if auth.startswith("Bearer ") else ""
        return self.issued.get(token, 0) > time.time()

    def _guard(self, request):
        if not self._authorized(request):
            return 401, {"message": "Authorization has been denied for this request."}, {}
        with self._fault_lock:
            fault = self._faults.popleft() if self._faults else None
        if fault:
            status, retry_after = fault
            headers = {"Retry-After": retry_after} if retry_after is not None else {}
            return status, {"error": {"code": "ServiceError" if status != 429 else "TooManyRequests",
                                      "message": f"Fake error {status}"}}, headers
        return None

    def _create(self, request):
        refusal = self._guard(request)
        if refusal:
            return refusal
        body = request.json or {}
        members = body.get("members") or []
        tenant = (body.get("channelData") or {}).get("tenant", {}).get("id") or body.get("tenantId")
        if not members or not tenant:
            return 400, {"error": {"code": "BadArgument", "message": "Members and a tenant id are required."}}, {}
        if members[0].get("id") in self._refused:
            return 403, {"error": {"code": "Forbidden", "message": "The bot is not installed for the user."}}, {}
        conversation = f"a:{uuid.uuid4().hex}"
        self.conversations.append({"id": conversation, "params": body})
        return 201, {"id": conversation}, {}

    def _send(self, request):
        refusal = self._guard(request)
        if refusal:
            return refusal
        conversation = unquote(request.match["conv"])
        reply_to = unquote(request.match["aid"]) if "aid" in request.match.groupdict() else None  # the route replied to
        activity_id = f"1:{next(self._ids)}"
        with self._lock:
            self.activities.append({"conversation": conversation, "activity": request.json or {}, "id": activity_id,
                                    "at": time.monotonic(), "replyTo": reply_to})
        return 201, {"id": activity_id}, {}

    def _update(self, request):
        refusal = self._guard(request)
        if refusal:
            return refusal
        conversation, activity_id = unquote(request.match["conv"]), unquote(request.match["aid"])
        if not any(a["id"] == activity_id and a["conversation"] == conversation for a in self.activities):
            return 404, {"error": {"code": "NotFound", "message": "The activity was not found."}}, {}
        self.updates.append({"conversation": conversation, "id": activity_id, "activity": request.json or {}})
        return 200, {"id": activity_id}, {}

    def _upload(self, request):
        if request.headers.get("authorization"):
            return 400, {"error": {"code": "invalidRequest", "message": "Upload sessions take no Authorization header."}}, {}
        if self.upload_faults:
            status = self.upload_faults.popleft()
            return status, {"error": {"code": "serviceError", "message": f"Fake upload error {status}"}}, {}
        data = request.raw or b""
        expected = f"bytes 0-{len(data) - 1}/{len(data)}"
        if request.headers.get("content-range") != expected:
            return 400, {"error": {"code": "invalidRange", "message": f"Content-Range must be {expected!r}."}}, {}
        item = unquote(request.match["item"])
        self.uploads.append({"item": item, "data": data, "headers": dict(request.headers)})
        return 201, {"id": item, "name": item, "size": len(data), "file": {}}, {}

    def _members(self, request):
        refusal = self._guard(request)
        if refusal:
            return refusal
        return 200, self.members.get(unquote(request.match["conv"]), []), {}

    # -- activities as Teams sends them ------------------------------------------------------------------

    def account(self, number: int, name: str) -> dict:
        return {"id": f"29:1user{number:04d}", "name": name, "aadObjectId": f"00000000-0000-0000-0000-{number:012d}"}

    def conversation(self, conv_id: str = "19:meeting_abc@thread.v2", kind: str = "groupChat", name: str | None = None) -> dict:
        conv = {"id": conv_id, "conversationType": kind, "tenantId": self.tenant_id}
        if kind != "personal":
            conv["isGroup"] = True
        if name:
            conv["name"] = name
        return conv

    def activity(self, type_: str, conversation: dict, sender: dict, **fields) -> dict:
        return {
            "type": type_, "id": f"f:{uuid.uuid4().hex[:12]}", "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "localTimestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000+00:00", time.gmtime()),
            "serviceUrl": self.service_url, "channelId": "msteams", "from": sender, "conversation": conversation,
            "recipient": {"id": self.bot_id, "name": self.bot_name},
            "channelData": {"tenant": {"id": self.tenant_id}}, "locale": "en-US", **fields,
        }

    def bot_added(self, conversation: dict, by: dict) -> dict:
        """``conversationUpdate`` whose ``membersAdded`` holds the bot; ``from`` added it."""
        return self.activity("conversationUpdate", conversation, by, membersAdded=[{"id": self.bot_id}])

    def file_consent(self, conversation: dict, sender: dict, context: dict, *, accept: bool = True,
                     name: str = "minutes.docx") -> dict:
        """The ``invoke`` Teams sends when someone acts on a file consent card (accepted: with an upload session)."""
        value = {"type": "fileUpload", "action": "accept" if accept else "decline", "context": context}
        if accept:
            item = uuid.uuid4().hex
            value["uploadInfo"] = {"contentUrl": f"https://contoso.sharepoint.com/personal/user/Documents/Applications/{name}",
                                   "name": name, "uploadUrl": f"{self.root}/upload/{item}", "uniqueId": item.upper(),
                                   "fileType": name.rsplit(".", 1)[-1], "etag": "1"}
        return self.activity("invoke", conversation, sender, name="fileConsent/invoke", value=value)

    def reaction(self, conversation: dict, sender: dict, activity_id: str, kind: str = "like", removed: bool = False) -> dict:
        """``messageReaction``: someone reacted to one of the bot's messages (``replyToId``); Teams sends these only
        for the bot's own messages. ``kind`` is ``like``, ``heart``, ``laugh``, ``surprised``, ``sad`` or ``angry``."""
        field = "reactionsRemoved" if removed else "reactionsAdded"
        return self.activity("messageReaction", conversation, sender, replyToId=activity_id, **{field: [{"type": kind}]})

    def message(self, conversation: dict, sender: dict, text: str, mention_bot: bool = True, mentions=()) -> dict:
        entities, body = [], text
        if mention_bot:
            body = f"<at>{self.bot_name}</at> {text}"
            entities.append({"type": "mention", "text": f"<at>{self.bot_name}</at>",
                             "mentioned": {"id": self.bot_id, "name": self.bot_name}})
        for person in mentions:
            entities.append({"type": "mention", "text": f"<at>{person['name']}</at>", "mentioned": person})
        entities.append({"type": "clientInfo", "locale": "en-US", "country": "US", "platform": "Web"})
        return self.activity("message", conversation, sender, text=body, textFormat="plain", entities=entities)

    def message_update(self, original: dict, text: str, sender: dict | None = None, event: str = "editMessage",
                       mention_bot: bool = True) -> dict:
        """``messageUpdate``: the message ``original`` revised (``editMessage``) or brought back (``undeleteMessage``),
        under the original's ``id``; ``from`` is who changed it."""
        revised = self.message(original["conversation"], sender or original["from"], text, mention_bot=mention_bot)
        revised.update(type="messageUpdate", id=original["id"])
        revised["channelData"] = {**revised["channelData"], "eventType": event}
        return revised

    def message_delete(self, original: dict, sender: dict | None = None) -> dict:
        """``messageDelete`` (``softDeleteMessage``): the message ``original`` deleted, named by its ``id``."""
        gone = self.activity("messageDelete", original["conversation"], sender or original["from"])
        gone["id"] = original["id"]
        gone["channelData"] = {**gone["channelData"], "eventType": "softDeleteMessage"}
        return gone
