"""Facilitation runs after their creation: open, read people's messages into the artifact,
confirm, remind, stop or end at the deadline, reap.

Every change goes through here: the rows, an audit row (``rooms.audit.record``) and a
``discussion:artifact`` / ``discussion:status`` event on commit. What people write is data:
it can change the artifact through the pattern's rules, never the goal, the deadline or the
report target (only the owner changes those, through the REST API). What the facilitator
says is in ``voice``; creating a run in ``creation``.
"""
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from facilitation.goals import patterns, rules, texts
from facilitation.goals.shapes import artifact_shape
from facilitation.goals.voice import (addressee, answer_addressed, answer_unplaced, asked_in, close_and_report,
                                      commands_for, escaper_for, linked_chats, md, react, run_info, say, show_status,
                                      unconfirmed)
from rooms.actions.deliveries import queue_direct, queue_post
from rooms.audit import record
from rooms.errors import StateConflict
from rooms.events import EventType, build, record_event
from rooms.models import Chat, ChatLink, FacilitationRun, Invocation, Observation, Room

LIVE = FacilitationRun.LIVE


def _audit(component: str, room: Room, user=None, **data) -> None:
    record(component, room=room, user=user, data=data)


def _locked(room_id: int) -> tuple[Room, FacilitationRun]:
    room = Room.objects.select_for_update().get(pk=room_id)
    return room, FacilitationRun.objects.select_for_update().get(room=room)


def already_read(room_id: int, seq: int, edit: int | None = None) -> bool:
    """The turn ``seq`` was read (``edit``: that edit of it was)."""
    read = Invocation.objects.filter(room_id=room_id, component="goals.read_message", input__seq=seq)
    return (read if edit is None else read.filter(input__edit=edit)).exists()


def _unplaced(run: FacilitationRun, speaker: str, text: str, roster: list[str] | None, changes: list,
              before: str | None = None) -> list:
    """What a message asks of the roles that cannot be done as said (``rules.unplaced``: someone nobody here is
    called, a name several people share, a role the run does not have), less the roles its ``changes`` place (a
    model may have placed a name the rules do not); for an edit, less what the text ``before`` it asked already."""
    placed = {c.role for c in changes if isinstance(c, (rules.Assign, rules.Conflict, rules.Release))}
    notes = [n for n in rules.unplaced(run.pattern, run.slots, speaker, text, roster)
             if isinstance(n, rules.NoSuchRole) or n.role not in placed]
    if before is not None:
        earlier = set(rules.unplaced(run.pattern, run.slots, speaker, before, roster))
        notes = [n for n in notes if n not in earlier]
    return notes


def do_read_message(room_id: int, speaker: str, text: str, roster: list[str] | None = None, *,
                    addressed: bool = False, seq: int | None = None, changes: list | None = None,
                    via: str = "rules", edit: int | None = None, before: str = "", platform: str = "") -> dict:
    """Apply what one person said to the artifact (rehearsal rules) and answer as the floor allows:
    the status shown in place when the artifact changed, a mediation on a conflict, a request for
    confirmation once the machine check passes, the closing and the reports when it is confirmed.
    ``changes`` come from a model's tool call (``extraction``); without them the rehearsal rules
    read the text. With ``seq`` (the turn's), a turn is read once however often it is offered.
    Confirmations hold while the result (``patterns.outcome``) stays the same: a message that changes only
    the rest of the artifact (a decision's proposals) keeps them and asks for nothing again; one that changes
    the result withdraws them, and the facilitator says so.
    An ``edit`` (its number, with the text ``before`` it) is the person's new statement in place of the old one,
    read by the rules once per edit: what the old text said and the new one no longer says is taken back where the
    artifact still holds it from them (a role they claimed, an item they added, their confirmation), and what the
    new text says counts; an edit that says the same as before changes nothing. An edit of a turn not read yet
    waits for that read, which reads the text as it is then.
    A role given to someone the run does not know, to a name several people share, or a role the run does not have
    changes nothing and is answered, addressed to ``speaker``, once (``voice.answer_unplaced``; ``platform``: where
    they wrote, for how someone becomes known there); an edit answers only what its text before did not ask.
    Returns ``{"changed", "resultChanged", "withdrawn", "conflicts", "confirmed", "completed"}``."""
    out = {"changed": False, "resultChanged": False, "withdrawn": [], "conflicts": [], "confirmed": False,
           "completed": False}
    with transaction.atomic():
        room, run = _locked(room_id)
        if run.is_terminal or run.mode != FacilitationRun.Mode.FACILITATE:
            return out
        asked = asked_in(room, seq)  # an answer to the message goes where it was written (a Teams channel's thread, a Telegram reply)
        taken_back: list[str] = []
        if edit is not None:
            if seq is None or already_read(room_id, seq, edit) or not already_read(room_id, seq):
                return out
            said_before = rules.said(run.pattern, run.slots, speaker, before, roster)
            said_now = rules.said(run.pattern, run.slots, speaker, text, roster)
            if said_before == said_now:
                notes = _unplaced(run, speaker, text, roster, [], before)
                _audit("goals.read_message", room, speaker=speaker, seq=seq, edit=edit, changes=[],
                       version=run.artifact_version, state=run.state, via="rules (edit says the same)",
                       **_noted(notes))
                answer_unplaced(room, run, speaker, notes, platform, answers=asked)
                return out
            changes = rules.withdrawals(run.pattern, run.artifact, said_before, said_now)
            changes += rules.read(run.pattern, run.slots, run.artifact, speaker, text, roster)
            if rules.Confirm(speaker) in said_before - said_now and speaker in run.confirmations:
                run.confirmations = [c for c in run.confirmations if c != speaker]
                taken_back = [speaker]
            via = "rules (edit)"
        elif seq is not None and already_read(room_id, seq):
            return out
        if changes is None:
            changes = rules.read(run.pattern, run.slots, run.artifact, speaker, text, roster)
        else:  # read by a model from the artifact as it was: a role taken meanwhile is a conflict, not an overwrite
            holders = run.artifact.get("roles", {})
            changes = [rules.Conflict(c.role, holders[c.role], c.person)
                       if isinstance(c, rules.Assign) and holders.get(c.role) not in (None, c.person) else c
                       for c in changes]
        notes = _unplaced(run, speaker, text, roster, changes, before if edit is not None else None)
        if not changes and not taken_back:
            if seq is not None:
                _audit("goals.read_message", room, speaker=speaker, seq=seq, changes=[], version=run.artifact_version,
                       state=run.state, via=via, **({"edit": edit} if edit is not None else {}), **_noted(notes))
            if notes:  # a role given that could not be: the answer says why and how
                answer_unplaced(room, run, speaker, notes, platform, answers=asked)
            elif addressed and edit is None:  # asked something that changed nothing: where the run stands
                answer_addressed(room, run, speaker, answers=asked)
            return out
        new, changed = rules.apply(run.pattern, run.artifact, changes)
        out["conflicts"] = [c for c in changes if isinstance(c, rules.Conflict)]
        if changed:
            out["resultChanged"] = patterns.outcome(run.pattern, new) != patterns.outcome(run.pattern, run.artifact)
            run.artifact = new
            run.artifact_version += 1
            run.last_progress_at = timezone.now()
            if out["resultChanged"] and run.confirmations:  # a changed result needs confirming again
                out["withdrawn"], run.confirmations = list(run.confirmations), []
        out["withdrawn"] = [*taken_back, *[c for c in out["withdrawn"] if c not in taken_back]]
        confirms = [c.person for c in changes if isinstance(c, rules.Confirm)]
        check = patterns.check(run.pattern, run.slots, run.artifact)
        if confirms and check.done:
            # Only those asked to confirm confirm (patterns.confirmers); anyone else's "confirmed" is not recorded.
            asked = {p.lower() for p in patterns.confirmers(run.pattern, run.artifact, run.initiator_name or None,
                                                            run.confirm_mode)}
            for person in confirms:
                if person.lower() in asked and person.lower() not in {c.lower() for c in run.confirmations}:
                    run.confirmations = [*run.confirmations, person]
                    out["confirmed"] = True
        if check.done and run.state in (FacilitationRun.State.ACTIVE, FacilitationRun.State.WAITING):
            run.state = FacilitationRun.State.CONFIRMING
        elif not check.done and run.state == FacilitationRun.State.CONFIRMING:
            run.state = FacilitationRun.State.ACTIVE
        if patterns.confirmed(run.pattern, run.slots, run.artifact, run.confirmations, run.initiator_name or None,
                              run.confirm_mode):
            run.state = FacilitationRun.State.COMPLETED
            run.ended_at = timezone.now()
            room.status = Room.Status.CONCLUDED
            room.ended_at = run.ended_at
            # The confirmed artifact is the room's conclusion (Markdown, like every conclusion: people's words escaped).
            room.conclusion = texts.artifact_text(run.pattern, run.artifact, md)
            room.save(update_fields=["status", "ended_at", "conclusion", "updated_at"])
            record_event(room, EventType.STATUS, build.status(room))
            out["completed"] = True
        out["changed"] = changed
        run.save()
        if out["completed"]:
            close_and_report(room, run, completed=True)
        elif changed or out["conflicts"] or out["confirmed"] or taken_back:
            react(room, run, out, addressed=addressed)
        answer_unplaced(room, run, speaker, notes, platform, answers=asked)  # said only while the run goes on
        _audit("goals.read_message", room, speaker=speaker, seq=seq, via=via, changes=[type(c).__name__ for c in changes],
               version=run.artifact_version, state=run.state, **({"edit": edit} if edit is not None else {}),
               **_noted(notes))
        if changed or out["confirmed"] or out["completed"] or taken_back:
            record_event(room, EventType.ARTIFACT, build.artifact(artifact_shape(run)))
    return out


def _noted(notes: list) -> dict:
    """The audit row's record of a message's unplaced roles (``unplaced``: the kinds, in order), when it has any."""
    return {"unplaced": [type(n).__name__ for n in notes]} if notes else {}


def do_end_run(room_id: int, state: str, reason: str, user=None) -> FacilitationRun:
    """Stop (owner or initiator) or fail (deadline) a live run; a finished run is 409."""
    with transaction.atomic():
        room, run = _locked(room_id)
        if run.is_terminal:
            raise StateConflict(f"The run is already {run.state}.", code="invalid_transition")
        run.state, run.end_reason, run.ended_at = state, reason[:300], timezone.now()
        run.save(update_fields=["state", "end_reason", "ended_at"])
        room.status = {FacilitationRun.State.STOPPED: Room.Status.STOPPED,
                       FacilitationRun.State.COMPLETED: Room.Status.CONCLUDED}.get(state, Room.Status.FAILED)
        room.ended_at = run.ended_at
        room.save(update_fields=["status", "ended_at", "updated_at"])
        _audit(f"goals.{state}", room, user, reason=reason)
        record_event(room, EventType.STATUS, build.status(room))
        record_event(room, EventType.ARTIFACT, build.artifact(artifact_shape(run)))
    return run


def do_reap_run(run_id: int) -> bool:
    """Remove an ephemeral run's scaffold (the run row, its join code) after it ended or expired.

    The protocol stays: the room with its transcript, events, invocations, deliveries and minutes,
    and the final artifact kept in the room's conclusion data."""
    with transaction.atomic():
        run = FacilitationRun.objects.select_for_update().filter(pk=run_id, origin=FacilitationRun.Origin.EPHEMERAL).first()
        if run is None:
            return False
        now = timezone.now()
        if not ((run.is_terminal and run.ended_at and run.ended_at <= now - REAP_GRACE) or run.expires_at <= now):
            return False
        room = Room.objects.select_for_update().get(pk=run.room_id)
        if not run.is_terminal:
            run.state, run.end_reason, run.ended_at = FacilitationRun.State.FAILED, "expired (TTL)", now
            room.status, room.ended_at = Room.Status.FAILED, now
        protocol = {"pattern": run.pattern, "slots": run.slots, "artifact": run.artifact, "confirmedBy": run.confirmations,
                    "state": run.state, "reportTo": run.report_to, "deadline": run.deadline.isoformat(),
                    "endReason": run.end_reason}
        state = room.engine_state or {}
        room.engine_state = {**state, "facilitationProtocol": protocol}
        room.save(update_fields=["engine_state", "status", "ended_at", "updated_at"])
        _audit("goals.reap", room, **protocol)
        record_event(room, EventType.STATUS, build.status(room))
        run.delete()
    return True


REAP_GRACE = timedelta(hours=1)  # after the end: time for the report and minutes to go out


def reapable_runs() -> list[int]:
    now = timezone.now()
    qs = FacilitationRun.objects.filter(origin=FacilitationRun.Origin.EPHEMERAL)
    ended = qs.filter(state__in=FacilitationRun.TERMINAL, ended_at__lte=now - REAP_GRACE)
    expired = qs.filter(expires_at__lte=now)
    return sorted(set(ended.values_list("pk", flat=True)) | set(expired.values_list("pk", flat=True)))


def overdue_runs() -> list[int]:
    return list(FacilitationRun.objects.filter(state__in=LIVE, deadline__lte=timezone.now()).values_list("room_id", flat=True))


# --- what the facilitator says in the room (the browser room is a meeting source too) -----------


def do_open_run(room_id: int, *, initiator_name: str = "", initiator_user=None, initiator_key: str = "") -> FacilitationRun:
    """The run begins: the facilitator announces itself (the handshake) before any moderation."""
    with transaction.atomic():
        room, run = _locked(room_id)
        if run.state != FacilitationRun.State.WAITING:
            raise StateConflict(f"The run is already {run.state}.", code="invalid_transition")
        now = timezone.now()
        run.state = FacilitationRun.State.ACTIVE
        run.last_progress_at = now
        if initiator_name:
            run.initiator_name = initiator_name[:200]
        if initiator_user is not None:
            run.initiator_user = initiator_user
        if initiator_key:
            run.initiator_key = initiator_key[:100]
        run.save()
        room.status, room.started_at = Room.Status.ACTIVE, now
        room.save(update_fields=["status", "started_at", "updated_at"])
        record_event(room, EventType.STATUS, build.status(room))
        record_event(room, EventType.ARTIFACT, build.artifact(artifact_shape(run)))  # the run's state changed
        status_command, stop_command = commands_for(linked_chats(room), md)
        say(room, texts.handshake(run_info(run, room), md, status_command, stop_command), "handshake")
        show_status(room, run)
        _audit("goals.open_run", room, initiator_user, initiator=run.initiator_name, initiatorKey=run.initiator_key)
    return run


def do_introduce_to_chat(room_id: int, chat_id: int) -> bool:
    """A group linked to a run already under way (with a code from the owner): it hears the handshake and
    gets the status in place, like the first group did. False when there is nothing to introduce."""
    with transaction.atomic():
        room, run = _locked(room_id)
        chat = Chat.objects.filter(pk=chat_id, links__room=room, links__active=True).select_related("added_by").first()
        if run.is_terminal or run.state == FacilitationRun.State.WAITING or chat is None or not chat.bot_present:
            return False
        esc = escaper_for(chat)  # people's words read as typed: escaped where the chat shows Markdown (Teams)
        # Who brought the facilitator here (not the run's initiator, who invited it into the founding group).
        link = ChatLink.objects.filter(chat=chat, room=room, active=True).select_related("linked_by").first()
        by = texts.brought_here(chat.added_by.display_name if chat.added_by_id else "",
                                link.linked_by.display_name if link is not None and link.linked_by_id else "", esc)
        queue_post(chat, texts.handshake(run_info(run, room), esc, *commands_for([chat], esc), by=by), room=room)
        show_status(room, run, chats=[chat])
        _audit("goals.introduce", room, chat=chat.pk)
    return True


def do_say_status(room_id: int, answers: dict | None = None) -> Observation:
    """``/facilitator status``: the truth about the run, at any time. ``answers``: the message that asked (a command's
    ``answers``), for the answer to go into its thread in the chat it was asked in."""
    with transaction.atomic():
        room, run = _locked(room_id)
        check = patterns.check(run.pattern, run.slots, run.artifact)
        obs = say(room, texts.status(run_info(run, room), run.artifact, check.missing, run.state, md,
                                     unconfirmed(run)), "status", answers=answers)
        _audit("goals.status", room)
    return obs


def do_stop_run(room_id: int, user=None, reason: str = "stopped by the owner",
                state: str = FacilitationRun.State.STOPPED) -> FacilitationRun:
    """Stop (or fail, at the deadline) a live run: the end, then the closing message with the partial result in
    the room and the status in place showing the run's final state."""
    with transaction.atomic():
        do_end_run(room_id, state, reason, user)
        room, run = _locked(room_id)  # as the end left them (state, seq)
        close_and_report(room, run, completed=False, reason=reason)
    return run


def do_remind(room_id: int) -> bool:
    """A stall: no progress for the reminder cadence; nudge naming what is missing and who is silent."""
    with transaction.atomic():
        room, run = _locked(room_id)
        if (run.state not in (FacilitationRun.State.ACTIVE, FacilitationRun.State.CONFIRMING) or not run.reminder_minutes
                or run.mode == FacilitationRun.Mode.RECORD):  # taking minutes only: never a nudge
            return False
        now = timezone.now()
        cadence = timedelta(minutes=run.reminder_minutes)
        progress = run.last_progress_at if run.mode == FacilitationRun.Mode.FACILITATE else None
        since = max(t for t in (progress, run.last_reminder_at, room.started_at) if t is not None)
        if now - since < cadence:
            return False
        if run.mode == FacilitationRun.Mode.TIMEKEEP:  # the time, on every cadence, whatever the progress
            left = int((run.deadline - now).total_seconds() // 60)
            say(room, texts.time_check(left, run_info(run, room).deadline), "time-check")
            run.last_reminder_at = now
            run.save(update_fields=["last_reminder_at"])
            _audit("goals.time_check", room, minutesLeft=left)
            return True
        check = patterns.check(run.pattern, run.slots, run.artifact)
        # Complete but not confirmed: only those asked who have not confirmed yet are still awaited (and addressed).
        awaited = [] if check.missing else patterns.unconfirmed(run.pattern, run.artifact, run.confirmations,
                                                                run.initiator_name or None, run.confirm_mode)
        missing = check.missing or [f"confirmation from {', '.join(awaited)}" if awaited else "confirmation"]
        spoke = set(Observation.objects.filter(room=room, author_kind=Observation.AuthorKind.HUMAN).values_list("author_name", flat=True))
        named = patterns.named_people(run.pattern, run.artifact)
        silent = [p for p in named if p not in spoke and p not in awaited]
        say(room, texts.nudge(check.missing, silent, md, addressee, unconfirmed=awaited), "reminder")
        if run.interim_reports:  # the principal hears how it stands, resolved now like the report
            interim = texts.interim(run_info(run, room), run.artifact, missing)
            reached: set = set()  # one copy per person, however many targets name them
            for principal in run.report_to:
                queue_direct(principal, interim, room=room, plain=True, reached=reached)
        run.last_reminder_at = now
        run.save(update_fields=["last_reminder_at"])
        _audit("goals.remind", room, missing=missing, silent=silent)
    return True


def do_end_at_deadline(room_id: int) -> FacilitationRun:
    """The deadline passed: a facilitated run fails with its partial result; a run that only took
    minutes or kept time is complete (its minutes are the result)."""
    run = FacilitationRun.objects.get(room_id=room_id)
    if run.mode == FacilitationRun.Mode.FACILITATE:
        return do_stop_run(room_id, reason="the deadline passed", state=FacilitationRun.State.FAILED)
    return do_stop_run(room_id, reason="the time is up", state=FacilitationRun.State.COMPLETED)


def stalled_runs() -> list[int]:
    return list(FacilitationRun.objects.filter(state__in=(FacilitationRun.State.ACTIVE, FacilitationRun.State.CONFIRMING),
                                               reminder_minutes__isnull=False).values_list("room_id", flat=True))
