"""Which reader a run's messages get, and the model reader (run on a worker, never in a request).

On the offline rehearsal (and scripted) models the deterministic rules read each message at
once. On a real model the turn is handed to the ``facilitation.read_run_message`` task, which
asks the facilitator's model for a ``record_changes`` tool call; if the model stays unavailable
after the retries, the rules read the message instead, so no message is ever left unread. An edited
chat message is read again by the rules, as the person's new statement (``read_turn``).

People are often named by their @username in a chat ("let @ana_k be Scribe"): before a message is read,
an @username of someone in the meeting (a chat member's, or a person's account name in the browser)
stands for their name, so the rules and the model read it as the name it is (``named_by_handle``).
"""
import logging
import re

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


#: An @username in a message: letters, digits and underscores (Telegram's, and most account names), not the middle of
#: an e-mail address or a longer word.
_HANDLE = re.compile(r"(?<![\w@.])@([A-Za-z0-9_]{1,64})(?![\w@])")


def handles_of(people: list[meeting.Person]) -> dict[str, str]:
    """Case-folded @username -> the name the meeting knows that person by, for the people who have one
    (``Person.handle``: a chat member's username, a browser user's account name). A username people of different
    names answer to is left out."""
    found: dict[str, set] = {}
    for p in people:
        if p.handle:
            found.setdefault(p.handle.casefold(), set()).add(p.name)
    return {handle: next(iter(names)) for handle, names in found.items() if len(names) == 1}


def named_by_handle(text: str, handles: dict[str, str]) -> str:
    """``text`` with each @username of someone in the meeting written as their name; any other left as it is."""
    if "@" not in text or not handles:
        return text
    return _HANDLE.sub(lambda m: handles.get(m.group(1).casefold(), m.group(0)), text)


def _context(room_id: int, seq: int):
    """The run, the turn, the people in the meeting, whether the turn addressed the facilitator, where it was
    written (``telegram``, ``teams``, ``web``...) and their @usernames (``handles_of``)."""
    run = FacilitationRun.objects.filter(room_id=room_id).select_related("room__moderator").first()
    obs = Observation.objects.filter(room_id=room_id, seq=seq).first()
    if run is None or obs is None or run.is_terminal:
        return None, None, [], False, "", {}
    people = [p for p in meeting.RoomMeetingSource(run.room).roster() if not p.is_bot]
    roster = [p.name for p in people]
    facilitator = (run.room.moderator.name if run.room.moderator_id else "").lower()
    # Named, or (in a chat) the bot mentioned or one of its messages replied to.
    source = (obs.data or {}).get("source") or {}
    addressed = (bool(facilitator) and facilitator in obs.content.lower()) or bool(source.get("addressed"))
    return run, obs, roster, addressed, str(source.get("platform") or "web"), handles_of(people)


def _text_before(room_id: int, seq: int, edit: int) -> str:
    """The turn's text before its edit number ``edit``, as the edit's audit row (``human.chat_edit``) keeps it."""
    row = (Invocation.objects.filter(room_id=room_id, component="human.chat_edit", input__seq=seq, input__edit=edit)
           .values_list("input", flat=True).first())
    return str((row or {}).get("before") or "")


def read_turn(room_id: int, seq: int) -> None:
    """A person's turn in a facilitation room: read now (rules) or hand it to a worker (model). A turn offered
    again after its chat message was edited is read as the person's new statement, by the rules, once per edit
    (``actions.do_read_message``); a deleted one is not read."""
    run, obs, roster, addressed, platform, handles = _context(room_id, seq)
    if run is None or (obs.data or {}).get("deleted"):
        return
    text = named_by_handle(obs.content, handles)
    edit = int(((obs.data or {}).get("edited") or {}).get("count") or 0)
    if edit and actions.already_read(room_id, seq):
        actions.do_read_message(room_id, obs.author_name, text, roster, addressed=addressed, seq=seq, edit=edit,
                                before=named_by_handle(_text_before(room_id, seq, edit), handles), platform=platform)
        return
    if uses_model(run) and run.mode == FacilitationRun.Mode.FACILITATE:
        dispatch.enqueue_on_commit(READ_TASK, room_id, seq, queue="default")
        return
    actions.do_read_message(room_id, obs.author_name, text, roster, addressed=addressed, seq=seq, platform=platform)


def read_with_model(room_id: int, seq: int, *, last_attempt: bool) -> str:
    """The worker's side. Raises ``TransientLLMError`` for a retry unless this is the last attempt."""
    run, obs, roster, addressed, platform, handles = _context(room_id, seq)
    if run is None or actions.already_read(room_id, seq):
        return "nothing to read"
    text = named_by_handle(obs.content, handles)
    info = actions.run_info(run, run.room)
    try:
        response = provider_for(provider_name(run)).complete(
            extraction.request(info, run.artifact, obs.author_name, text, roster, model=run.room.moderator.model
                               if run.room.moderator_id else ""))
    except TransientLLMError:
        if not last_attempt:
            raise
        log.warning("the model stayed unavailable; rules read turn %s of room %s", seq, room_id)
        actions.do_read_message(room_id, obs.author_name, text, roster, addressed=addressed, seq=seq,
                                via="rules (model unavailable)", platform=platform)
        return "read by rules"
    except LLMError as exc:
        log.warning("the model refused to read turn %s of room %s: %s", seq, room_id, exc)
        actions.do_read_message(room_id, obs.author_name, text, roster, addressed=addressed, seq=seq,
                                via="rules (model error)", platform=platform)
        return "read by rules"
    changes = extraction.changes(run.pattern, run.slots, run.artifact, obs.author_name, response.text, roster)
    actions.do_read_message(room_id, obs.author_name, text, roster, addressed=addressed, seq=seq, changes=changes,
                            via=f"model {response.provider}", platform=platform)
    return f"read by {response.provider}"
