"""Creating and revoking API tokens, and switching accounts off.

Each change writes an ``Invocation`` (component ``account.*``, no room) and, when access is
withdrawn, tells every web process after commit to disconnect the sockets concerned.
"""
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from rooms import realtime, tokens
from rooms.audit import audit
from rooms.errors import ValidationFailed
from rooms.models import ApiToken

NAME_MAX = 100


def _audit(user, component: str, data: dict, actor=None) -> None:
    audit(None, actor or user, component, after={"userId": user.pk, **data})


def _days(value) -> int:
    if value is None:
        return tokens.default_days()
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationFailed("expiresInDays must be a whole number.",
                               {"expiresInDays": [f"Must be a whole number of days from 1 to {tokens.max_days()}."]})
    if not 1 <= value <= tokens.max_days():
        raise ValidationFailed("expiresInDays is out of range.",
                               {"expiresInDays": [f"A whole number of days from 1 to {tokens.max_days()}."]})
    return value


def do_create_token(user, *, name="", days=None, actor=None) -> tuple[ApiToken, str]:
    """A new token for ``user``; returns the row and the key (the only time the key exists in clear)."""
    if name is None:
        name = ""
    if not isinstance(name, str):
        raise ValidationFailed("name must be text.", {"name": ["Must be text."]})
    if len(name) > NAME_MAX:
        raise ValidationFailed("The token name is not valid.", {"name": [f"Text of at most {NAME_MAX} characters."]})
    lifetime = _days(days)
    key = tokens.new_key()
    with transaction.atomic():
        token = ApiToken.objects.create(user=user, name=name.strip(), prefix=key[:tokens.PREFIX_LENGTH],
                                        digest=tokens.digest(key), expires_at=timezone.now() + timedelta(days=lifetime))
        _audit(user, "account.token_create", {"tokenId": token.pk, "name": token.name, "days": lifetime}, actor)
    return token, key


def do_revoke_token(token: ApiToken, *, actor=None) -> None:
    """Delete the token; sockets that authenticated with it are disconnected at once."""
    user_id, token_id = token.user_id, token.pk
    with transaction.atomic():
        deleted, _ = ApiToken.objects.filter(pk=token_id).delete()
        if deleted:
            _audit(token.user, "account.token_revoke", {"tokenId": token_id}, actor)
            transaction.on_commit(lambda: realtime.disconnect(user_id, token_id=token_id))


def end_session_sockets(sender=None, request=None, user=None, **kwargs) -> None:
    """Someone signed out (``user_logged_out``, sent before the session is flushed): the sockets that
    authenticated with that session are disconnected at once, in every web process."""
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if user is None or not user.pk or not session_key:
        return
    user_id = user.pk
    transaction.on_commit(lambda: realtime.disconnect(user_id, session_key=session_key))


def do_set_user_active(user, active: bool, *, actor=None) -> None:
    """Switch an account on or off; switching it off disconnects every socket of that user."""
    with transaction.atomic():
        type(user).objects.filter(pk=user.pk).update(is_active=active)
        user.is_active = active
        _audit(user, "account.activate" if active else "account.deactivate", {}, actor)
        if not active:
            user_id = user.pk
            transaction.on_commit(lambda: realtime.disconnect(user_id))
