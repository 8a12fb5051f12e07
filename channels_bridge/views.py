"""Webhook endpoints: verify, store once, answer fast; the work happens in the bridge's worker.

A request that fails verification (401/403) or is malformed (400: not JSON, nested deeper than
``MAX_DEPTH`` levels, a Telegram ``update_id`` that is not a whole number up to 2^63-1) stores
nothing and sends nothing. A repeated update (same Telegram ``update_id``, same Teams activity) is
acknowledged and ignored. Teams names an edited, deleted or restored message by the original
message's id: such an activity's key adds its type, ``channelData.eventType`` and a digest of its
time and text, so each change is stored once and not taken for the message itself. A key longer than its column
(a conversation id and an activity id both near their limits) keeps its beginning and ends in a digest of the whole
key (``fitted_key``): two activities never share a key for differing only past the column's length. A NUL
character (U+0000) anywhere in an update (a message, a name, a title) is dropped before it is
stored: PostgreSQL refuses it in text and JSON, and a webhook failing on it would be retried by
the platform without end. A Teams activity with an id longer than the column that would keep it (a
conversation, an account, a tenant; ``teams.parse.oversized``) is acknowledged and ignored with a log line:
nothing is stored or sent.
"""
import hashlib
import hmac
import json
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from channels_bridge import bots
from channels_bridge.models import InboundUpdate
from channels_bridge.teams import auth
from channels_bridge.teams.parse import Malformed, event_type, load, oversized
from rooms.dispatch import enqueue_on_commit

log = logging.getLogger("convene.bridge")
MAX_BODY = 1024 * 1024
#: Deeper JSON is refused (400): an update or activity nests a few levels (an Adaptive Card some more).
MAX_DEPTH = 64
#: The largest ``update_id`` taken (the database's bigint); Telegram's are far below it.
MAX_UPDATE_ID = 2**63 - 1
PROCESS_TASK = "bridge.process_update"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def _refuse(status: int, message: str) -> JsonResponse:
    return JsonResponse({"ok": False, "error": message}, status=status)


class TooDeep(ValueError):
    pass


def without_nul(value, depth: int = 0):
    """``value`` (parsed JSON) with every NUL character removed from its strings and keys; ``TooDeep`` when it
    nests more than ``MAX_DEPTH`` levels."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, (list, dict)) and depth >= MAX_DEPTH:
        raise TooDeep
    if isinstance(value, list):
        return [without_nul(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {without_nul(k): without_nul(v, depth + 1) for k, v in value.items()}
    return value


def _json_body(request):
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > MAX_BODY:
        return None, _refuse(413, "The request body is too large.")
    raw = request.read(MAX_BODY + 1)
    if len(raw) > MAX_BODY:
        return None, _refuse(413, "The request body is too large.")
    try:
        return without_nul(json.loads(raw)), None
    except (TooDeep, RecursionError):
        return None, _refuse(400, f"The body nests deeper than {MAX_DEPTH} levels.")
    except (ValueError, UnicodeDecodeError):
        return None, _refuse(400, "The body is not valid JSON.")


def _store(platform: str, key: str, payload: dict, service_url: str = "") -> bool:
    """Store the update and hand it to the worker; False when it was seen before."""
    try:
        with transaction.atomic():
            row = InboundUpdate.objects.create(platform=platform, key=key, payload=payload, service_url=service_url)
            enqueue_on_commit(PROCESS_TASK, row.pk, queue="bridge")
    except IntegrityError:
        return False
    bots.touch_update(platform)
    return True


@csrf_exempt
@require_POST
def telegram_webhook(request):
    b = settings.BRIDGES
    secret = b["TELEGRAM_WEBHOOK_SECRET"]
    presented = request.headers.get(SECRET_HEADER)
    if not b["TELEGRAM_BOT_TOKEN"] or not secret:
        return _refuse(403, "The Telegram bridge is not configured.")
    if not presented:
        return _refuse(401, f"The {SECRET_HEADER} header is required.")
    if not hmac.compare_digest(presented.encode(), secret.encode()):
        return _refuse(403, "Wrong secret token.")
    update, problem = _json_body(request)
    if problem:
        return problem
    update_id = update.get("update_id") if isinstance(update, dict) else None
    if isinstance(update_id, bool) or not isinstance(update_id, int) or not 0 <= update_id <= MAX_UPDATE_ID:
        return _refuse(400, "An update is a JSON object with a whole-number update_id.")
    if not _store("telegram", str(update_id), update):
        return JsonResponse({"ok": True, "duplicate": True})
    return JsonResponse({"ok": True})


def fitted_key(key: str) -> str:
    """``key`` as the column keeps it: as it is when it fits; a longer one (a conversation id and an activity id
    near their limits) keeps its beginning and ends in a digest of the whole key, so two keys that differ
    only past the column's length stay two keys."""
    limit = InboundUpdate._meta.get_field("key").max_length
    if len(key) <= limit:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{key[:limit - len(digest) - 1]}#{digest}"


def teams_key(activity, payload: dict) -> str:
    """The stored update's key: the conversation and activity id; for a change to a message (which carries
    the original's id) also what changed, when and to what (``fitted_key`` to the column)."""
    key = f"{activity.conversation.id}|{activity.id}"
    if activity.type in ("messageUpdate", "messageDelete"):
        when = f"{payload.get('timestamp') or ''}|{payload.get('text') or ''}"
        digest = hashlib.sha256(when.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        key = f"{activity.type}:{event_type(payload)}:{digest}|{key}"
    return fitted_key(key)


@csrf_exempt
@require_POST
def teams_messages(request):
    try:
        claims, endorsements = auth.verify_token(request.headers.get("Authorization"))
    except auth.Unauthorized as exc:
        return _refuse(401, str(exc))
    payload, problem = _json_body(request)
    if problem:
        return problem
    try:
        activity = load(payload)
    except Malformed as exc:
        return _refuse(400, str(exc))
    try:
        auth.check_activity(claims, endorsements, payload)
    except auth.Unauthorized as exc:
        return _refuse(401, str(exc))
    if not activity.id:
        return _refuse(400, "The activity has no id.")
    if too_long := oversized(activity):  # acknowledged, so the connector does not send it again; nothing kept
        log.warning("Teams activity of type %s ignored: %s", str(activity.type)[:40], too_long)
        return JsonResponse({}, status=200)
    if not _store("teams", teams_key(activity, payload), payload, service_url=activity.service_url):
        return JsonResponse({}, status=200)
    return JsonResponse({}, status=200)
