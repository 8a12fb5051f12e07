"""Telegram updates as the Bot API delivers them to a webhook (objects per the Bot API docs)."""
import itertools
import time

_update_ids = itertools.count(10_000)
_message_ids = itertools.count(1)

BOT = {"id": 123456, "is_bot": True, "first_name": "Convene", "username": "ConveneTestBot"}


def user(uid: int, first_name: str, username: str | None = None, last_name: str | None = None, is_bot: bool = False) -> dict:
    u = {"id": uid, "is_bot": is_bot, "first_name": first_name, "language_code": "en"}
    if username:
        u["username"] = username
    if last_name:
        u["last_name"] = last_name
    return u


def group(chat_id: int, title: str = "Team chat", kind: str = "group") -> dict:
    chat = {"id": chat_id, "title": title, "type": kind}
    if kind == "group":
        chat["all_members_are_administrators"] = True
    return chat


def forum(chat_id: int, title: str = "Team forum") -> dict:
    """A supergroup with topics enabled (``is_forum``)."""
    return {"id": chat_id, "title": title, "type": "supergroup", "is_forum": True}


def in_topic(thread_id: int) -> dict:
    """What a message written in a forum topic carries besides its text (pass as ``**in_topic(7)``)."""
    return {"message_thread_id": thread_id, "is_topic_message": True}


def private(u: dict) -> dict:
    return {"id": u["id"], "first_name": u["first_name"], "type": "private", **({"username": u["username"]} if "username" in u else {})}


def update(**body) -> dict:
    return {"update_id": next(_update_ids), **body}


def bot_added(chat: dict, by: dict, bot: dict = BOT, status: str = "member") -> dict:
    """``my_chat_member``: the bot's status in ``chat`` went from left to ``status``; ``from`` added it."""
    return update(my_chat_member={
        "chat": chat, "from": by, "date": int(time.time()),
        "old_chat_member": {"user": bot, "status": "left"},
        "new_chat_member": {"user": bot, "status": status, **({"can_be_edited": False} if status == "administrator" else {})},
    })


def bot_removed(chat: dict, by: dict, bot: dict = BOT) -> dict:
    return update(my_chat_member={
        "chat": chat, "from": by, "date": int(time.time()),
        "old_chat_member": {"user": bot, "status": "member"},
        "new_chat_member": {"user": bot, "status": "left"},
    })


def member_joined(chat: dict, who: dict, by: dict | None = None) -> dict:
    return update(chat_member={
        "chat": chat, "from": by or who, "date": int(time.time()),
        "old_chat_member": {"user": who, "status": "left"},
        "new_chat_member": {"user": who, "status": "member"},
    })


def message(chat: dict, sender: dict, text: str, entities: list | None = None, reply_to: dict | None = None, **extra) -> dict:
    msg = {"message_id": next(_message_ids), "from": sender, "chat": chat, "date": int(time.time()), "text": text, **extra}
    if entities:
        msg["entities"] = entities
    if reply_to:
        msg["reply_to_message"] = reply_to
    return update(message=msg)


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def command(chat: dict, sender: dict, text: str, **extra) -> dict:
    """A message starting with a bot command (entity ``bot_command`` at offset 0)."""
    name = text.split()[0]
    return message(chat, sender, text, entities=[{"type": "bot_command", "offset": 0, "length": utf16(name)}], **extra)


def new_members(chat: dict, by: dict, members: list[dict]) -> dict:
    return update(message={"message_id": next(_message_ids), "from": by, "chat": chat, "date": int(time.time()),
                           "new_chat_members": members, "new_chat_member": members[0], "new_chat_participant": members[0]})


def migrated_to(old_chat: dict, by: dict, new_id: int) -> dict:
    """In the old group: the service message saying it became the supergroup ``new_id``."""
    return update(message={"message_id": next(_message_ids), "from": by, "chat": old_chat, "date": int(time.time()),
                           "migrate_to_chat_id": new_id})


def migrated_from(new_chat: dict, old_id: int) -> dict:
    """In the new supergroup: the service message naming the group it came from."""
    return update(message={"message_id": next(_message_ids), "from": {"id": 1087968824, "is_bot": True, "first_name": "Group",
                                                                       "username": "GroupAnonymousBot"},
                           "sender_chat": new_chat, "chat": new_chat, "date": int(time.time()), "migrate_from_chat_id": old_id})


def edited(original: dict, text: str, sender: dict | None = None) -> dict:
    """``edited_message``: the message of ``original`` (a ``message`` update) again, with new text and an
    ``edit_date``, under its own ``message_id`` (a new ``update_id``)."""
    msg = {**original["message"], "text": text, "edit_date": int(time.time())}
    msg.pop("entities", None)
    if sender is not None:
        msg["from"] = sender
    return update(edited_message=msg)
