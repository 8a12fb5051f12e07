"""Telegram updates (the Bot API's JSON) -> normalized inbound events. Pure Python.

What matters, per the Bot API: ``my_chat_member`` tells the bot it was added or removed and
``from`` is who did it; ``chat_member`` reports other members (only when requested in
``allowed_updates`` and the bot is an administrator); a ``message`` may carry
``new_chat_members``, ``left_chat_member``, ``migrate_to_chat_id`` / ``migrate_from_chat_id``
(a group upgraded to a supergroup), and entity offsets counted in UTF-16 code units. An
``edited_message`` (or ``edited_channel_post``) is the whole message again, with its original
``message_id`` and an ``edit_date``: the author changed its text. Telegram tells bots nothing when a
message is deleted. In a forum supergroup (``chat.is_forum``) a message written in a topic carries
``is_topic_message`` and the topic's ``message_thread_id``: the message keeps it (``thread``) for the answer to it.
"""
from channels_bridge import commands
from channels_bridge.events import BotAdded, BotRemoved, MembersChanged, Message, MessageChanged, Migrated
from rooms.actions.chat import Account, ChatRef

PLATFORM = "telegram"
PRESENT = ("creator", "administrator", "member", "restricted")
GONE = ("left", "kicked")
KINDS = {"private": "direct", "group": "group", "supergroup": "group", "channel": "channel"}


def account(user: dict | None) -> Account | None:
    if not isinstance(user, dict) or "id" not in user:
        return None
    name = " ".join(p for p in (user.get("first_name"), user.get("last_name")) if p)
    return Account(PLATFORM, str(user["id"]), name=name, username=user.get("username") or "", is_bot=bool(user.get("is_bot")))


def chat_ref(chat: dict) -> ChatRef:
    kind = chat.get("type", "group")
    title = chat.get("title") or " ".join(p for p in (chat.get("first_name"), chat.get("last_name")) if p)
    return ChatRef(PLATFORM, str(chat["id"]), kind=KINDS.get(kind, "group"), platform_type=kind, title=title or "")


def entity_text(text: str, entity: dict) -> str:
    """The text an entity covers (its offset and length are UTF-16 code units)."""
    raw = text.encode("utf-16-le")
    start, length = int(entity.get("offset", 0)), int(entity.get("length", 0))
    return raw[2 * start: 2 * (start + length)].decode("utf-16-le", errors="replace")


#: What a message carries besides text, as a turn names it (Telegram sends the file ids, never the content).
MEDIA = (("photo", "a photo"), ("video", "a video"), ("animation", "a GIF"), ("voice", "a voice message"),
         ("video_note", "a video message"), ("audio", "an audio file"), ("document", "a file"), ("location", "a location"),
         ("venue", "a place"), ("contact", "a contact"), ("poll", "a poll"))


def content(msg: dict) -> str | None:
    """What a message says, as its turn reads: its text; for media, the caption with what was sent named on a line of
    its own ("(a photo)", "(a file: plan.pdf)"), since the file itself does not travel; a sticker is the emoji it
    stands for (a 👍 sticker confirms as a typed 👍). None when it says nothing (a service message)."""
    if isinstance(msg.get("text"), str):
        return msg["text"]
    caption = msg.get("caption") if isinstance(msg.get("caption"), str) else ""
    sticker = msg.get("sticker")
    if isinstance(sticker, dict):
        return sticker.get("emoji") if isinstance(sticker.get("emoji"), str) and sticker["emoji"].strip() else "(a sticker)"
    for key, words in MEDIA:
        if msg.get(key):
            name = msg[key].get("file_name") if isinstance(msg[key], dict) else None
            note = f"({words}: {name})" if isinstance(name, str) and name.strip() else f"({words})"
            return f"{caption}\n{note}" if caption.strip() else note
    return caption or None


def _is_bot(user: dict | None, bot_id: str, bot_username: str) -> bool:
    if not isinstance(user, dict):
        return False
    if bot_id and str(user.get("id")) == bot_id:
        return True
    return bool(bot_username and user.get("is_bot") and (user.get("username") or "").lower() == bot_username.lower())


def _member_update(update: dict, bot_id: str, bot_username: str, mine: bool) -> list:
    change = update["my_chat_member" if mine else "chat_member"]
    chat = chat_ref(change["chat"])
    actor = account(change.get("from"))
    new, old = change.get("new_chat_member") or {}, change.get("old_chat_member") or {}
    user = new.get("user") or old.get("user")
    now_in = new.get("status") in PRESENT and new.get("is_member", True) is not False
    was_in = old.get("status") in PRESENT and old.get("is_member", True) is not False
    if _is_bot(user, bot_id, bot_username):
        if now_in and not was_in:
            return [BotAdded(chat, actor)]
        if was_in and not now_in:
            return [BotRemoved(chat, actor)]
        return []
    who = account(user)
    if who is None or now_in == was_in:
        return []
    return [MembersChanged(chat, joined=(who,) if now_in else (), left=() if now_in else (who,), actor=actor)]


def _message(msg: dict, bot_id: str, bot_username: str) -> list:
    if not isinstance(msg.get("chat"), dict) or "id" not in msg["chat"]:
        return []
    chat = chat_ref(msg["chat"])
    events: list = []
    if msg.get("migrate_to_chat_id"):
        events.append(Migrated(PLATFORM, chat.external_id, str(msg["migrate_to_chat_id"])))
    if msg.get("migrate_from_chat_id"):
        events.append(Migrated(PLATFORM, str(msg["migrate_from_chat_id"]), chat.external_id))
    sender = account(msg.get("from"))
    joined = msg.get("new_chat_members") or []
    if joined:
        if any(_is_bot(u, bot_id, bot_username) for u in joined):
            events.append(BotAdded(chat, sender))
        others = tuple(a for u in joined if not _is_bot(u, bot_id, bot_username) and (a := account(u)))
        if others:
            events.append(MembersChanged(chat, joined=others, actor=sender))
    if msg.get("left_chat_member"):
        gone = msg["left_chat_member"]
        if _is_bot(gone, bot_id, bot_username):
            events.append(BotRemoved(chat, sender))
        elif account(gone):
            events.append(MembersChanged(chat, left=(account(gone),), actor=sender))
    text = content(msg)
    if sender is None or not isinstance(text, str) or not text.strip():
        return events
    entities = msg.get("entities") or msg.get("caption_entities") or []
    mentioned, mentions_bot, command = [], False, None
    for entity in entities:
        if not isinstance(entity, dict):
            continue
        kind = entity.get("type")
        if kind == "text_mention":
            who = account(entity.get("user"))
            if _is_bot(entity.get("user"), bot_id, bot_username):
                mentions_bot = True
            elif who:
                mentioned.append(who)
        elif kind == "mention":
            handle = entity_text(text, entity).lstrip("@")
            if bot_username and handle.lower() == bot_username.lower():
                mentions_bot = True
            elif handle:
                mentioned.append(Account(PLATFORM, "", username=handle))  # known by @username only
        elif kind == "bot_command" and int(entity.get("offset", -1)) == 0:
            command = commands.parse_telegram(text, bot_username)
            if command and "@" in entity_text(text, entity):
                mentions_bot = True
    reply = msg.get("reply_to_message") or {}
    events.append(Message(
        chat=chat, sender=sender, text=text, message_id=str(msg.get("message_id", "")),
        reply_to=str(reply.get("message_id", "")) if reply else "", mentioned=tuple(mentioned),
        mentions_bot=mentions_bot or _is_bot(reply.get("from"), bot_id, bot_username), command=command, clean_text=text,
        thread=topic(msg),
    ))
    return events


def topic(msg: dict) -> str:
    """The forum topic a group message was written in (its ``message_thread_id`` when ``is_topic_message``), for an
    answer to go there; "" outside a topic (a group that is no forum, a forum's General topic). A reply in a
    supergroup that is no forum carries a ``message_thread_id`` too (its reply thread), which is no topic to post in."""
    if msg.get("is_topic_message") is not True or (msg.get("chat") or {}).get("type") != "supergroup":
        return ""
    thread = msg.get("message_thread_id")
    return str(thread) if isinstance(thread, int) and not isinstance(thread, bool) and thread > 0 else ""


def _edited(msg: dict) -> list:
    """An edited message: its author and its new text (a caption for media). Only the author can edit a message
    in Telegram, so ``from`` is both."""
    if not isinstance(msg.get("chat"), dict) or "id" not in msg["chat"] or "message_id" not in msg:
        return []
    sender = account(msg.get("from"))
    text = content(msg)
    if sender is None or not isinstance(text, str):
        return []
    return [MessageChanged(chat=chat_ref(msg["chat"]), sender=sender, message_id=str(msg["message_id"]), change="edited",
                           text=text)]


def parse_update(update: dict, bot_id: str = "", bot_username: str = "") -> list:
    """The events in one update (channel posts and callback queries are not used; an edit is)."""
    if not isinstance(update, dict):
        return []
    if isinstance(update.get("my_chat_member"), dict):
        return _member_update(update, bot_id, bot_username, mine=True)
    if isinstance(update.get("chat_member"), dict):
        return _member_update(update, bot_id, bot_username, mine=False)
    if isinstance(update.get("message"), dict):
        return _message(update["message"], bot_id, bot_username)
    for key in ("edited_message", "edited_channel_post"):
        if isinstance(update.get(key), dict):
            return _edited(update[key])
    return []
