"""Acting on what arrived from a chat platform (normalized events), in the bridge's worker.

Each event becomes rows through actions: the bot added (and by whom), rosters, a group
upgraded to a supergroup, a message recorded as a turn of the linked room, and commands
(``/facilitator start CODE`` links the group to a room; ``/start CODE`` in a direct chat
links the sender's account to their Convene user). What the bot tells people to type is worded for
their platform (``rooms.actions.chat.typed_command``): on Teams a group command follows the bot's
@mention and a personal chat takes ``start CODE``. The bot's own messages are never
input; other bots' messages only when they address our bot.

Replies quote what people chose (a room's name and topic, a moderator's name, report targets): Teams
shows a reply as Markdown, so those words are escaped there and read as typed (``[click](...)`` stays
text, ``2*3*4`` keeps its asterisks); Telegram shows it as plain text (``facilitation.goals.voice.escaper_for``).

A chat stays linked to its room after the room ended (a stopped discussion may still be concluded, and
its conclusion reaches the chat; the page keeps showing which chats took part). Nothing said there is
recorded any more: the first message after the end is answered, once per chat and ended room, with a
notice naming the room (``rooms.actions.deliveries.queue_ended_notice``), and ``facilitator status``
says the room ended and what it came to. Linking a new room, or ``facilitator stop``, unlinks it; a stop by
someone who may not end the link is answered with who may and audited (``bridge.stop_refused``).
While the room is still going on, only someone who may stop the link (whoever linked the chat, whoever
started the room's facilitation run, or the room's owner or staff with a linked account:
``rooms.actions.chat.may_end_link``) may link the chat to another room; anyone else is told so
(``link_held``), the refusal is audited and nothing else changes. The code of the room the chat is in
already changes nothing either (``already_linked``): the code stays usable.
"""
import logging

from django.db import transaction

from channels_bridge.events import (
    BotAdded,
    BotRemoved,
    FileConsent,
    MembersChanged,
    Message,
    MessageChanged,
    Migrated,
)
from facilitation.actions.comments import (
    do_delete_chat_message,
    do_edit_chat_message,
    do_record_chat_message,
    do_restore_chat_message,
)
from facilitation.goals.voice import (
    command_in,
    escaper_for,
    outcome_after_the_end,
    page_url,
    run_state_after_the_end,
)
from rooms import meeting
from rooms.actions import chat as chat_actions
from rooms.actions.chat import AlreadyLinked, CodeRefused, LinkHeld
from rooms.actions.deliveries import answer_file_offer, queue_direct_to_identity, queue_ended_notice, queue_post
from rooms.errors import ActionError
from rooms.models import Chat, ChatIdentity, ChatLink, ChatMember, Delivery, Room

log = logging.getLogger("convene.bridge")


def help_group(chat: Chat, link: ChatLink | None = None, unknown: str = "") -> str:
    """What the bot does in a group and the commands it takes; in a linked chat, which room it is linked to.
    ``unknown``: the word after ``facilitator`` that the bot does not know, said back first (as typed there)."""
    said = f"I do not know \u201c{command_in(chat, 'facilitator ' + unknown)}\u201d. " if unknown else ""
    if link is not None and link.room.is_terminal:
        return said + ended_notice(link.room, chat)
    if link is not None:
        room = link.room
        ends = "the run (or this chat's link)" if room.kind == Room.Kind.FACILITATION else "the link"
        return (f"{said}This chat is linked to the {_kind_word(room)} \u201c{escaper_for(chat)(room.name)}\u201d. "
                f"{command_in(chat, 'facilitator status')} says who moderates and toward what; "
                f"{command_in(chat, 'facilitator stop')} ends {ends}, for those who may; "
                f"{command_in(chat, 'facilitator start CODE')} links this chat to another room with its code.")
    return (f"{said}I relay this chat to a Convene discussion or facilitation run and back. In the group: "
            f"{command_in(chat, 'facilitator start CODE')} links it to the discussion or run whose code it is, "
            f"{command_in(chat, 'facilitator status')} says who moderates and toward what, "
            f"{command_in(chat, 'facilitator stop')} ends it.")


def help_direct(identity: ChatIdentity) -> str:
    """The answer to anything but a code in a direct chat: how to link the account, or, once it is linked, whose it is
    and that the bot takes part in groups, not here."""
    start = chat_actions.typed_command(identity.platform, "start CODE", direct=True)
    if identity.user_id:
        return (f"Hello! This account speaks as {escaper_for(identity)(identity.user.get_username())} in Convene. I do not "
                "read direct messages: say what you want a discussion or run to hear in its group. Reports for you arrive "
                "here.")
    return ("Hello! To link this account to your Convene user, open Convene in your browser, choose "
            f"Chat accounts, get a code there and send {start} here. I relay group chats to Convene discussions and "
            "facilitation runs and back; reports for you arrive here.")


def greeting(chat: Chat) -> str:
    return ("Hello, I am the Convene facilitator. Nothing here is relayed until someone links this chat "
            f"to a discussion or facilitation run with {command_in(chat, 'facilitator start CODE')} (the code comes from its "
            "owner).")


def _person(identity: ChatIdentity | None) -> meeting.Person | None:
    return meeting.person_of_identity(identity) if identity is not None else None


def _publish_on_commit(event: meeting.MeetingEvent) -> None:
    transaction.on_commit(lambda: meeting.publish(event))


def answering(chat: Chat, ev: Message) -> dict:
    """What an answer to ``ev`` carries so that it goes where the message was written (``meeting.answer_target``, in
    the delivery's ``card["answers"]``); empty in a direct chat."""
    return {} if ev.is_direct else meeting.answer_target(chat.pk, chat.platform, ev.message_id, ev.thread)


def _reply(chat: Chat, text: str, room=None, card: dict | None = None, answers: dict | None = None) -> Delivery:
    """An answer in the chat; ``answers`` (``answering``): the message it answers, for it to go into its thread."""
    if answers:
        card = {**(card or {}), "answers": answers}
    return queue_post(chat, text, kind=Delivery.Kind.REPLY, room=room, card=card)


# --- membership -----------------------------------------------------------------------------


def on_bot_added(ev: BotAdded, correlation: str) -> Chat:
    """The bot joined a chat. Telegram tells it twice (a ``my_chat_member`` update and a service message listing the new
    members): only the first, which finds the bot absent, greets the group and is published as ``bot_added``. A group
    linked before (the bot was removed and added back) gets its status posted afresh: the old one is far above.

    A person who installs the Teams app for themselves (Teams says so twice: ``installationUpdate`` and
    ``conversationUpdate``) is greeted once in that personal chat with what the bot does and how to link their
    account (``help_direct``, the answer to anything they write there)."""
    direct = ev.chat.kind == Chat.Kind.DIRECT
    with transaction.atomic():
        if direct:  # the row exists first, so a second notice of the same install waits here for the first one
            chat_actions.see_chat(ev.chat)
        known = Chat.objects.select_for_update(no_key=True).filter(platform=ev.chat.platform, external_id=ev.chat.external_id).first()
        # A personal chat seen before only through a message has ``bot_present`` already, never ``added_at``.
        again = known is not None and known.bot_present and (known.added_at is not None or not direct)
        chat = chat_actions.do_record_bot_added(ev.chat, ev.actor, correlation_id=correlation)
    if again:
        return chat
    if direct and chat.platform == "teams" and ev.actor is not None and not ev.actor.is_bot:
        identity = chat_actions.see_identity(ev.actor, service_url=ev.chat.service_url)
        chat_actions.do_note_direct_chat(identity, conversation_id=chat.external_id, correlation_id=correlation)
        queue_direct_to_identity(identity, help_direct(identity), kind=Delivery.Kind.REPLY, correlation_id=correlation)
    if chat.platform == "teams" and chat.kind != Chat.Kind.DIRECT:
        _fetch_teams_roster(chat, correlation)
    if chat.status_message_id:
        chat_actions.do_forget_status_message(chat, chat.status_message_id, reason="the bot was added again")
    if chat.kind != Chat.Kind.DIRECT and not ChatLink.objects.filter(chat=chat, active=True).exists():
        _reply(chat, greeting(chat))
    inviter = chat.added_by
    meeting.publish(meeting.MeetingEvent("bot_added", chat.platform, chat.pk, actor=_person(inviter)))
    return chat


def _fetch_teams_roster(chat: Chat, correlation: str) -> None:
    """Teams lists a conversation's members (Telegram has no such call)."""
    from channels_bridge.teams import client as teams_client
    from channels_bridge.teams.parse import PLATFORM

    try:
        members = teams_client.get_members(chat.service_url, chat.external_id)
    except teams_client.ConnectorError:
        log.warning("could not list the members of Teams chat %s", chat.pk, exc_info=True)
        return
    accounts = tuple(
        chat_actions.Account(PLATFORM, m["id"], name=m.get("name") or "", aad_object_id=m.get("aadObjectId") or m.get("objectId") or "",
                             tenant_id=chat.tenant_id, is_bot=str(m["id"]).startswith("28:"))
        for m in members if isinstance(m, dict) and m.get("id")
    )
    ref = chat_actions.ChatRef(chat.platform, chat.external_id, kind=chat.kind, platform_type=chat.platform_type, title=chat.title,
                               service_url=chat.service_url, tenant_id=chat.tenant_id)
    chat_actions.do_record_members(ref, joined=accounts, via=ChatMember.Via.MEMBERS_API, correlation_id=correlation)


def on_members(ev: MembersChanged, correlation: str) -> None:
    chat = chat_actions.do_record_members(ev.chat, joined=ev.joined, left=ev.left, actor=ev.actor, correlation_id=correlation)
    ids = ChatIdentity.objects.filter(platform=chat.platform, external_id__in=[a.external_id for a in ev.joined + ev.left])
    by_id = {i.external_id: i for i in ids}
    meeting.publish(meeting.MeetingEvent(
        "members_changed", chat.platform, chat.pk,
        actor=_person(ChatIdentity.objects.filter(platform=chat.platform, external_id=ev.actor.external_id).first()) if ev.actor else None,
        joined=tuple(_person(by_id[a.external_id]) for a in ev.joined if a.external_id in by_id),
        left=tuple(_person(by_id[a.external_id]) for a in ev.left if a.external_id in by_id),
    ))


# --- messages -------------------------------------------------------------------------------


def _is_own(sender, platform: str, own_id: str) -> bool:
    return bool(own_id) and sender.external_id == own_id


def on_message(ev: Message, own_id: str, correlation: str) -> str:
    if _is_own(ev.sender, ev.chat.platform, own_id):
        return "own message"
    if ev.sender.is_bot and not ev.mentions_bot:
        return "another bot"
    chat = chat_actions.see_chat(ev.chat)
    identity = chat_actions.see_identity(ev.sender, service_url=ev.chat.service_url)
    if ev.is_direct:
        chat_actions.do_note_direct_chat(identity, conversation_id=chat.external_id if chat.platform == "teams" else "",
                                         correlation_id=correlation)
    else:
        chat_actions.touch_member(chat, identity, ChatMember.Via.MESSAGE)
        _touch_mentioned(chat, ev)
    answers = answering(chat, ev)
    if ev.command is not None:
        return on_command(chat, identity, ev.command, direct=ev.is_direct, correlation=correlation, answers=answers)
    if ev.is_direct:
        queue_direct_to_identity(identity, help_direct(identity), kind=Delivery.Kind.REPLY, correlation_id=correlation)
        return "direct message answered"
    obs = do_record_chat_message(chat, identity, ev.clean_text or ev.text, message_id=ev.message_id, reply_to=ev.reply_to,
                                 addressed=ev.mentions_bot, correlation_id=correlation, thread=ev.thread)
    if obs is not None:
        return f"turn {obs.seq}"
    link = chat_actions.live_link(chat)
    if link is None:
        return "not linked"
    if link.room.is_terminal:
        told = queue_ended_notice(link, ended_notice(link.room, chat), correlation_id=correlation,
                                  card={"answers": answers} if answers else None)
        return "room ended: told" if told is not None else "room ended"
    return "not recorded"


def on_message_changed(ev: MessageChanged, own_id: str, correlation: str) -> str:
    """A message edited (or, on Teams, deleted or restored) after it was sent: its turn follows when the author
    changed it (``facilitation.actions.comments``). Nothing is answered in the chat, whatever happened."""
    if _is_own(ev.sender, ev.chat.platform, own_id):
        return "own message"
    chat = Chat.objects.filter(platform=ev.chat.platform, external_id=ev.chat.external_id).first()
    if chat is None:
        return "unknown chat"
    identity = chat_actions.see_identity(ev.sender, service_url=ev.chat.service_url)
    if ev.change == "edited":
        return f"edit: {do_edit_chat_message(chat, identity, ev.message_id, ev.text, correlation_id=correlation)}"
    if ev.change == "deleted":
        return f"delete: {do_delete_chat_message(chat, identity, ev.message_id, correlation_id=correlation)}"
    if ev.change == "restored":
        return f"restore: {do_restore_chat_message(chat, identity, ev.message_id, ev.text, correlation_id=correlation)}"
    return f"{ev.change}: not handled"


def on_file_consent(ev: FileConsent, correlation: str) -> str:
    """A person accepted or declined a file the bot offered them in a personal chat."""
    identity = chat_actions.see_identity(ev.sender, service_url=ev.chat.service_url)
    queued = answer_file_offer(ev.offer_id, identity, accepted=ev.accepted, upload=ev.upload,
                               declined=lambda offer: file_declined(offer, identity), correlation_id=correlation)
    if ev.accepted:
        return "file upload queued" if queued is not None else "file accepted, nothing to upload"
    return "file declined: answered" if queued is not None else "file declined"


def file_declined(offer: Delivery, identity: ChatIdentity) -> str:
    """The answer to a declined file (a report's minutes): it was not sent, and where it can still be downloaded (the
    room's page, the address the report gave)."""
    name = (offer.attachment or {}).get("filename") or ""
    what = f"The minutes ({escaper_for(identity)(name)})" if name else "The minutes"
    if offer.room is None:
        return f"{what} were not sent, as you declined the file."
    return (f"{what} were not sent, as you declined the file. They can still be downloaded from the "
            f"{_kind_word(offer.room)}'s page: {page_url(offer.room)}")


def _touch_mentioned(chat: Chat, ev: Message) -> None:
    for account in ev.mentioned:
        if account.external_id:
            chat_actions.touch_member(chat, chat_actions.see_identity(account), ChatMember.Via.MENTION)
        elif account.username:
            known = ChatIdentity.objects.filter(platform=chat.platform, username__iexact=account.username).first()
            if known is not None:
                chat_actions.touch_member(chat, known, ChatMember.Via.MENTION)


# --- commands -------------------------------------------------------------------------------


def on_command(chat: Chat, identity: ChatIdentity, command: tuple[str, tuple[str, ...]], *, direct: bool, correlation: str,
               answers: dict | None = None) -> str:
    """A command in a chat; every answer to it goes where it was written (``answers``: ``answering``)."""
    name, args = command
    if direct:
        return _direct_command(identity, name, args, correlation)
    answers = answers or {}
    link = chat_actions.live_link(chat)
    offered = meeting.offer_command(meeting.Command(name, args, chat, identity, link.room_id if link else None,
                                                    answers=answers))
    if offered is not None:
        if offered:  # an empty answer: the listener already spoke in the room (relayed here)
            _reply(chat, offered, room=link.room if link else None, answers=answers)
        return f"{name} handled by a listener"
    verb, rest = (args[0].lower(), args[1:]) if name == "facilitator" and args else (name, args)
    if name == "start":  # the ?startgroup=CODE deep link arrives as "/start CODE"
        verb, rest = "start", args
    if name == "start" and not args and link is not None:  # a bare /start in a linked group: what it is linked to
        _reply(chat, help_group(chat, link), room=link.room, answers=answers)
        return "help"
    if verb == "start":
        return _link(chat, identity, rest, correlation, answers)
    if verb == "status":
        if link is not None and link.room.is_terminal:
            text, markdown_from = ended_status(link.room, chat)
            _reply(chat, text, room=link.room, card={"markdownFrom": markdown_from} if markdown_from is not None else None,
                   answers=answers)
            return "status of an ended room"
        _reply(chat, status_text(link, chat), room=link.room if link else None, answers=answers)
        return "status"
    if verb == "stop":
        return _stop(chat, identity, link, correlation, answers)
    unknown = args[0][:40] if name == "facilitator" and args and verb != "help" else ""
    _reply(chat, help_group(chat, link, unknown=unknown), room=link.room if link else None, answers=answers)
    return "help"


def _direct_command(identity: ChatIdentity, name: str, args: tuple[str, ...], correlation: str) -> str:
    if name == "facilitator" and args and args[0].lower() == "start":
        name, args = "start", args[1:]
    code = args[0] if name == "start" and args else ""
    if not code:
        queue_direct_to_identity(identity, help_direct(identity), kind=Delivery.Kind.REPLY, correlation_id=correlation)
        return "help"
    try:
        linked = chat_actions.do_link_identity(identity, code, correlation_id=correlation)
    except CodeRefused as exc:
        queue_direct_to_identity(identity, f"{escaper_for(identity)(exc.message)} Ask Convene for a new code.",
                                 kind=Delivery.Kind.REPLY, correlation_id=correlation)
        return "identity code refused"
    esc = escaper_for(linked)  # a Teams personal chat shows the answer as Markdown: the username reads as typed
    queue_direct_to_identity(linked, f"Linked: this account now speaks as {esc(linked.user.get_username())} in Convene.",
                             kind=Delivery.Kind.REPLY, correlation_id=correlation)
    return "identity linked"


def _link(chat: Chat, identity: ChatIdentity, args: tuple[str, ...], correlation: str, answers: dict) -> str:
    if not args:
        _reply(chat, f"Send {command_in(chat, 'facilitator start CODE')} with the code from the owner of the discussion or run.",
               answers=answers)
        return "start without code"
    try:
        # A Telegram forum's topic the link is made in: where the bot reaches the group while its General topic is closed.
        topic = str(answers.get("thread") or "") if chat.platform == "telegram" else ""
        link = chat_actions.do_link_chat(chat, args[0], identity, correlation_id=correlation, thread=topic)
    except LinkHeld as exc:
        _reply(chat, link_held(exc.room, chat), room=exc.room, answers=answers)
        return "link refused: the chat's room is live"
    except AlreadyLinked as exc:
        _reply(chat, already_linked(exc.room, chat), room=exc.room, answers=answers)
        return "already linked"
    except (CodeRefused, ActionError) as exc:
        _reply(chat, f"{escaper_for(chat)(exc.message)} Ask the owner of the discussion or run for a new code.", answers=answers)
        return "link refused"
    room = link.room
    if room.kind != Room.Kind.FACILITATION:  # a facilitation run opens with its handshake instead
        _reply(chat, f"Linked to the discussion \u201c{escaper_for(chat)(room.name)}\u201d. What is said here appears there, and what is said "
                 f"there appears here. {command_in(chat, 'facilitator status')} tells more; {command_in(chat, 'facilitator stop')} ends it.",
               room=room, answers=answers)
    transaction.on_commit(lambda: meeting.publish(meeting.MeetingEvent("linked", chat.platform, chat.pk, room_id=room.pk,
                                                                       actor=_person(identity))))
    return f"linked to room {room.pk}"


def _kind_word(room: Room) -> str:
    """What people call the room: a facilitation run is a run, anything else a discussion."""
    return "run" if room.kind == Room.Kind.FACILITATION else "discussion"


def _who_may_end(room: Room) -> str:
    """Who may end a chat's link or move the chat to another room (``rooms.actions.chat.may_end_link``)."""
    if room.kind == Room.Kind.FACILITATION:
        return "whoever linked this chat, whoever started the run, or the run's owner (with a linked account)"
    return "whoever linked this chat, or the discussion's owner (with a linked account)"


def link_held(room: Room, chat: Chat) -> str:
    """The answer to ``facilitator start CODE`` from someone who may not move this chat away from its live room."""
    word = _kind_word(room)
    return (f"This chat is linked to the {word} \u201c{escaper_for(chat)(room.name)}\u201d, which is still going on, so it "
            f"stays linked there. Only {_who_may_end(room)}, can link it elsewhere while it goes on. "
            f"{command_in(chat, 'facilitator status')} tells more.")


def already_linked(room: Room, chat: Chat) -> str:
    """The answer to ``facilitator start CODE`` with the code of the room this chat is linked to already."""
    return (f"This chat is linked to the {_kind_word(room)} \u201c{escaper_for(chat)(room.name)}\u201d already; nothing "
            f"changed. {command_in(chat, 'facilitator status')} tells more.")


def status_text(link: ChatLink | None, chat: Chat) -> str:
    """``facilitator status`` in a chat linked to a discussion (a facilitation run answers with its own status)."""
    if link is None:
        return "No facilitation is active here: this chat is not linked to a discussion or run. " + help_group(chat)
    room = link.room
    esc = escaper_for(chat)
    moderator = esc(room.moderator.name) if room.moderator_id else "nobody yet"
    rounds = f"round {room.round} of {room.max_rounds}" if room.round else f"{room.max_rounds} rounds at most"
    return (f"Moderated by {moderator} toward: {esc(room.topic)}\nDiscussion: {esc(room.name)} ({room.status}, {rounds})\n"
            f"What is said here appears there, and what is said there appears here; the conclusion goes to this chat "
            f"and to the discussion's page. {command_in(chat, 'facilitator stop')} ends the link.")


def _ended(room: Room, chat: Chat) -> str:
    """That the room has ended, named as typed: a facilitation run with the state it ended in (completed, stopped,
    failed), a discussion or workspace with its status."""
    name = escaper_for(chat)(room.name)
    if room.kind == Room.Kind.FACILITATION:
        return f"The run \u201c{name}\u201d has ended ({run_state_after_the_end(room) or room.status})"
    return f"The discussion \u201c{name}\u201d has ended ({room.status})"


def _link_another(room: Room, chat: Chat) -> str:
    what = "another run or discussion" if room.kind == Room.Kind.FACILITATION else "another discussion"
    return f"To link {what}, send {command_in(chat, 'facilitator start CODE')} with a code from its owner."


def ended_notice(room: Room, chat: Chat) -> str:
    """The answer to the first message in a chat whose room has ended (sent once per chat and room)."""
    return (f"{_ended(room, chat)}, so nothing said here is relayed any more. {command_in(chat, 'facilitator status')} tells "
            f"what it came to. {_link_another(room, chat)}")


def ended_status(room: Room, chat: Chat) -> tuple[str, int | None]:
    """``facilitator status`` in a chat whose room has ended: that it ended, then its result (a run's outcome) or
    its conclusion. Returns the text and where the conclusion's Markdown starts in it (None: no Markdown)."""
    esc = escaper_for(chat)
    subject = "Goal" if room.kind == Room.Kind.FACILITATION else "Topic"
    text = (f"{_ended(room, chat)}; nothing said here is relayed any more. {_link_another(room, chat)}\n"
            f"{subject}: {esc(room.topic)}")
    outcome = outcome_after_the_end(room, esc) if room.kind == Room.Kind.FACILITATION else ""
    if outcome:
        return f"{text}\n{outcome}", None
    conclusion = (room.conclusion or "").strip()
    if not conclusion:
        return f"{text}\nIt ended without a conclusion.", None
    text += "\nConclusion:\n"
    return text + conclusion, len(text)  # the conclusion is Markdown (Telegram: rendered as entities)


def _stop(chat: Chat, identity: ChatIdentity, link: ChatLink | None, correlation: str, answers: dict) -> str:
    if link is None:
        _reply(chat, "Nothing to stop: this chat is not linked to a discussion or run.", answers=answers)
        return "stop without link"
    if not chat_actions.may_end_link(link, identity):
        refusal = f"Only {_who_may_end(link.room)}, can stop it."
        chat_actions.do_refuse_stop(chat, link, identity, refusal, correlation_id=correlation)
        _reply(chat, refusal, room=link.room, answers=answers)
        return "stop refused"
    room = link.room
    chat_actions.do_unlink_chat(link, user=identity.user if identity.user_id else None, reason="stopped in chat",
                                correlation_id=correlation)
    _reply(chat, f"Stopped: this chat is no longer linked to \u201c{escaper_for(chat)(room.name)}\u201d. Thank you all.",
           room=room, answers=answers)
    transaction.on_commit(lambda: meeting.publish(meeting.MeetingEvent("unlinked", chat.platform, chat.pk, room_id=room.pk,
                                                                       actor=_person(identity))))
    return "unlinked"


# --- entry point ------------------------------------------------------------------------------


def handle(events: list, own_id: str, correlation: str) -> list[str]:
    notes = []
    for ev in events:
        if isinstance(ev, BotAdded):
            on_bot_added(ev, correlation)
            notes.append("bot added")
        elif isinstance(ev, BotRemoved):
            chat = chat_actions.do_record_bot_removed(ev.chat, ev.actor, correlation_id=correlation)
            meeting.publish(meeting.MeetingEvent("bot_removed", chat.platform, chat.pk))
            notes.append("bot removed")
        elif isinstance(ev, MembersChanged):
            on_members(ev, correlation)
            notes.append("members changed")
        elif isinstance(ev, Migrated):
            chat = chat_actions.do_migrate_chat(ev.platform, ev.old_id, ev.new_id, correlation_id=correlation)
            if chat is not None:
                meeting.publish(meeting.MeetingEvent("migrated", chat.platform, chat.pk))
            notes.append("migrated")
        elif isinstance(ev, Message):
            notes.append(on_message(ev, own_id, correlation))
        elif isinstance(ev, MessageChanged):
            notes.append(on_message_changed(ev, own_id, correlation))
        elif isinstance(ev, FileConsent):
            notes.append(on_file_consent(ev, correlation))
    return notes
