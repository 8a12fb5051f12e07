"""Facilitation runs: create, read people's messages into the artifact, confirm, end, reap.

Every change goes through here: the rows, an ``Invocation`` (correlation id) and a
``discussion:artifact`` / ``discussion:status`` event on commit. What people write is data:
it can change the artifact through the pattern's rules, never the goal, the deadline or the
report target (only the owner changes those, through the REST API).
"""
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from facilitation.goals import floor, patterns, rules, texts
from rooms import limits, ratelimit
from rooms.actions.deliveries import queue_direct, queue_relay, queue_status
from rooms.audit import record
from rooms.errors import Forbidden, StateConflict, ValidationFailed
from rooms.events import EventType, build, record_event
from rooms.models import Agent, ChatLink, Delivery, FacilitationRun, Invocation, Observation, Room, Seat
from rooms.queries import usable_by

PERMISSION = "rooms.start_facilitation_run"
MODES = FacilitationRun.Mode.values
LIVE = (FacilitationRun.State.WAITING, FacilitationRun.State.ACTIVE, FacilitationRun.State.CONFIRMING)


def _limits() -> dict:
    return settings.CONVENE


def _audit(component: str, room: Room, user=None, **data) -> None:
    record(component, room=room, user=user, data=data)


def artifact_shape(run: FacilitationRun) -> dict:
    check = patterns.check(run.pattern, run.slots, run.artifact)
    return {"pattern": run.pattern, **run.artifact, "done": check.done, "missing": check.missing,
            "confirmedBy": list(run.confirmations), "state": run.state, "version": run.artifact_version,
            "needsConfirmationFrom": patterns.confirmers(run.pattern, run.artifact, run.initiator_name or None,
                                                         run.confirm_mode)}


def run_shape(run: FacilitationRun) -> dict:
    return {"pattern": run.pattern, "slots": run.slots, "reportTo": run.report_to, "deadline": run.deadline.isoformat(),
            "reminderMinutes": run.reminder_minutes, "ttlHours": run.ttl_hours, "expiresAt": run.expires_at.isoformat(),
            "origin": run.origin, "state": run.state, "mode": run.mode, "joinCode": run.join_code,
            "interimReports": run.interim_reports,
            "initiator": run.initiator_name or None}


def _principals(value) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > 20:
        raise ValidationFailed("reportTo must be a list of principals.", {"reportTo": ['A list such as ["user:ana", "role:management"].']})
    out = []
    for i, p in enumerate(value):
        kind, _, name = p.partition(":") if isinstance(p, str) else ("", "", "")
        if kind not in ("user", "role") or not name or len(name) > limits.USERNAME or any(c.isspace() for c in name):
            raise ValidationFailed("A report target is not a principal.", {f"reportTo[{i}]": ['Use "user:<username>" or "role:<key>".']})
        if p not in out:
            out.append(p)
    return out


def _deadline(value, now: datetime) -> datetime:
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise ValidationFailed("deadline is required.", {"deadline": ["An ISO 8601 date and time, e.g. 2026-12-01T17:00:00Z."]})
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone.utc)
    if parsed <= now:
        raise ValidationFailed("The deadline has passed.", {"deadline": ["Must be in the future."]})
    return parsed


def _int_field(body: dict, key: str, api: str, lo: int, hi: int, default=None):
    value = body.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValidationFailed(f"{api} is out of range.", {api: [f"A whole number from {lo} to {hi}."]})
    return value


def _check_allowed(owner) -> None:
    if not owner.has_perm(PERMISSION):
        raise Forbidden("Starting facilitation runs needs the permission \"Can start facilitation runs\" (ask staff).")
    cfg = _limits()
    live = FacilitationRun.objects.filter(room__owner=owner, state__in=LIVE).count()
    if live >= cfg["FACILITATION_MAX_CONCURRENT"]:
        raise StateConflict(f"You have {live} live facilitation runs; the limit is {cfg['FACILITATION_MAX_CONCURRENT']}. "
                            "End one first.", code="quota")
    day = timezone.now() - timedelta(days=1)
    today = FacilitationRun.objects.filter(room__owner=owner, created_at__gte=day).count()
    if today >= cfg["FACILITATION_DAILY_QUOTA"]:
        raise StateConflict(f"You started {today} facilitation runs in the last 24 hours; the quota is "
                            f"{cfg['FACILITATION_DAILY_QUOTA']}.", code="quota")
    limit, window = ratelimit.rate("facilitation_runs_user")
    if ratelimit.count("facilitation-runs", owner.pk, window) >= limit:
        raise StateConflict("Too many facilitation runs started recently; try again later.", code="throttled")


def do_create_run(owner, body: dict) -> Room:
    """A room of kind ``facilitation`` with its run (validated first; nothing written on bad input)."""
    now = timezone.now()
    errors = {}
    name, goal = body.get("name"), body.get("topic")
    if not isinstance(name, str) or not name.strip() or len(name) > limits.NAME:
        errors["name"] = [f"A name of 1 to {limits.NAME} characters."]
    if not isinstance(goal, str) or not goal.strip() or len(goal) > limits.TOPIC:
        errors["topic"] = [f"The goal: 1 to {limits.TOPIC} characters."]
    if errors:
        raise ValidationFailed("The facilitation run is not valid.", errors)
    try:
        slots = patterns.validate(body.get("pattern"), body.get("slots"))
    except patterns.PatternError as exc:
        raise ValidationFailed(str(exc), exc.details)
    report_to = _principals(body.get("report_to"))
    deadline = _deadline(body.get("deadline"), now)
    cfg = _limits()
    reminder = _int_field(body, "reminder_minutes", "reminderMinutes", 5, 7 * 24 * 60)
    ttl = _int_field(body, "ttl_hours", "ttlHours", 1, cfg["FACILITATION_MAX_TTL_HOURS"], cfg["FACILITATION_DEFAULT_TTL_HOURS"])
    ttl = min(ttl, cfg["FACILITATION_MAX_TTL_HOURS"])
    if deadline > now + timedelta(hours=ttl):
        raise ValidationFailed("The deadline is after the run expires.", {"deadline": [f"Within ttlHours ({ttl} h) from now."]})
    mode = body.get("mode", FacilitationRun.Mode.FACILITATE)
    if mode not in MODES:
        raise ValidationFailed("Unknown mode.", {"mode": [f"One of {', '.join(MODES)}."]})
    confirm_mode = body.get("confirm_mode", "named")
    if confirm_mode not in ("named", "initiator"):
        raise ValidationFailed("Unknown confirmMode.", {"confirmMode": ["named or initiator."]})
    disclose = body.get("disclose_report_to", True)
    if not isinstance(disclose, bool):
        raise ValidationFailed("discloseReportTo must be true or false.", {"discloseReportTo": ["true or false."]})
    interim = body.get("interim_reports", False)
    if not isinstance(interim, bool):
        raise ValidationFailed("interimReports must be true or false.", {"interimReports": ["true or false."]})
    moderator_id = body.get("moderator_id")
    facilitators = usable_by(Agent, owner).filter(is_facilitator=True)
    moderator = facilitators.filter(pk=moderator_id).first() if isinstance(moderator_id, int) else facilitators.order_by("id").first()
    if moderator_id is not None and (moderator is None or moderator.pk != moderator_id):
        raise ValidationFailed("Unknown facilitator.", {"moderatorId": [f"Unknown facilitator agent {moderator_id!r}."]})
    _check_allowed(owner)
    with transaction.atomic():
        room = Room.objects.create(name=name.strip(), topic=goal.strip(), kind=Room.Kind.FACILITATION, owner=owner,
                                   moderator=moderator)
        if moderator is not None:
            Seat.objects.create(room=room, agent=moderator, role=Seat.Role.FACILITATOR, position=0)
        run = FacilitationRun.objects.create(
            room=room, pattern=body["pattern"], slots=slots, artifact=patterns.empty_artifact(body["pattern"], slots),
            report_to=report_to, disclose_report_to=disclose, interim_reports=interim, mode=mode, confirm_mode=confirm_mode, deadline=deadline,
            reminder_minutes=reminder, ttl_hours=ttl, expires_at=now + timedelta(hours=ttl),
            join_code=secrets.token_urlsafe(12), initiator_user=owner, last_progress_at=now,
        )
        _audit("goals.create_run", room, owner, pattern=run.pattern, slots=slots, reportTo=report_to,
               deadline=deadline.isoformat(), ttlHours=ttl, origin=run.origin)
        record_event(room, EventType.STATUS, build.status(room))
        record_event(room, EventType.ARTIFACT, build.artifact(artifact_shape(run)))
    ratelimit.hit("facilitation-runs", owner.pk, ratelimit.rate("facilitation_runs_user")[1])
    return room


def _locked(room_id: int) -> tuple[Room, FacilitationRun]:
    room = Room.objects.select_for_update().get(pk=room_id)
    return room, FacilitationRun.objects.select_for_update().get(room=room)


def already_read(room_id: int, seq: int) -> bool:
    return Invocation.objects.filter(room_id=room_id, component="goals.read_message", input__seq=seq).exists()


def do_read_message(room_id: int, speaker: str, text: str, roster: list[str] | None = None, *,
                    addressed: bool = False, seq: int | None = None, changes: list | None = None,
                    via: str = "rules") -> dict:
    """Apply what one person said to the artifact (rehearsal rules) and answer as the floor allows:
    the status shown in place when the artifact changed, a mediation on a conflict, a request for
    confirmation once the machine check passes, the closing and the reports when it is confirmed.
    ``changes`` come from a model's tool call (``extraction``); without them the rehearsal rules
    read the text. With ``seq`` (the turn's), a turn is read once however often it is offered.
    Returns ``{"changed", "conflicts", "confirmed", "completed"}``."""
    out = {"changed": False, "conflicts": [], "confirmed": False, "completed": False}
    with transaction.atomic():
        room, run = _locked(room_id)
        if run.is_terminal or run.mode != FacilitationRun.Mode.FACILITATE:
            return out
        if seq is not None and already_read(room_id, seq):
            return out
        if changes is None:
            changes = rules.read(run.pattern, run.slots, run.artifact, speaker, text, roster)
        else:  # read by a model from the artifact as it was: a role taken meanwhile is a conflict, not an overwrite
            holders = run.artifact.get("roles", {})
            changes = [rules.Conflict(c.role, holders[c.role], c.person)
                       if isinstance(c, rules.Assign) and holders.get(c.role) not in (None, c.person) else c
                       for c in changes]
        if not changes:
            if seq is not None:
                _audit("goals.read_message", room, speaker=speaker, seq=seq, changes=[], version=run.artifact_version,
                       state=run.state, via=via)
            return out
        new, changed = rules.apply(run.pattern, run.artifact, changes)
        out["conflicts"] = [c for c in changes if isinstance(c, rules.Conflict)]
        if changed:
            run.artifact = new
            run.artifact_version += 1
            run.confirmations = []  # a changed artifact needs confirming again
            run.last_progress_at = timezone.now()
        confirms = [c.person for c in changes if isinstance(c, rules.Confirm)]
        check = patterns.check(run.pattern, run.slots, run.artifact)
        if confirms and check.done:
            for person in confirms:
                if person.lower() not in {c.lower() for c in run.confirmations}:
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
            room.save(update_fields=["status", "ended_at", "updated_at"])
            record_event(room, EventType.STATUS, build.status(room))
            out["completed"] = True
        out["changed"] = changed
        run.save()
        if out["completed"]:
            _close_and_report(room, run, completed=True)
        elif changed or out["conflicts"] or out["confirmed"]:
            _react(room, run, out, addressed=addressed)
        _audit("goals.read_message", room, speaker=speaker, seq=seq, via=via, changes=[type(c).__name__ for c in changes],
               version=run.artifact_version, state=run.state)
        if changed or out["confirmed"] or out["completed"]:
            record_event(room, EventType.ARTIFACT, build.artifact(artifact_shape(run)))
    return out


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

def run_info(run: FacilitationRun, room: Room) -> texts.RunInfo:
    return texts.RunInfo(facilitator=room.moderator.name if room.moderator_id else "The facilitator", goal=room.topic,
                         pattern=run.pattern, slots=run.slots, deadline=run.deadline.strftime("%Y-%m-%d %H:%M UTC"),
                         report_to=list(run.report_to), disclose_report_to=run.disclose_report_to, mode=run.mode,
                         initiator=run.initiator_name or None)


def _say(room: Room, text: str, purpose: str) -> Observation:
    """The facilitator's message in the room, as a turn (the caller holds the room's lock).

    Linked chats receive it through the relay of room turns."""
    from rooms.events import next_seq

    seat = room.seats.filter(role=Seat.Role.FACILITATOR).first()
    seq = next_seq(room)
    obs = Observation.objects.create(
        room=room, seq=seq, round=room.round, seat=seat, author_name=seat.display_name if seat else "Facilitator",
        author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.MESSAGE, content=text,
        data={"purpose": purpose})
    record_event(room, EventType.TURN, build.turn(obs, role=Seat.Role.FACILITATOR), seq=seq)
    queue_relay(room, obs)  # to every linked chat
    return obs


def _floor_allows(room: Room, moment: floor.Moment) -> bool:
    """At most ``FACILITATION_MESSAGES_PER_MINUTE`` facilitator messages a minute, only at a moment worth speaking."""
    now = timezone.now()
    recent = Observation.objects.filter(room=room, author_kind=Observation.AuthorKind.FACILITATOR,
                                        created_at__gte=now - timedelta(minutes=1)).values_list("created_at", flat=True)
    return floor.may_speak(moment, [(t - now).total_seconds() for t in recent], per_minute=_limits()["FACILITATION_MESSAGES_PER_MINUTE"])


def _show_status(room: Room, run: FacilitationRun) -> list[Delivery]:
    """The artifact in place in every linked chat: one message edited (Telegram), one card updated (Teams)."""
    check = patterns.check(run.pattern, run.slots, run.artifact)
    text = texts.board(run_info(run, room), run.artifact, check.missing, run.state)
    chats = [link.chat for link in ChatLink.objects.filter(room=room, active=True).select_related("chat")]
    return [queue_status(chat, text, room=room) for chat in chats if chat.bot_present]


def _react(room: Room, run: FacilitationRun, out: dict, addressed: bool = False) -> None:
    """After a message changed something: show the artifact in place; speak only when it is worth it."""
    if out["changed"]:
        _show_status(room, run)
    moment = floor.Moment(now=0.0, addressed=addressed, artifact_changed=out["changed"] or bool(out["conflicts"]))
    if not _floor_allows(room, moment):
        return
    for c in out["conflicts"][:1]:
        _say(room, texts.conflict(c.role, c.holder, c.claimant), "conflict")
        return
    if out["changed"] and run.state == FacilitationRun.State.CONFIRMING:
        people = patterns.confirmers(run.pattern, run.artifact, run.initiator_name or None, run.confirm_mode)
        _say(room, texts.ask_confirmation(run.pattern, run.artifact, people), "confirmation")


def _close_and_report(room: Room, run: FacilitationRun, *, completed: bool, reason: str = "") -> None:
    """The closing in the room, then the report to each principal, resolved now (the caller holds the locks).

    The minutes (.docx) go with each report; a principal nobody can be reached at is a visible
    diagnostic in the room, addressed to the initiator."""
    info = run_info(run, room)
    if run.mode == FacilitationRun.Mode.FACILITATE:
        report = texts.report(info, run.artifact, completed, run.confirmations, reason)
        _say(room, texts.closing(info, completed, reason) + "\n" + report, "closing")
    else:  # record / timekeep: the minutes are the result
        people = Observation.objects.filter(room=room, author_kind=Observation.AuthorKind.HUMAN)
        report = texts.minutes_report(info, people.count(), sorted(set(people.values_list("author_name", flat=True))))
        _say(room, texts.closing_without_steering(info, reason or "stopped"), "closing")
    _show_status(room, run)
    attachment = {"kind": "run_minutes", "roomId": room.pk, "filename": f"minutes-{room.pk}.docx"}
    problems = []
    for principal in run.report_to:
        for delivery in queue_direct(principal, report, room=room, attachment=attachment):
            if delivery.status == Delivery.Status.UNDELIVERABLE:
                problems.append(f"{principal}: {delivery.diagnostic}")
    if problems:
        who = f"{run.initiator_name}, " if run.initiator_name else ""
        _say(room, f"{who}I could not deliver the report to everyone: " + " ".join(problems), "report-diagnostic")
    _audit("goals.report", room, completed=completed, reportTo=run.report_to, problems=problems)


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
        _say(room, texts.handshake(run_info(run, room)), "handshake")
        _show_status(room, run)
        _audit("goals.open_run", room, initiator_user, initiator=run.initiator_name, initiatorKey=run.initiator_key)
    return run


def do_say_status(room_id: int) -> Observation:
    """``/facilitator status``: the truth about the run, at any time."""
    with transaction.atomic():
        room, run = _locked(room_id)
        check = patterns.check(run.pattern, run.slots, run.artifact)
        obs = _say(room, texts.status(run_info(run, room), run.artifact, check.missing, run.state), "status")
        _audit("goals.status", room)
    return obs


def do_stop_run(room_id: int, user=None, reason: str = "stopped by the owner",
                state: str = FacilitationRun.State.STOPPED) -> FacilitationRun:
    """Stop (or fail, at the deadline) a live run: a closing message with the partial result in the room, then the end."""
    with transaction.atomic():
        room, run = _locked(room_id)
        if run.is_terminal:
            raise StateConflict(f"The run is already {run.state}.", code="invalid_transition")
        _close_and_report(room, run, completed=False, reason=reason)
        return do_end_run(room_id, state, reason, user)


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
            _say(room, texts.time_check(left, run_info(run, room).deadline), "time-check")
            run.last_reminder_at = now
            run.save(update_fields=["last_reminder_at"])
            _audit("goals.time_check", room, minutesLeft=left)
            return True
        check = patterns.check(run.pattern, run.slots, run.artifact)
        missing = check.missing or [f"confirmation from {', '.join(patterns.confirmers(run.pattern, run.artifact, run.initiator_name or None, run.confirm_mode))}"]
        spoke = set(Observation.objects.filter(room=room, author_kind=Observation.AuthorKind.HUMAN).values_list("author_name", flat=True))
        named = patterns.named_people(run.pattern, run.artifact)
        silent = [p for p in named if p not in spoke]
        _say(room, texts.nudge(missing, silent), "reminder")
        if run.interim_reports:  # the principal hears how it stands, resolved now like the report
            interim = texts.interim(run_info(run, room), run.artifact, missing)
            for principal in run.report_to:
                queue_direct(principal, interim, room=room)
        run.last_reminder_at = now
        run.save(update_fields=["last_reminder_at"])
        _audit("goals.remind", room, missing=missing, silent=silent)
    return True


def do_end_at_deadline(room_id: int) -> FacilitationRun:
    """The deadline passed: a facilitated run fails with its partial result; a run that only took
    minutes or kept time is complete (its minutes are the result)."""
    run = FacilitationRun.objects.get(room_id=room_id)
    if run.mode == FacilitationRun.Mode.FACILITATE:
        return do_stop_run(room_id, reason="the deadline passed without a confirmed result", state=FacilitationRun.State.FAILED)
    return do_stop_run(room_id, reason="the time is up", state=FacilitationRun.State.COMPLETED)


def stalled_runs() -> list[int]:
    return list(FacilitationRun.objects.filter(state__in=(FacilitationRun.State.ACTIVE, FacilitationRun.State.CONFIRMING),
                                               reminder_minutes__isnull=False).values_list("room_id", flat=True))
