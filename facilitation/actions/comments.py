"""People speaking in a room: a browser comment, or a message in a linked chat.

Both become a turn with ``speaker.kind = "human"``, markers parsed (a ``VOTE: READY`` counts
like an agent's, and may reach consensus: the phase moves on as after any turn). The turn is committed under the room's row lock with the room's next seq,
so it never interleaves wrongly with a model step committing at the same time (that step
takes the same lock and the seq after it). Each turn is relayed to the linked chats, except
the one it came from, and offered to ``rooms.meeting`` turn listeners once committed.

A chat message edited by its author changes its turn (``do_edit_chat_message``): the turn reads the new
text, marked ``data.edited``; the text before stays in the audit row (``human.chat_edit``); a
``discussion:turn_updated`` event shows it; the chats the turn was relayed to hear it again, once, as
"Name (edited): ..."; and the turn is offered to the turn listeners again (a facilitation run reads the
new statement). Only the author's own edits count; an edit of a message the room never recorded changes
nothing. A message its author deleted (Teams) leaves its turn as "(deleted by its author)" without markers
(``do_delete_chat_message``); Teams' undelete brings the text back (``do_restore_chat_message``).
"""
from django.db import transaction
from django.utils import timezone

from facilitation.actions import phases
from facilitation.deliberation.markers import parse_markers
from rooms import limits, meeting
from rooms.access import can_participate, can_view
from rooms.actions.deliveries import queue_post, queue_relay, withdraw_unsent
from rooms.audit import new_correlation_id, record
from rooms.errors import Forbidden, NotFound, StateConflict, ValidationFailed
from rooms.events import EventType, build, next_seq, record_event
from rooms.models import Chat, ChatIdentity, ChatLink, Delivery, Observation, Room

S = Room.Status
# Comments: a person joins a running or paused discussion.
COMMENT_STATES = (S.ACTIVE, S.PAUSED)
# Chat messages: a linked chat talks before a room starts too; nothing is recorded once it ended.
CHAT_STATES = (S.DRAFT, S.ACTIVE, S.PAUSED)
#: What a turn whose chat message its author deleted reads as.
DELETED_TEXT = "(deleted by its author)"
#: How a chat message longer than ``limits.COMMENT`` ends once it is cut (Teams takes about 28 KB in a message).
CUT_MARK = " [\u2026]"


def _content(content) -> str:
    if not isinstance(content, str) or not content.strip():
        raise ValidationFailed("A comment needs some text.", {"content": ["Write something."]})
    if len(content) > limits.COMMENT:
        raise ValidationFailed("The comment is too long.", {"content": [f"At most {limits.COMMENT} characters."]})
    if "\x00" in content:
        raise ValidationFailed("The comment contains a NUL character.", {"content": ["Remove control characters."]})
    return content.strip()


def _record_human_turn(room: Room, *, author: str, content: str, data: dict, origin_chat_id: int | None,
                       correlation: str, component: str, user=None) -> Observation:
    """Write the turn, its event and its relays. The caller holds the room's row lock."""
    seq = next_seq(room)
    obs = Observation.objects.create(
        room=room, seq=seq, round=room.round, author_name=author[:200], author_kind=Observation.AuthorKind.HUMAN,
        kind=Observation.Kind.CONTRIBUTION, content=content, markers=parse_markers(content), data=data,
    )
    record_event(room, EventType.TURN, build.turn(obs, role="participant"), seq=seq)
    if room.kind == Room.Kind.DISCUSSION and room.status in COMMENT_STATES:
        # A person's vote counts like a seat's: it may reach consensus and move the phase on. In the last
        # phase the facilitator's next step concludes (``steps.commit_decision``/``commit_turn`` check it).
        phases.after_turn(room)
    record(component, room=room, user=user, correlation_id=correlation, data={"seq": seq, **data.get("source", {})},
          output=content[:500])
    queue_relay(room, obs, origin_chat_id=origin_chat_id, correlation_id=correlation)
    room_id = room.pk
    transaction.on_commit(lambda: meeting.publish_human_turn(room_id, seq))  # e.g. a facilitation run reads it
    return obs


def require_commenter(user, room: Room) -> None:
    """403 for someone who may view ``room`` but not speak in it (a viewer), whatever they sent."""
    if not can_participate(user, room):
        raise Forbidden("Viewers cannot comment; ask the owner for participant access.")


def do_post_comment(room_id: int, user, content, platform: str = "web") -> Observation:
    """A person (owner, staff or a member with participant access) speaks in a running or paused discussion.

    ``platform`` says where it was written (``web`` for the API and the room page, ``cli`` for the command line).
    Who may not speak there is refused before what they wrote is looked at."""
    correlation = new_correlation_id()
    with transaction.atomic():
        room = Room.objects.select_for_update().filter(pk=room_id).first()
        if room is None or not can_view(user, room):
            raise NotFound("No such discussion.")
        require_commenter(user, room)
        text = _content(content)
        if room.status not in COMMENT_STATES:
            raise StateConflict(f"Cannot comment on a discussion that is {room.status}.", {"status": room.status},
                                code="invalid_transition")
        name = user.get_full_name() or user.get_username()
        data = {"source": {"platform": platform, "userId": user.pk}}
        return _record_human_turn(room, author=name, content=text, data=data, origin_chat_id=None,
                                  correlation=correlation, component="human.comment", user=user)


def _with_cut(data: dict, text: str, full_length: int) -> dict:
    """A chat turn's ``data`` saying how long its message was when it was cut (``_chat_text``), and nothing of an
    earlier cut otherwise."""
    data.pop("cut", None)
    if full_length > len(text):
        data["cut"] = {"length": full_length}
    return data


def _chat_text(text) -> tuple[str, int]:
    """A chat message's text as a turn holds it, and the message's length: NUL dropped (PostgreSQL refuses it),
    cut visibly to ``limits.COMMENT``."""
    text = (text or "").replace("\x00", "").strip()
    full_length = len(text)
    if full_length > limits.COMMENT:  # cut, visibly: readers know text is missing
        text = text[: limits.COMMENT - len(CUT_MARK)].rstrip() + CUT_MARK
    return text, full_length


def do_record_chat_message(chat: Chat, identity: ChatIdentity, text: str, *, message_id: str = "",
                           reply_to: str = "", addressed: bool = False, thread: str = "",
                           correlation_id: str | None = None) -> Observation | None:
    """A message in a linked chat becomes a turn in its room (speaker: the linked user, else the
    chat account). Unlinked chats and ended rooms record nothing; returns the turn or None.
    ``addressed``: the message mentions the bot or replies to one of its messages (``data.source.addressed``).
    ``thread``: in a Teams channel, the root post of the thread it was written in; in a Telegram forum, its topic
    (``data.source.thread``), where an answer to it goes.
    A message longer than ``limits.COMMENT`` is cut to it, ending with ``CUT_MARK`` (" […]"), and the turn's
    ``data.cut.length`` keeps how long it was."""
    text, full_length = _chat_text(text)
    if not text:
        return None
    correlation = correlation_id or new_correlation_id()
    with transaction.atomic():
        link = ChatLink.objects.filter(chat=chat, active=True).first()
        if link is None:
            return None
        room = Room.objects.select_for_update().get(pk=link.room_id)
        if room.status not in CHAT_STATES:
            return None
        # Message ids are per chat (a migrated Telegram group starts again): the platform's chat id is in the key.
        if message_id and Observation.objects.filter(room=room, data__source__externalChatId=chat.external_id,
                                                     data__source__messageId=str(message_id)).exists():
            return None  # this message is in the room already (an update processed twice)
        source = {"platform": chat.platform, "chatId": chat.pk, "externalChatId": chat.external_id,
                  "messageId": str(message_id), "identityId": identity.pk}
        if reply_to:
            source["replyTo"] = str(reply_to)
        if thread:
            source["thread"] = str(thread)
        if addressed:
            source["addressed"] = True
        if identity.user_id:
            source["userId"] = identity.user_id
        data = _with_cut({"source": source}, text, full_length)
        return _record_human_turn(room, author=identity.display_name, content=text, data=data,
                                  origin_chat_id=chat.pk, correlation=correlation, component="human.chat_message",
                                  user=identity.user if identity.user_id else None)


# --- a chat message changed after it became a turn ---------------------------------------------


def _chat_turn(chat: Chat, message_id: str) -> tuple[Room | None, Observation | None]:
    """The live room of the chat's link (locked) and the turn its message ``message_id`` became there."""
    link = ChatLink.objects.filter(chat=chat, active=True).first()
    if link is None or not message_id:
        return None, None
    room = Room.objects.select_for_update().get(pk=link.room_id)
    if room.status not in CHAT_STATES:
        return room, None
    obs = (Observation.objects.select_for_update().filter(room=room, author_kind=Observation.AuthorKind.HUMAN,
                                                          data__source__externalChatId=chat.external_id,
                                                          data__source__messageId=str(message_id)).first())
    return room, obs


def _authors_turn(chat: Chat, identity: ChatIdentity, message_id: str, change: str,
                  correlation: str) -> tuple[Room | None, Observation | None, str]:
    """The locked room and turn a change of message ``message_id`` applies to, with ``""``; or no turn and what
    happened instead: ``not linked``, ``unknown message``, or ``refused: not the author`` (audited)."""
    room, obs = _chat_turn(chat, message_id)
    if room is None:
        return None, None, "not linked"
    if obs is None:
        return None, None, "unknown message"
    if (obs.data.get("source") or {}).get("identityId") != identity.pk:
        return None, None, _refuse_change(room, obs, identity, change, correlation)
    return room, obs, ""


def _refuse_change(room: Room, obs: Observation, identity: ChatIdentity, change: str, correlation: str) -> str:
    """Someone other than the author changed the message: nothing changes but this audit row (no text)."""
    record(f"human.chat_{change}_refused", room=room, correlation_id=correlation, success=False,
           error="Only the author's own changes count.",
           data={"seq": obs.seq, "by": identity.key, "author": obs.data["source"].get("identityId")})
    return "refused: not the author"


def _rewrite(room: Room, obs: Observation, text: str, data: dict, change: str, markers: list | None = None) -> None:
    """The turn reads ``text`` now (its markers parsed from it, unless given), with ``data``; the
    ``discussion:turn_updated`` event says what ``change`` it was."""
    obs.content, obs.markers, obs.data = text, parse_markers(text) if markers is None else markers, data
    obs.save(update_fields=["content", "markers", "data"])
    record_event(room, EventType.TURN_UPDATED, build.turn_updated(obs, change))


def _relay_again(room: Room, obs: Observation, text: str, correlation: str) -> None:
    """Tell the chats the turn was relayed to (still linked, the bot still there) what it says now, once."""
    chats = (Chat.objects.filter(deliveries__source=obs, deliveries__kind=Delivery.Kind.RELAY, links__room=room,
                                 links__active=True, bot_present=True).distinct())
    for chat in chats:
        queue_post(chat, text, room=room, correlation_id=correlation,
                   card={"boldPrefix": len(obs.author_name), "plainText": True}, source=obs)


def do_edit_chat_message(chat: Chat, identity: ChatIdentity, message_id: str, text: str, *,
                         correlation_id: str | None = None) -> str:
    """The author edited a message of a linked chat that is a turn of its live room: the turn reads the new text
    (markers parsed again), ``data.edited`` says how often and when, the audit row ``human.chat_edit`` keeps the
    text before, a ``discussion:turn_updated`` event shows it, and the chats it was relayed to hear
    "Name (edited): ..." once. Returns what happened: ``edited``; ``unchanged`` (the same text: an update
    processed again, or an edit that changes nothing); ``refused: not the author`` (audited, nothing else);
    ``unknown message`` (from before the link, a command, or another room's); ``not linked``."""
    text, full_length = _chat_text(text)
    correlation = correlation_id or new_correlation_id()
    with transaction.atomic():
        room, obs, refused = _authors_turn(chat, identity, message_id, "edit", correlation)
        if refused:
            return refused
        source = obs.data["source"]
        if not text or text == obs.content or obs.data.get("deleted"):
            return "unchanged"
        before = obs.content
        count = int((obs.data.get("edited") or {}).get("count") or 0) + 1
        data = _with_cut({**obs.data, "edited": {"count": count, "at": timezone.now().isoformat()}}, text, full_length)
        _rewrite(room, obs, text, data, "edited")
        if room.kind == Room.Kind.DISCUSSION and room.status in COMMENT_STATES:
            phases.after_turn(room)  # an edited vote counts as the person's vote now
        record("human.chat_edit", room=room, user=identity.user if identity.user_id else None, correlation_id=correlation,
               data={"seq": obs.seq, "edit": count, "before": before, **source}, output=text[:500])
        _relay_again(room, obs, f"{obs.author_name} (edited): {text}", correlation)
        room_id, seq = room.pk, obs.seq
        transaction.on_commit(lambda: meeting.publish_human_turn(room_id, seq))  # a facilitation run reads the edit
    return "edited"


def do_delete_chat_message(chat: Chat, identity: ChatIdentity, message_id: str, *,
                           correlation_id: str | None = None) -> str:
    """The author deleted a message of a linked chat that is a turn of its live room: the turn reads
    ``DELETED_TEXT`` and loses its markers (a vote in it no longer counts, unless what it carried was acted on
    already: a phase it moved on, a claim a run recorded), ``data.deleted`` says when; the audit row
    ``human.chat_delete`` names the turn without its text; a ``discussion:turn_updated`` event shows it; a relay of
    it to another chat that has not gone out yet is not sent. Returns ``deleted``, ``unchanged`` (deleted already),
    ``refused: not the author``, ``unknown message`` or ``not linked``."""
    correlation = correlation_id or new_correlation_id()
    with transaction.atomic():
        room, obs, refused = _authors_turn(chat, identity, message_id, "delete", correlation)
        if refused:
            return refused
        source = obs.data["source"]
        if obs.data.get("deleted"):
            return "unchanged"
        data = {k: v for k, v in obs.data.items() if k not in ("cut", "restored")}
        data["deleted"] = {"at": timezone.now().isoformat()}
        _rewrite(room, obs, DELETED_TEXT, data, "deleted", markers=[])
        record("human.chat_delete", room=room, user=identity.user if identity.user_id else None, correlation_id=correlation,
               data={"seq": obs.seq, **source})
        # Its relays, and its edits' posts ("Name (edited): ..."), not sent yet.
        withdraw_unsent(obs, "Not sent: its author deleted the message.")
    return "deleted"


def do_restore_chat_message(chat: Chat, identity: ChatIdentity, message_id: str, text: str, *,
                            correlation_id: str | None = None) -> str:
    """The author brought a deleted message back (Teams' undelete, with its text): the turn reads it again, markers
    parsed, ``data.restored`` says when; audit row ``human.chat_restore``; a ``discussion:turn_updated`` event.
    Nothing is relayed again. Returns ``restored``, ``unchanged`` (not deleted), ``refused: not the author``,
    ``unknown message`` or ``not linked``."""
    text, full_length = _chat_text(text)
    correlation = correlation_id or new_correlation_id()
    with transaction.atomic():
        room, obs, refused = _authors_turn(chat, identity, message_id, "restore", correlation)
        if refused:
            return refused
        source = obs.data["source"]
        if not obs.data.get("deleted") or not text:
            return "unchanged"
        data = {k: v for k, v in obs.data.items() if k != "deleted"}
        data["restored"] = {"at": timezone.now().isoformat()}
        _rewrite(room, obs, text, _with_cut(data, text, full_length), "restored")
        record("human.chat_restore", room=room, user=identity.user if identity.user_id else None,
               correlation_id=correlation, data={"seq": obs.seq, **source})
    return "restored"
