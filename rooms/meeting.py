"""MeetingSource: a meeting as an attributed-utterance stream plus a roster, wherever people are.

Everything that runs a meeting (the facilitation engine) works with this seam and never
knows whether people speak in the browser, a Telegram group or a Teams chat (or, later,
a transcribed audio call). It lives here, at the bottom, because the engine may not import
the chat bridges; the bridges fill it (they write utterances, rosters and membership
events) and drain it (they send the deliveries it queues).

- ``RoomMeetingSource(room)``: the browser room together with every chat linked to it.
  ``post`` says something to everyone (a turn in the room, relayed to each linked chat).
- ``ChatMeetingSource(chat)``: one chat, linked or not (e.g. right after the bot was added).

Both give ``utterances(after_seq)``, ``roster()``, ``post(text, mentions)``,
``direct(principal, text)``, ``edit_status(text, card)`` and ``mention(person)``.
Membership events (the bot added by someone, people joining or leaving) and commands are
announced to listeners registered with ``subscribe`` and ``handle_commands``.
"""
import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from rooms.actions.deliveries import compose, queue_direct, queue_post, queue_status
from rooms.models import Chat, ChatIdentity, ChatLink, ChatMember, Delivery, Observation, Room, RoomMember, Seat

log = logging.getLogger("convene.meeting")


@dataclass(frozen=True)
class Person:
    """Someone in a meeting. ``key`` is stable: ``user:<id>``, ``telegram:<id>``, ``teams:<id>``, ``agent:<id>``."""

    key: str
    name: str
    platform: str  # web, telegram, teams, agent
    identity_id: int | None = None
    user_id: int | None = None
    is_bot: bool = False
    #: What people may write after "@" to name them: a chat account's username (Telegram), a browser user's account
    #: name; empty when they have none.
    handle: str = ""


@dataclass(frozen=True)
class Utterance:
    seq: int
    speaker: Person
    text: str
    at: datetime | None
    platform: str
    kind: str  # human, agent, facilitator, system
    chat_id: int | None = None
    message_id: str = ""
    reply_to: str = ""
    markers: list = field(default_factory=list)


@dataclass(frozen=True)
class MeetingEvent:
    """Something happened to the meeting's membership: ``bot_added`` (``actor`` added the bot),
    ``bot_removed``, ``members_changed`` (``joined``, ``left``), ``migrated``, ``linked``, ``unlinked``."""

    kind: str
    platform: str
    chat_id: int | None
    room_id: int | None = None
    actor: Person | None = None
    joined: tuple[Person, ...] = ()
    left: tuple[Person, ...] = ()


@dataclass(frozen=True)
class Command:
    """A chat command addressed to the bot: ``/facilitator start CODE`` is ("facilitator", ("start", "CODE"))."""

    name: str
    args: tuple[str, ...]
    chat: Chat
    sender: ChatIdentity
    room_id: int | None  # the room the chat is linked to, if any
    # The message the command was written in, for an answer to go where it was asked (``answer_target``: a Teams
    # channel's thread, a Telegram reply), empty where the chat has neither.
    answers: dict = field(default_factory=dict)


#: Platforms whose groups take an answer as a reply to the message it answers, wherever it was written (a Telegram
#: reply); elsewhere only a message written in a thread (a Teams channel) is answered there.
REPLIES_IN_GROUPS = ("telegram",)


def answer_target(chat_id, platform: str, message_id: str, thread: str = "") -> dict:
    """What an answer to a person's chat message carries for it to go where the message was written (``{chatId,
    messageId, thread}``; a delivery's ``card["answers"]``, a facilitator turn's ``data.answers``): in a Teams
    channel into the message's thread, in a Telegram group as a reply to it (in its forum topic, ``thread``, if any).
    Empty where a chat has neither (a Teams group chat: an answer there is a message to the chat, as any other)."""
    if not message_id or not (thread or platform in REPLIES_IN_GROUPS):
        return {}
    return {"chatId": chat_id, "messageId": message_id, "thread": thread}


def person_of_identity(identity: ChatIdentity) -> Person:
    return Person(key=identity.key, name=identity.display_name, platform=identity.platform, identity_id=identity.pk,
                  user_id=identity.user_id, is_bot=identity.is_bot, handle=identity.username)


def person_of_user(user) -> Person:
    return Person(key=f"user:{user.pk}", name=user.get_full_name() or user.get_username(), platform="web", user_id=user.pk,
                  handle=user.get_username())


def _utterance(obs: Observation, identities: dict[int, ChatIdentity]) -> Utterance:
    source = (obs.data or {}).get("source") or {}
    platform = source.get("platform") or ("agent" if obs.author_kind != Observation.AuthorKind.HUMAN else "web")
    identity = identities.get(source.get("identityId"))
    if identity is not None:
        speaker = person_of_identity(identity)
    elif source.get("userId"):
        speaker = Person(key=f"user:{source['userId']}", name=obs.author_name, platform="web", user_id=source["userId"])
    else:
        speaker = Person(key=f"seat:{obs.seat_id}" if obs.seat_id else f"name:{obs.author_name}", name=obs.author_name,
                         platform=platform, is_bot=obs.author_kind != Observation.AuthorKind.HUMAN)
    return Utterance(seq=obs.seq, speaker=speaker, text=obs.content, at=obs.created_at, platform=platform, kind=obs.author_kind,
                     chat_id=source.get("chatId"), message_id=source.get("messageId", ""), reply_to=source.get("replyTo", ""),
                     markers=obs.markers)


def _utterances(rows) -> list[Utterance]:
    rows = list(rows)
    ids = {((o.data or {}).get("source") or {}).get("identityId") for o in rows} - {None}
    identities = {i.pk: i for i in ChatIdentity.objects.filter(pk__in=ids).select_related("user")}
    return [_utterance(o, identities) for o in rows]


def _chat_roster(chat_ids) -> list[Person]:
    members = ChatMember.objects.filter(chat_id__in=chat_ids, present=True).select_related("identity__user").order_by("id")
    return [person_of_identity(m.identity) for m in members if not m.identity.is_bot]


UTTERANCE_KINDS = (Observation.Kind.CONTRIBUTION, Observation.Kind.MESSAGE, Observation.Kind.SYNTHESIS)


class MeetingSource:
    """The seam (see the module docstring). Implementations below; an audio source is the next one."""

    platform = "room"

    def utterances(self, after_seq: int = 0, limit: int = 500) -> list[Utterance]:
        raise NotImplementedError

    def roster(self) -> list[Person]:
        raise NotImplementedError

    def post(self, text: str, mentions=()) -> list:
        raise NotImplementedError

    def direct(self, principal: str, text: str) -> list[Delivery]:
        raise NotImplementedError

    def edit_status(self, text: str, card: dict | None = None) -> list[Delivery]:
        raise NotImplementedError

    @staticmethod
    def mention(*parts):
        """``compose("Over to ", identity, ".")``: text plus mentions, for ``post``."""
        return compose(*parts)


class RoomMeetingSource(MeetingSource):
    """The browser room and every chat linked to it, as one meeting."""

    platform = "room"

    def __init__(self, room: Room):
        self.room = room

    def linked_chats(self) -> list[Chat]:
        return [link.chat for link in ChatLink.objects.filter(room=self.room, active=True).select_related("chat")]

    def utterances(self, after_seq: int = 0, limit: int = 500) -> list[Utterance]:
        rows = Observation.objects.filter(room=self.room, seq__gt=after_seq, kind__in=UTTERANCE_KINDS).order_by("seq")[:limit]
        return _utterances(rows)

    def roster(self) -> list[Person]:
        people = [person_of_user(self.room.owner)]
        people += [person_of_user(m.user) for m in RoomMember.objects.filter(room=self.room).select_related("user")]
        people += [Person(key=f"agent:{s.agent_id}", name=s.agent.name, platform="agent", is_bot=True)
                   for s in Seat.objects.filter(room=self.room, agent__isnull=False, is_active=True).select_related("agent")]
        people += _chat_roster([c.pk for c in self.linked_chats()])
        seen, unique = set(), []
        for p in people:
            if p.key not in seen:
                seen.add(p.key)
                unique.append(p)
        return unique

    def post(self, text: str, mentions=()) -> list:
        """Say ``text`` in the room (a facilitator message) and in every linked chat."""
        from rooms.actions.announcements import do_announce

        return [do_announce(self.room, text)]

    def direct(self, principal: str, text: str) -> list[Delivery]:
        return queue_direct(principal, text, room=self.room)

    def edit_status(self, text: str, card: dict | None = None) -> list[Delivery]:
        return [queue_status(chat, text, card=card, room=self.room) for chat in self.linked_chats() if chat.bot_present]


class ChatMeetingSource(MeetingSource):
    """One chat (linked to a room or not)."""

    def __init__(self, chat: Chat):
        self.chat = chat
        self.platform = chat.platform

    @property
    def room_id(self) -> int | None:
        return ChatLink.objects.filter(chat=self.chat, active=True).values_list("room_id", flat=True).first()

    def utterances(self, after_seq: int = 0, limit: int = 500) -> list[Utterance]:
        room_id = self.room_id
        if room_id is None:
            return []
        rows = (Observation.objects.filter(room_id=room_id, seq__gt=after_seq, kind__in=UTTERANCE_KINDS)
                .filter(Q(data__source__chatId=self.chat.pk)).order_by("seq")[:limit])
        return _utterances(rows)

    def roster(self) -> list[Person]:
        return _chat_roster([self.chat.pk])

    def inviter(self) -> Person | None:
        return person_of_identity(self.chat.added_by) if self.chat.added_by_id else None

    def post(self, text: str, mentions=()) -> list[Delivery]:
        room_id = self.room_id
        return [queue_post(self.chat, text, mentions=mentions, room=Room.objects.filter(pk=room_id).first() if room_id else None)]

    def direct(self, principal: str, text: str) -> list[Delivery]:
        return queue_direct(principal, text, platform=self.chat.platform)

    def edit_status(self, text: str, card: dict | None = None) -> list[Delivery]:
        return [queue_status(self.chat, text, card=card)]


# --- listeners ---------------------------------------------------------------------------------
# The bridges publish membership events and offer commands here (after their rows are committed);
# higher layers (goal facilitation) subscribe at app start. Listeners run in the bridge's worker.

_listeners: list = []
_command_handlers: list = []
_turn_listeners: list = []


def subscribe(listener) -> None:
    """``listener(event: MeetingEvent)`` is called for every membership event."""
    if listener not in _listeners:
        _listeners.append(listener)


def handle_commands(handler) -> None:
    """``handler(command: Command) -> str | None``: answer text when it handled the command, else None.
    Handlers are asked in order before the bridge's own (linking a room with ``start CODE``)."""
    if handler not in _command_handlers:
        _command_handlers.append(handler)


def on_human_turn(listener) -> None:
    """``listener(room_id, seq)`` is called after a person's turn (browser comment or chat message) committed."""
    if listener not in _turn_listeners:
        _turn_listeners.append(listener)


def publish_human_turn(room_id: int, seq: int) -> None:
    for listener in list(_turn_listeners):
        try:
            listener(room_id, seq)
        except Exception:  # the turn is recorded; a failing listener must not turn that into an error
            log.exception("turn listener %r failed on room %s seq %s", listener, room_id, seq)


def publish(event: MeetingEvent) -> None:
    for listener in list(_listeners):
        try:
            listener(event)
        except Exception:  # one failing listener must not lose the update for the others
            log.exception("meeting listener %r failed on %s", listener, event.kind)


def offer_command(command: Command) -> str | None:
    for handler in list(_command_handlers):
        answer = handler(command)
        if answer is not None:
            return answer
    return None
