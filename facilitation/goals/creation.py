"""Creating a facilitation run: validated first (nothing written on bad input), behind a
permission, a per-user rate limit, a daily quota and a cap on live runs, with a bounded TTL."""
import re
import secrets
from datetime import datetime, timedelta, timezone as dt_timezone

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from facilitation.deliberation.names import name_problem, same_name
from facilitation.goals import patterns
from facilitation.goals.shapes import artifact_shape
from rooms import limits, ratelimit
from rooms.audit import record
from rooms.errors import Forbidden, StateConflict, ValidationFailed
from rooms.events import EventType, build, record_event
from rooms.models import Agent, FacilitationRun, Room, Seat
from rooms.queries import usable_by

PERMISSION = "rooms.start_facilitation_run"
MODES = FacilitationRun.Mode.values
LIVE = FacilitationRun.LIVE


def _limits() -> dict:
    return settings.CONVENE


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


UNKNOWN_RECIPIENT = 'No active user by that name can receive the report: "user:<username>" names a Convene user.'


def _check_recipients(report_to: list[str]) -> None:
    """``report_to`` as sent (checked by ``_principals``, so the indexes are the caller's). A ``user:`` target must
    name an active user: anyone else could never receive the report. Unknown and deactivated users get the same
    answer (nothing about who exists leaks), and only callers who may create runs get it. What may yet be reached
    when the report is sent is accepted: a user without a chat account (they may link one) and a role, resolved to
    its holders at that moment."""
    names = {p.partition(":")[2] for p in report_to if p.startswith("user:")}
    known = set(get_user_model().objects.filter(username__in=names, is_active=True).values_list("username", flat=True))
    for i, p in enumerate(report_to):
        kind, _, name = p.partition(":")
        if kind == "user" and name not in known:
            raise ValidationFailed(f"reportTo[{i}] names no user who can receive the report.", {f"reportTo[{i}]": [UNKNOWN_RECIPIENT]})


# A deadline without an offset is read as UTC (documented in docs/facilitation-runs.md and the API schema), so
# what the errors ask for says so rather than demanding an offset the API does not require.
DEADLINE_FORMAT = ("An ISO 8601 date-time, e.g. 2026-12-01T17:00:00Z or 2026-12-01T18:00:00+01:00; one without an "
                   "offset (2026-12-01T17:00:00) is read as UTC.")


_TIME_PART = re.compile(r"[Tt ]\d")


def _deadline(value, now: datetime) -> datetime:
    if value is None or value == "":
        raise ValidationFailed("deadline is required.", {"deadline": [DEADLINE_FORMAT]})
    try:
        # A date alone (2026-12-01, 20261201) is no moment: read as midnight it would end the run a day early.
        has_time = isinstance(value, str) and _TIME_PART.search(value.strip()) is not None
        parsed = parse_datetime(value.strip()) if has_time else None
    except ValueError:  # well formed but no such moment (2026-02-30T10:00Z)
        parsed = None
    if parsed is None:
        raise ValidationFailed("deadline must be an ISO 8601 date-time, e.g. 2026-12-01T17:00:00Z (one without an offset "
                               "is read as UTC).", {"deadline": [DEADLINE_FORMAT]})
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, dt_timezone.utc)  # a deadline without an offset is read as UTC
    if parsed <= now:
        raise ValidationFailed("The deadline has passed.", {"deadline": ["Must be in the future."]})
    return parsed


def _int_field(body: dict, key: str, api: str, lo: int, hi: int, default=None):
    value = body.get(key)
    if value is None:  # absent or null: the default
        return default
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
    if not isinstance(name, str) or not same_name(name) or len(name) > limits.NAME:
        errors["name"] = [f"A name of 1 to {limits.NAME} characters."]
    elif problem := name_problem(name.strip()):
        errors["name"] = [problem]
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
    _check_recipients(body.get("report_to") or [])
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
        record("goals.create_run", room=room, user=owner, data={
            "pattern": run.pattern, "slots": slots, "reportTo": report_to, "deadline": deadline.isoformat(),
            "ttlHours": ttl, "origin": run.origin})
        record_event(room, EventType.STATUS, build.status(room))
        record_event(room, EventType.ARTIFACT, build.artifact(artifact_shape(run)))
    ratelimit.hit("facilitation-runs", owner.pk, ratelimit.rate("facilitation_runs_user")[1])
    return room
