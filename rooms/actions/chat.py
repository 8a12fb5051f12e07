"""Chats, the people seen in them, and links between chats and rooms: the one write path.

The bridge calls these with what a verified platform update said; the REST API calls the
code and unlink functions for signed-in people. Each writes its rows, an audit
``Invocation`` and, when a room is concerned, a ``discussion:link`` event.
"""
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from rooms.access import can_control
from rooms.audit import new_correlation_id, record
from rooms.errors import Forbidden, StateConflict, ValidationFailed
from rooms.events import EventType, build, record_event
from rooms.models import Chat, ChatCode, ChatIdentity, ChatLink, ChatMember, FacilitationRun, Room

ROOM_CODE_HOURS = 24
IDENTITY_CODE_MINUTES = 30
# Telegram's deep-link payloads (?start=, ?startgroup=) allow A-Z, a-z, 0-9, _ and - (64 at most).
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
CODE_LENGTH = 12


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


# --- who is who ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Account:
    """A platform account as an update describes it."""

    platform: str
    external_id: str
    name: str = ""
    username: str = ""
    is_bot: bool = False
    aad_object_id: str = ""
    tenant_id: str = ""


@dataclass(frozen=True)
class ChatRef:
    """A chat as an update describes it."""

    platform: str
    external_id: str
    kind: str = Chat.Kind.GROUP
    platform_type: str = ""
    title: str = ""
    service_url: str = ""
    tenant_id: str = ""


def see_identity(account: Account, *, service_url: str = "") -> ChatIdentity:
    """The identity row of an account, created on first sight and kept current."""
    defaults = {"name": account.name[:200], "username": account.username[:200], "is_bot": account.is_bot}
    if account.aad_object_id:
        defaults["aad_object_id"] = account.aad_object_id
    if account.tenant_id:
        defaults["tenant_id"] = account.tenant_id
    if service_url:
        defaults["service_url"] = service_url
    identity, created = ChatIdentity.objects.get_or_create(platform=account.platform, external_id=account.external_id, defaults=defaults)
    if not created:
        changed = [f for f, v in defaults.items() if v and getattr(identity, f) != v]
        for f in changed:
            setattr(identity, f, defaults[f])
        identity.save(update_fields=[*changed, "last_seen_at"])
    return identity


# --- how people address the bot -------------------------------------------------------------

#: The name people @mention on Teams until the bridge has met the bot (the app's name in its manifest).
DEFAULT_BOT_NAME = "Convene"


def _own_bot_id(platform: str) -> str:
    if platform == "telegram":
        token = settings.BRIDGES.get("TELEGRAM_BOT_TOKEN") or ""
        return token.split(":", 1)[0] if ":" in token else ""
    if platform == "teams":
        app_id = settings.BRIDGES.get("TEAMS_APP_ID") or ""
        return f"28:{app_id}" if app_id else ""
    return ""


def bot_name(platform: str) -> str:
    """The bot's name as people see it on ``platform`` ("" until the bridge has met it): on Teams, the name
    they @mention. The bridge records the bot's own account as a chat identity when it meets it."""
    own = _own_bot_id(platform)
    if not own:
        return ""
    return ChatIdentity.objects.filter(platform=platform, external_id=own, is_bot=True).values_list("name", flat=True).first() or ""


def typed_command(platform: str, words: str, *, direct: bool = False, bot: str | None = None) -> str:
    """A command as a person types it to the bot on ``platform`` (``words``: "facilitator status", "start CODE").

    Telegram: a slash command (``/facilitator status``; in a direct chat ``/start CODE``). Teams: in a group
    or channel the bot hears a command only when it is @mentioned (``@Convene facilitator status``, with the
    bot's name as Teams shows it); in a personal chat the words alone (``start CODE``)."""
    if platform == "teams":
        if direct:
            return words
        return f"@{bot or bot_name('teams') or DEFAULT_BOT_NAME} {words}"
    return f"/{words}"


def see_chat(ref: ChatRef) -> Chat:
    defaults = {"kind": ref.kind, "platform_type": ref.platform_type, "title": ref.title[:300]}
    if ref.service_url:
        defaults["service_url"] = ref.service_url
    if ref.tenant_id:
        defaults["tenant_id"] = ref.tenant_id
    chat, created = Chat.objects.get_or_create(platform=ref.platform, external_id=ref.external_id, defaults=defaults)
    if not created:
        changed = [f for f, v in defaults.items() if v and getattr(chat, f) != v]
        for f in changed:
            setattr(chat, f, defaults[f])
        if changed:
            chat.save(update_fields=[*changed, "updated_at"])
    return chat


def touch_member(chat: Chat, identity: ChatIdentity, via: str, present: bool = True) -> ChatMember:
    member, created = ChatMember.objects.get_or_create(chat=chat, identity=identity, defaults={"via": via, "present": present})
    if not created and member.present != present:
        member.present = present
        member.save(update_fields=["present", "last_seen_at"])
    elif not created:
        ChatMember.objects.filter(pk=member.pk).update(last_seen_at=timezone.now())
    return member


# --- the bot in a chat ------------------------------------------------------------------------


def do_record_bot_added(ref: ChatRef, actor: Account | None, correlation_id: str | None = None) -> Chat:
    """The bot was added to a chat; ``actor`` (who added it) joins the roster as the inviter."""
    with transaction.atomic():
        chat = see_chat(ref)
        inviter = see_identity(actor, service_url=ref.service_url) if actor else None
        first = not chat.bot_present or chat.added_at is None
        chat.bot_present = True
        if first or (inviter and chat.added_by_id is None):
            chat.added_at = timezone.now()
            chat.added_by = inviter
        chat.save()
        if inviter:
            touch_member(chat, inviter, ChatMember.Via.INVITER)
        record("bridge.bot_added", correlation_id=correlation_id,
              data={"chat": chat.pk, "platform": chat.platform, "by": inviter.key if inviter else None})
    return chat


def do_record_bot_removed(ref: ChatRef, actor: Account | None, correlation_id: str | None = None) -> Chat:
    """The bot left or was removed: nothing more is sent there (its links stay, for the record)."""
    with transaction.atomic():
        chat = see_chat(ref)
        chat.bot_present = False
        chat.save(update_fields=["bot_present", "updated_at"])
        who = see_identity(actor) if actor else None
        record("bridge.bot_removed", correlation_id=correlation_id, data={"chat": chat.pk, "by": who.key if who else None})
    return chat


def do_record_members(ref: ChatRef, *, joined=(), left=(), via: str = ChatMember.Via.JOIN, actor: Account | None = None,
                      correlation_id: str | None = None) -> Chat:
    """People joined or left a chat (or were listed by the platform's members API)."""
    with transaction.atomic():
        chat = see_chat(ref)
        for account in joined:
            touch_member(chat, see_identity(account), via, present=True)
        for account in left:
            touch_member(chat, see_identity(account), via, present=False)
        record("bridge.members_changed", correlation_id=correlation_id,
              data={"chat": chat.pk, "joined": [a.external_id for a in joined], "left": [a.external_id for a in left],
                     "by": actor.external_id if actor else None, "via": via})
    return chat


def do_migrate_chat(platform: str, old_id: str, new_id: str, correlation_id: str | None = None) -> Chat | None:
    """A Telegram group became a supergroup with a new id: the chat (and its link) follows.

    Either side of the migration may be reported first, or both: the result is one chat row
    under the new id carrying the links and roster.
    """
    with transaction.atomic():
        old = Chat.objects.select_for_update().filter(platform=platform, external_id=old_id).first()
        new = Chat.objects.select_for_update().filter(platform=platform, external_id=new_id).first()
        if old is None:
            return new
        if new is None:
            old.previous_external_id = old_id
            old.external_id = new_id
            if old.platform_type == "group":
                old.platform_type = "supergroup"
            old.save()
            chat = old
        else:
            # The new id is known already (a message from the supergroup came first): move the links and roster.
            if not ChatLink.objects.filter(chat=new, active=True).exists():
                ChatLink.objects.filter(chat=old, active=True).update(chat=new)
            for member in ChatMember.objects.filter(chat=old):
                ChatMember.objects.get_or_create(chat=new, identity_id=member.identity_id,
                                                 defaults={"via": member.via, "present": member.present})
            new.previous_external_id = old_id
            new.added_by_id = new.added_by_id or old.added_by_id
            new.added_at = new.added_at or old.added_at
            new.save()
            old.delete()
            chat = new
        record("bridge.chat_migrated", correlation_id=correlation_id, data={"chat": chat.pk, "from": old_id, "to": new_id})
    return chat


# --- codes and links --------------------------------------------------------------------------


def do_create_room_code(room: Room, user, correlation_id: str | None = None) -> ChatCode:
    """A one-time code that links one chat to this room (``/facilitator start CODE``)."""
    if room.is_terminal:
        raise StateConflict(f"This discussion is {room.status}: it cannot be linked to a chat.", {"status": room.status})
    with transaction.atomic():
        code = ChatCode.objects.create(code=_new_code(), purpose=ChatCode.Purpose.ROOM, room=room, user=user,
                                       expires_at=timezone.now() + timedelta(hours=ROOM_CODE_HOURS))
        record("bridge.link_code", room=room, user=user, correlation_id=correlation_id, data={"codeId": code.pk, "expiresAt": code.expires_at.isoformat()})
    return code


def do_create_identity_code(user, correlation_id: str | None = None) -> ChatCode:
    """A one-time code a person sends to the bot in a direct chat (``/start CODE``) to link their account."""
    with transaction.atomic():
        code = ChatCode.objects.create(code=_new_code(), purpose=ChatCode.Purpose.IDENTITY, user=user,
                                       expires_at=timezone.now() + timedelta(minutes=IDENTITY_CODE_MINUTES))
        record("bridge.identity_code", user=user, correlation_id=correlation_id, data={"codeId": code.pk})
    return code


def _usable_code(code: str, purpose: str) -> ChatCode | None:
    if not isinstance(code, str) or not code or len(code) > 64:
        return None
    row = ChatCode.objects.select_for_update(of=("self",)).filter(code=code, purpose=purpose).select_related("room", "user").first()
    if row is None or row.used_at is not None or row.expires_at <= timezone.now():
        return None
    return row


def _run_room_for(code) -> int | None:
    """The room of the live facilitation run whose join code this is."""
    if not isinstance(code, str) or not code or len(code) > 64:
        return None
    return (FacilitationRun.objects.filter(join_code=code, state__in=FacilitationRun.LIVE)
            .values_list("room_id", flat=True).first())


class CodeRefused(ValidationFailed):
    code = "code_refused"


class LinkHeld(Forbidden):
    """The chat is linked to a room that is still going on, and whoever asked may not end that link
    (``may_end_link``). ``room`` is the room the chat stays linked to."""

    code = "link_held"

    def __init__(self, room: Room):
        who = ("whoever linked the chat, whoever started the run, or the run's owner (with a linked account)"
               if room.kind == Room.Kind.FACILITATION else "whoever linked the chat, or that room's owner (with a linked account)")
        super().__init__(f"This chat is linked to \u201c{room.name}\u201d, which is still going on: only {who}, can link it "
                         "to another room.", {"roomId": room.pk})
        self.room = room


class AlreadyLinked(StateConflict):
    """The code is for the room the chat is linked to already: nothing changes (the code is not used up).
    ``room`` is that room."""

    code = "already_linked"

    def __init__(self, room: Room):
        super().__init__(f"This chat is linked to \u201c{room.name}\u201d already.", {"roomId": room.pk})
        self.room = room


def started_the_run(room_id: int, identity: ChatIdentity | None) -> bool:
    """Is ``identity`` the initiator of the facilitation run in this room (who may stop the run)?"""
    if identity is None:
        return False
    return FacilitationRun.objects.filter(room_id=room_id, initiator_key=identity.key).exists()


def may_end_link(link: ChatLink, identity: ChatIdentity | None) -> bool:
    """Who may end a chat's link (``facilitator stop``) and, while its room is live, replace it with another room's:
    whoever linked the chat, the initiator of the room's facilitation run (who may stop the run), or the room's owner
    or staff speaking from a chat account linked to their user."""
    if identity is None:
        return False
    if link.linked_by_id is not None and link.linked_by_id == identity.pk:
        return True
    if started_the_run(link.room_id, identity):
        return True
    return bool(identity.user_id and can_control(identity.user, link.room))


def do_refuse_stop(chat: Chat, link: ChatLink, identity: ChatIdentity | None, message: str, *,
                   refused: str = "may not end the link", correlation_id: str | None = None) -> None:
    """``facilitator stop`` from someone who may not end the chat's link (``may_end_link``) or its facilitation run:
    nothing changes but the refusal's audit row (``bridge.stop_refused``, on the room the chat is linked to), naming
    who asked; ``message`` is what they were told, ``refused`` why."""
    with transaction.atomic():
        record("bridge.stop_refused", room=link.room_id, user=identity.user if identity is not None and identity.user_id else None,
               correlation_id=correlation_id, success=False, error=message,
               data={"chat": chat.pk, "platform": chat.platform, "by": identity.key if identity else None, "link": link.pk,
                     "refused": refused})


def do_link_chat(chat: Chat, code: str, identity: ChatIdentity | None, correlation_id: str | None = None,
                 thread: str = "") -> ChatLink:
    """Link a chat to the room a code was made for. The code is used up; a chat has one live link. ``thread``: the
    Telegram forum topic the code was sent in (kept on the link).

    The code of the room the chat is linked to already changes nothing: ``AlreadyLinked``, and the code
    is not used up. A live facilitation run's join code also links, once: it admits one group (in any
    other chat it is refused and nothing is written). More groups are linked with codes from
    ``do_create_room_code``.

    A chat linked to a room that is still going on moves to another room only when someone who may end
    its link asks (``may_end_link``); anyone else gets ``LinkHeld``: the link stays, the code stays usable,
    and the refusal leaves its audit row (``bridge.link_refused``, on the room the chat stays with). Once
    that room has ended, any new code links the chat in its place. The room left behind learns it: its
    link ends with the audit row ``bridge.unlink_chat`` (reason ``relinked``, and who asked) and a
    ``discussion:link`` event."""
    correlation = correlation_id or new_correlation_id()
    with transaction.atomic():
        row = _usable_code(code, ChatCode.Purpose.ROOM)
        run_room_id = None if row is not None else _run_room_for(code)
        if row is None and run_room_id is None:
            raise CodeRefused("That code is unknown, used or expired.")
        room = Room.objects.select_for_update().get(pk=row.room_id if row is not None else run_room_id)
        if room.is_terminal:
            raise CodeRefused(f"That discussion is {room.status}.")
        if row is None and ChatLink.objects.filter(room=room, code__isnull=True).exclude(chat=chat).exists():
            # The run's join code linked a group already (links made with the join code carry no code row).
            raise CodeRefused("That code has been used already: a run's join code links one group.")
        previous = ChatLink.objects.select_for_update(of=("self",)).filter(chat=chat, active=True).select_related("room").first()
        if previous is not None and previous.room_id == room.pk:
            raise AlreadyLinked(room)
        if previous is None or previous.room.is_terminal or may_end_link(previous, identity):
            return _link(chat, room, row, previous, identity, correlation, thread)
        held = LinkHeld(previous.room)
        record("bridge.link_refused", room=previous.room, user=identity.user if identity is not None and identity.user_id else None,
               correlation_id=correlation, success=False, error=held.message,
               data={"chat": chat.pk, "platform": chat.platform, "by": identity.key if identity else None, "link": previous.pk,
                     "to": room.pk, "via": "room code" if row is not None else "run join code", "refused": "link held"})
    raise held  # after the block: the refusal's audit row stays, nothing else was written


def _link(chat: Chat, room: Room, row: ChatCode | None, previous: ChatLink | None, identity: ChatIdentity | None,
          correlation: str, thread: str = "") -> ChatLink:
    """``do_link_chat``'s write, under its locks: the code used up, the previous link ended, the new link."""
    if row is not None:
        row.used_at, row.used_by = timezone.now(), identity
        row.save(update_fields=["used_at", "used_by"])
    if previous is not None:
        _unlink(previous, correlation, reason="relinked", user=identity.user if identity is not None and identity.user_id else None,
                by=identity.key if identity is not None else None)
    try:
        with transaction.atomic():
            link = ChatLink.objects.create(chat=chat, room=room, linked_by=identity, code=row, thread=thread[:32])
    except IntegrityError:
        raise StateConflict("This chat was linked at the same moment; try again.") from None
    if not room.chat_linked:
        room.chat_linked = True
        room.save(update_fields=["chat_linked", "updated_at"])
    if chat.status_message_id:  # the status of the room left stays as it was; this room's is posted afresh, below
        do_forget_status_message(chat, chat.status_message_id, reason="the chat was linked to a room anew")
    record("bridge.link_chat", room=room, user=row.user if row is not None else room.owner, correlation_id=correlation,
          data={"chat": chat.pk, "platform": chat.platform, "by": identity.key if identity else None,
                "via": "room code" if row is not None else "run join code"})
    record_event(room, EventType.LINK, build.link(link, "linked"))
    return link


def _unlink(link: ChatLink, correlation: str, reason: str, user=None, by: str | None = None) -> None:
    link.active = False
    link.unlinked_at = timezone.now()
    link.save(update_fields=["active", "unlinked_at"])
    room = Room.objects.select_for_update().get(pk=link.room_id)
    data = {"link": link.pk, "reason": reason}
    if by:
        data["by"] = by
    record("bridge.unlink_chat", room=room, user=user, correlation_id=correlation, data=data)
    record_event(room, EventType.LINK, build.link(link, "unlinked"))


def do_unlink_chat(link: ChatLink, *, user=None, reason: str = "unlinked", correlation_id: str | None = None) -> ChatLink:
    with transaction.atomic():
        link = ChatLink.objects.select_for_update(of=("self",)).select_related("chat", "linked_by").get(pk=link.pk)
        if link.active:
            _unlink(link, correlation_id or new_correlation_id(), reason, user=user)
    return link


def do_link_identity(identity: ChatIdentity, code: str, correlation_id: str | None = None) -> ChatIdentity:
    """``/start CODE`` in a direct chat: the account now belongs to the user who asked for the code."""
    with transaction.atomic():
        row = _usable_code(code, ChatCode.Purpose.IDENTITY)
        if row is None:
            raise CodeRefused("That code is unknown, used or expired.")
        identity = ChatIdentity.objects.select_for_update().get(pk=identity.pk)
        identity.user = row.user
        identity.started_bot = True
        identity.save(update_fields=["user", "started_bot", "last_seen_at"])
        row.used_at, row.used_by = timezone.now(), identity
        row.save(update_fields=["used_at", "used_by"])
        record("bridge.link_identity", user=row.user, correlation_id=correlation_id, data={"identity": identity.key})
    return identity


def do_note_direct_chat(identity: ChatIdentity, conversation_id: str = "", correlation_id: str | None = None) -> ChatIdentity:
    """The person wrote to the bot directly: from now on the bot may write to them."""
    fields = []
    if not identity.started_bot:
        identity.started_bot = True
        fields.append("started_bot")
    if conversation_id and identity.direct_conversation_id != conversation_id:
        identity.direct_conversation_id = conversation_id
        fields.append("direct_conversation_id")
    if fields:
        with transaction.atomic():
            identity.save(update_fields=[*fields, "last_seen_at"])
            record("bridge.direct_chat", correlation_id=correlation_id, data={"identity": identity.key, "fields": fields})
    return identity


def do_set_status_message(chat: Chat, message_id: str) -> None:
    """Remember the bot's status message in a chat (edited in place from now on)."""
    with transaction.atomic():
        Chat.objects.filter(pk=chat.pk).update(status_message_id=str(message_id))
        record("bridge.status_message", correlation_id=None, data={"chat": chat.pk, "message": str(message_id)})


def do_forget_status_message(chat: Chat, message_id: str, reason: str = "gone") -> bool:
    """The bot's status message in a chat is gone (deleted, or left behind when a group became a
    supergroup): forget it, so the next status is posted afresh. Only the id that failed is forgotten
    (a newer one set meanwhile stays). True when it was forgotten."""
    with transaction.atomic():
        forgotten = Chat.objects.filter(pk=chat.pk, status_message_id=str(message_id)).update(status_message_id="")
        if forgotten:
            record("bridge.status_message_forgotten", correlation_id=None,
                   data={"chat": chat.pk, "message": str(message_id), "reason": reason[:200]})
    return bool(forgotten)


def live_link(chat: Chat) -> ChatLink | None:
    return ChatLink.objects.filter(chat=chat, active=True).select_related("room").first()


def do_unlink_identity(identity: ChatIdentity, user, correlation_id: str | None = None) -> ChatIdentity:
    """The person takes a chat account back from their Convene user."""
    with transaction.atomic():
        identity = ChatIdentity.objects.select_for_update().get(pk=identity.pk)
        identity.user = None
        identity.save(update_fields=["user", "last_seen_at"])
        record("bridge.unlink_identity", user=user, correlation_id=correlation_id, data={"identity": identity.key})
    return identity
