"""Who the bot is on each platform (so its own messages are never taken as input)."""
import logging

from django.utils import timezone

from channels_bridge.models import BotState
from rooms.actions.chat import Account, see_identity

log = logging.getLogger("convene.bridge")


def state(platform: str) -> BotState:
    return BotState.objects.get_or_create(platform=platform)[0]


def telegram_identity() -> tuple[str, str]:
    """(bot id, username). The id is the token's number; the username comes from getMe, once."""
    from channels_bridge.telegram import client as tg

    from django.conf import settings

    token = settings.BRIDGES["TELEGRAM_BOT_TOKEN"]
    token_id = token.split(":", 1)[0] if ":" in token else ""
    row = state("telegram")
    if row.bot_id == token_id and row.bot_username:
        return row.bot_id, row.bot_username
    try:
        me = tg.client().get_me()
    except Exception:  # the username only refines command parsing: go on without it
        log.warning("getMe failed; commands addressed with @name are accepted for any name", exc_info=True)
        return token_id, row.bot_username if row.bot_id == token_id else ""
    bot_id, username = str(me.get("id", token_id)), me.get("username") or ""
    BotState.objects.filter(pk=row.pk).update(bot_id=bot_id, bot_username=username, bot_name=me.get("first_name") or "")
    # The bot's own account, as a chat identity: the API shows its t.me links from it.
    see_identity(Account("telegram", bot_id, name=me.get("first_name") or "", username=username, is_bot=True))
    return bot_id, username


def note_teams_bot(bot_id: str, name: str) -> None:
    """The bot's id and name as Teams addresses it (each activity's ``recipient``). Its own account is kept as
    a chat identity too: the hints that say how to @mention the bot use its name from there."""
    from rooms.models import ChatIdentity

    if not bot_id or len(bot_id) > BotState._meta.get_field("bot_id").max_length:
        return
    name = (name or "")[:BotState._meta.get_field("bot_name").max_length]
    row = state("teams")
    if row.bot_id != bot_id or row.bot_name != name:
        BotState.objects.filter(pk=row.pk).update(bot_id=bot_id, bot_name=name or "")
    elif ChatIdentity.objects.filter(platform="teams", external_id=bot_id, is_bot=True, name=name).exists():
        return
    see_identity(Account("teams", bot_id, name=name or "", is_bot=True))


def teams_bot_id() -> str:
    from django.conf import settings

    return state("teams").bot_id or f"28:{settings.BRIDGES['TEAMS_APP_ID']}"


def touch_update(platform: str) -> None:
    updated = BotState.objects.filter(platform=platform).update(last_update_at=timezone.now())
    if not updated:
        BotState.objects.get_or_create(platform=platform, defaults={"last_update_at": timezone.now()})


def touch_sent(platform: str) -> None:
    BotState.objects.filter(platform=platform).update(last_sent_at=timezone.now())
