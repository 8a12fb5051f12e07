"""What a platform update means, whatever the platform: the normalized inbound events.

Each adapter's ``parse`` turns a verified webhook payload into a list of these; ``inbound``
acts on them. Pure data, no Django.
"""
from dataclasses import dataclass, field

from rooms.actions.chat import Account, ChatRef


@dataclass(frozen=True)
class BotAdded:
    chat: ChatRef
    actor: Account | None  # who added the bot


@dataclass(frozen=True)
class BotRemoved:
    chat: ChatRef
    actor: Account | None


@dataclass(frozen=True)
class MembersChanged:
    chat: ChatRef
    joined: tuple[Account, ...] = ()
    left: tuple[Account, ...] = ()
    actor: Account | None = None


@dataclass(frozen=True)
class Migrated:
    """A Telegram group became a supergroup: ``old_id`` -> ``new_id``."""

    platform: str
    old_id: str
    new_id: str


@dataclass(frozen=True)
class FileConsent:
    """Someone answered the bot's offer of a file in a personal chat (Teams' file consent card):
    ``offer_id`` is the delivery that made the offer; an accepted offer carries where to upload
    (``upload``: name, uploadUrl, contentUrl, uniqueId, fileType)."""

    chat: ChatRef
    sender: Account
    offer_id: int | None
    accepted: bool
    upload: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    chat: ChatRef
    sender: Account
    text: str
    message_id: str
    reply_to: str = ""
    # Accounts mentioned in the message (by entity), and whether our bot was one of them.
    mentioned: tuple[Account, ...] = ()
    mentions_bot: bool = False
    # The command, when the text is one addressed to us: ("facilitator", ["start", "CODE"]) or ("start", ["CODE"]).
    command: tuple[str, tuple[str, ...]] | None = None
    # Teams: the text with our @mention taken out.
    clean_text: str = ""
    # Where in the chat the message was written, for an answer to it to go there: in a Teams channel the id of the post
    # at the root of its thread, in a Telegram forum supergroup the topic (``message_thread_id``); "" elsewhere (Teams
    # group and personal chats have no threads, a Telegram group without topics or a forum's General topic).
    thread: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def is_direct(self) -> bool:
        return self.chat.kind == "direct"


@dataclass(frozen=True)
class MessageChanged:
    """Someone changed a message after it was sent: ``edited`` (``text`` is the new text), ``deleted`` or
    ``restored`` (Teams' undelete, with the text restored). ``sender`` is who changed it, as the platform says;
    ``message_id`` is the original message's."""

    chat: ChatRef
    sender: Account
    message_id: str
    change: str  # "edited", "deleted" or "restored"
    text: str = ""
