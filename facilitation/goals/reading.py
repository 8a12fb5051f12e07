"""Which reader a run's messages get, and the model reader (run on a worker, never in a request).

On the offline rehearsal (and scripted) models the deterministic rules read each message at
once. On a real model the turn is handed to the ``facilitation.read_run_message`` task, which
asks the facilitator's model for a ``record_changes`` tool call; if the model stays unavailable
after the retries, the rules read the message instead, so no message is ever left unread. An edited
chat message is read again by the rules, as the person's new statement (``read_turn``).
"""
import logging

from django.conf import settings

from facilitation.goals import actions, extraction
from facilitation.llm import LLMError, TransientLLMError, provider_for
from rooms import dispatch, meeting
from rooms.models import FacilitationRun, Invocation, Observation

log = logging.getLogger("convene.goals")

READ_TASK = "facilitation.read_run_message"
MODEL_PROVIDERS = ("anthropic", "openai")


def provider_name(run: FacilitationRun) -> str:
    room = run.room
    chosen = room.moderator.provider if room.moderator_id else ""
    return chosen or settings.CONVENE["DEFAULT_PROVIDER"]


def uses_model(run: FacilitationRun) -> bool:
    return provider_name(run) in MODEL_PROVIDERS


def _context(room_id: int, seq: int):
    """The run, the turn, the people in the meeting, whether the turn addressed the facilitator, and where it was
    written (``telegram``, ``teams``, ``web``...)."""
    run = FacilitationRun.objects.filter(room_id=room_id).select_related("room__moderator").first()
    obs = Observation.objects.filter(room_id=room_id, seq=seq).first()
    if run is None or obs is None or run.is_terminal:
        return None, None, [], False, ""
    roster = [p.name for p in meeting.RoomMeetingSource(run.room).roster() if not p.is_bot]
    facilitator = (run.room.moderator.name if run.room.moderator_id else "").lower()
    # Named, or (in a chat) the bot mentioned or one of its messages replied to.
    source = (obs.data or {}).get("source") or {}
    addressed = (bool(facilitator) and facilitator in obs.content.lower()) or bool(source.get("addressed"))
    return run, obs, roster, addressed, str(source.get("platform") or "web")


def _text_before(room_id: int, seq: int, edit: int) -> str:
    """The turn's text before its edit number ``edit``, as the edit's audit row (``human.chat_edit``) keeps it."""
    row = (Invocation.objects.filter(room_id=room_id, component="human.chat_edit", input__seq=seq, input__edit=edit)
           .values_list("input", flat=True).first())
    return str((row or {}).get("before") or "")


def read_turn(room_id: int, seq: int) -> None:
    """A person's turn in a facilitation room: read now (rules) or hand it to a worker (model). A turn offered
    again after its chat message was edited is read as the person's new statement, by the rules, once per edit
    (``actions.do_read_message``); a deleted one is not read."""
    run, obs, roster, addressed, platform = _context(room_id, seq)
    if run is None or (obs.data or {}).get("deleted"):
        return
    edit = int(((obs.data or {}).get("edited") or {}).get("count") or 0)
    if edit and actions.already_read(room_id, seq):
        actions.do_read_message(room_id, obs.author_name, obs.content, roster, addressed=addressed, seq=seq, edit=edit,
                                before=_text_before(room_id, seq, edit), platform=platform)
        return
    if uses_model(run) and run.mode == FacilitationRun.Mode.FACILITATE:
        dispatch.enqueue_on_commit(READ_TASK, room_id, seq, queue="default")
        return
    actions.do_read_message(room_id, obs.author_name, obs.content, roster, addressed=addressed, seq=seq,
                            platform=platform)


def read_with_model(room_id: int, seq: int, *, last_attempt: bool) -> str:
    """The worker's side. Raises ``TransientLLMError`` for a retry unless this is the last attempt."""
    run, obs, roster, addressed, platform = _context(room_id, seq)
    if run is None or actions.already_read(room_id, seq):
        return "nothing to read"
    info = actions.run_info(run, run.room)
    try:
        response = provider_for(provider_name(run)).complete(
            extraction.request(info, run.artifact, obs.author_name, obs.content, roster, model=run.room.moderator.model
                               if run.room.moderator_id else ""))
    except TransientLLMError:
        if not last_attempt:
            raise
        log.warning("the model stayed unavailable; rules read turn %s of room %s", seq, room_id)
        actions.do_read_message(room_id, obs.author_name, obs.content, roster, addressed=addressed, seq=seq,
                                via="rules (model unavailable)", platform=platform)
        return "read by rules"
    except LLMError as exc:
        log.warning("the model refused to read turn %s of room %s: %s", seq, room_id, exc)
        actions.do_read_message(room_id, obs.author_name, obs.content, roster, addressed=addressed, seq=seq,
                                via="rules (model error)", platform=platform)
        return "read by rules"
    changes = extraction.changes(run.pattern, run.slots, run.artifact, obs.author_name, response.text, roster)
    actions.do_read_message(room_id, obs.author_name, obs.content, roster, addressed=addressed, seq=seq, changes=changes,
                            via=f"model {response.provider}", platform=platform)
    return f"read by {response.provider}"
