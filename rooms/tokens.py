"""API keys: how they are made, stored and checked.

A key is ``cvn_`` plus 43 random URL-safe characters; the database keeps only its SHA-256
(a key has 256 bits of randomness, so a fast hash is enough) and its first characters, so
a leaked database grants nothing. Every key expires. Changes go through
``rooms.actions.tokens``; this module only reads.
"""
import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

KEY_PREFIX = "cvn_"
PREFIX_LENGTH = 8  # "cvn_" and four characters: enough to tell keys apart in a list
MAX_KEY_LENGTH = 200
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used_at is written at most once a minute


def default_days() -> int:
    return int(settings.CONVENE.get("TOKEN_DAYS", 90))


def max_days() -> int:
    return int(settings.CONVENE.get("TOKEN_MAX_DAYS", 365))


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def live_tokens():
    from rooms.models import ApiToken

    return ApiToken.objects.filter(expires_at__gt=timezone.now(), user__is_active=True)


def token_for_key(key):
    """The live token a key stands for (user loaded), or None: unknown, expired, or its user inactive."""
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
        return None
    token = live_tokens().select_related("user").filter(digest=digest(key)).first()
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        type(token).objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def user_for_key(key):
    token = token_for_key(key)
    return token.user if token is not None else None


def is_live(token_id: int, user_id: int) -> bool:
    """Whether a token a connection authenticated with still stands (not revoked, expired or deactivated)."""
    return live_tokens().filter(pk=token_id, user_id=user_id).exists()
