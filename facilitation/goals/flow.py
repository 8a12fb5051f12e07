"""A facilitation run in its meeting: the chat side and the browser side, through ``rooms.meeting``.

Registered at app start (``FacilitationConfig.ready``); nothing here knows which platform
people are on.

- A chat linked with the run's join code (``/facilitator start CODE`` or Telegram's
  ``?startgroup=CODE``) opens the run: the handshake, with whoever added the bot (else whoever
  linked it) as the initiator.
- ``/facilitator status`` answers truthfully in the room and every linked chat (after the end, in the asking
  chat only: the bridge says the run ended and what it came to);
  ``/facilitator stop`` ends the run with its closing and reports and unlinks the chat, when the
  initiator or the owner (a linked account) asks; whoever linked a chat may unlink it (the bridge's
  stop); anyone else is told who may, and the refusal is audited (``bridge.stop_refused``).
- Every person's turn (a chat message or a browser comment) is read into the artifact
  (``reading``: the rules at once, or a model's tool call on a worker).
"""
import logging

from facilitation.goals import actions, reading, texts
from facilitation.goals.voice import command_in, escaper_for
from rooms import meeting
from rooms.access import can_control
from rooms.actions.chat import do_refuse_stop, do_unlink_chat, live_link
from rooms.errors import StateConflict
from rooms.models import Chat, ChatIdentity, ChatLink, FacilitationRun, Room

log = logging.getLogger("convene.goals")

UNLINKED = "This chat is no longer linked to the run. Thank you all."


def stop_refused(chat: Chat, run: FacilitationRun) -> str:
    """The answer to a stop by someone who may not stop the run, with the status command as typed in that chat
    (escaped where the chat shows Markdown: the bot's name is in it on Teams). Only in the group the run was started
    from (linked before it opened) did its initiator invite the facilitator; anywhere else the initiator is named as
    who started the run."""
    started = run.room.started_at
    founding = started is not None and ChatLink.objects.filter(room_id=run.room_id, chat=chat, linked_at__lte=started).exists()
    return texts.stop_refused(command_in(chat, "facilitator status"), founding=founding,
                              initiator=run.initiator_name, esc=escaper_for(chat))


def _run(room_id: int | None) -> FacilitationRun | None:
    if room_id is None:
        return None
    return FacilitationRun.objects.filter(room_id=room_id, room__kind=Room.Kind.FACILITATION).select_related("room").first()


def on_meeting_event(event: meeting.MeetingEvent) -> None:
    if event.kind == "bot_added":  # added back to a group of a run under way: it hears the handshake and the status again
        link = ChatLink.objects.filter(chat_id=event.chat_id, active=True).first()
        run = _run(link.room_id if link is not None else None)
        if run is not None and not run.is_terminal and run.state != FacilitationRun.State.WAITING:
            actions.do_introduce_to_chat(run.room_id, event.chat_id)
        return
    if event.kind != "linked":
        return
    run = _run(event.room_id)
    if run is None or run.is_terminal:
        return
    if run.state != FacilitationRun.State.WAITING:  # one more group, linked with a code from the owner
        actions.do_introduce_to_chat(run.room_id, event.chat_id)
        return
    chat = Chat.objects.filter(pk=event.chat_id).select_related("added_by__user").first()
    inviter = meeting.person_of_identity(chat.added_by) if chat is not None and chat.added_by_id else event.actor
    identity = ChatIdentity.objects.filter(pk=inviter.identity_id).select_related("user").first() if inviter else None
    try:
        actions.do_open_run(run.room_id, initiator_name=inviter.name if inviter else "",
                            initiator_key=inviter.key if inviter else "",
                            initiator_user=identity.user if identity is not None and identity.user_id else None)
    except StateConflict:  # opened at the same moment from another chat
        pass


def on_command(command: meeting.Command) -> str | None:
    """``status`` and ``stop`` in a chat linked to a facilitation run; anything else is the bridge's. Once the run
    has ended, ``status`` is the bridge's too: it answers in the asking chat that the run ended and what it came
    to (``voice.outcome_after_the_end``), and the finished run's transcript gets no new turn."""
    run = _run(command.room_id)
    if run is None:
        return None
    verb = command.args[0].lower() if command.name == "facilitator" and command.args else command.name
    if verb == "status" and not run.is_terminal:
        actions.do_say_status(run.room_id, answers=command.answers)
        return ""  # said in the room, relayed to every linked chat (in the asking chat, into the asker's thread)
    if verb == "stop":
        return _stop(run, command)
    return None


def _stop(run: FacilitationRun, command: meeting.Command) -> str | None:
    """``/facilitator stop`` in a chat of the run: the initiator or the owner ends the run (closing and
    reports) and this chat is unlinked; whoever linked this chat may still unlink it (the bridge's own
    stop: None hands it over), as anyone allowed may once the run is over."""
    sender = command.sender
    link = live_link(command.chat)
    if run.is_terminal or link is None:
        return None
    allowed = (run.initiator_key and sender.key == run.initiator_key) or (sender.user_id and can_control(sender.user, run.room))
    if not allowed:
        if link.linked_by_id == sender.pk:
            return None
        refusal = stop_refused(command.chat, run)
        do_refuse_stop(command.chat, link, sender, refusal, refused="may not stop the run")
        return refusal
    try:
        actions.do_stop_run(run.room_id, user=sender.user if sender.user_id else None, reason=f"stopped by {sender.display_name}")
    except StateConflict as exc:
        return exc.message
    do_unlink_chat(link, user=sender.user if sender.user_id else None, reason="stopped in chat")
    return UNLINKED


def on_human_turn(room_id: int, seq: int) -> None:
    if _run(room_id) is not None:
        reading.read_turn(room_id, seq)


def register() -> None:
    meeting.subscribe(on_meeting_event)
    meeting.handle_commands(on_command)
    meeting.on_human_turn(on_human_turn)
