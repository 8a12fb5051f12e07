"""The minutes of a facilitation run as .docx: goal, definition of done, participants, how the
result was reached (the decisive moments), insights raised, the final artifact and its
confirmations, and what stayed open. Works on a live run and on the protocol a reaped run left."""
import io
import re
from datetime import timezone as dt_timezone

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from facilitation.deliberation.literal import plain_text
from facilitation.exports.docx import new_document
from facilitation.goals import patterns, texts
from rooms.models import FacilitationRun, Observation, Room, RoomEvent

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _clean(text) -> str:
    return _CONTROL.sub("", str(text or ""))


def _when(iso) -> str:
    """A deadline as people read it: "26 Nov 2026, 13:50 UTC" (the protocol keeps it in ISO 8601)."""
    moment = parse_datetime(str(iso or ""))
    if moment is None:
        return str(iso or "none")
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, dt_timezone.utc)
    return moment.astimezone(dt_timezone.utc).strftime("%d %b %Y, %H:%M UTC").lstrip("0")


def run_facts(room: Room) -> dict:
    """The run's facts from its row, or from the protocol kept after reaping."""
    run = FacilitationRun.objects.filter(room=room).first()
    if run is not None:
        return {"pattern": run.pattern, "slots": run.slots, "artifact": run.artifact, "confirmedBy": run.confirmations,
                "state": run.state, "reportTo": run.report_to, "deadline": run.deadline.isoformat(),
                "endReason": run.end_reason}
    return dict((room.engine_state or {}).get("facilitationProtocol") or {})


def render_run_minutes(room: Room) -> bytes:
    facts = run_facts(room)
    pattern, slots, artifact = facts.get("pattern", "list"), facts.get("slots") or {"min": 1}, facts.get("artifact") or {}
    check = patterns.check(pattern, slots, artifact) if facts else patterns.Check(False, ["no run data"])
    doc = new_document(_clean(room.name), _clean(plain_text(room.topic)))
    doc.add_heading(_clean(f"Minutes: {room.name}"), level=0)
    doc.add_paragraph(_clean(f"Goal: {room.topic}"))
    if facts:
        doc.add_paragraph(_clean(f"Definition of done: {texts.definition_of_done(pattern, slots)}."))
        doc.add_paragraph(_clean(f"Deadline: {_when(facts.get('deadline'))}. Result to: {texts.readable_targets(facts.get('reportTo') or []) or 'nobody'}."))
        doc.add_paragraph(_clean(f"Outcome: {facts.get('state')}" + (f" ({facts['endReason']})" if facts.get("endReason") else "")))
    human = list(Observation.objects.filter(room=room, author_kind=Observation.AuthorKind.HUMAN).order_by("seq"))
    people = []
    for name in [*patterns.named_people(pattern, artifact), *(o.author_name for o in human)]:
        if name and name not in people:
            people.append(name)
    doc.add_heading("Participants", level=1)
    doc.add_paragraph(_clean(", ".join(people) or "(nobody spoke)"))
    doc.add_heading("How the result was reached", level=1)
    moments = RoomEvent.objects.filter(room=room, type="discussion:artifact").order_by("seq")
    last = None
    for event in moments:
        shape = event.payload.get("artifact", {})
        summary = texts.artifact_text(pattern, {k: v for k, v in shape.items() if k in ("roles", "choice", "proposals", "items")})
        line = f"{event.created_at:%Y-%m-%d %H:%M} (v{shape.get('version', 0)}, {shape.get('state', '')}): {summary.replace(chr(10), '; ')}"
        if line != last:
            doc.add_paragraph(_clean(line), style="List Bullet")
            last = line
    insights = [(o.author_name, m) for o in human for m in (o.markers or []) if m.get("type") in ("question", "concern", "decision")]
    doc.add_heading("Insights raised", level=1)
    for who, marker in insights:
        doc.add_paragraph(_clean(f"{marker['type'].capitalize()} ({who}): {marker.get('text', '')}"), style="List Bullet")
    if not insights:
        doc.add_paragraph("(none marked)")
    doc.add_heading("Final result", level=1)
    doc.add_paragraph(_clean(texts.artifact_text(pattern, artifact)))
    doc.add_paragraph(_clean(f"Confirmed by: {', '.join(facts.get('confirmedBy') or []) or 'nobody yet'}"))
    doc.add_heading("Still open", level=1)
    doc.add_paragraph(_clean("; ".join(check.missing) or "nothing"))
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()
