"""The manager edits a round's narrative; a stale version is refused with both texts."""
from django.db import transaction
from django.utils import timezone

from facilitation.workspace import inputs
from facilitation.workspace.audit import log_invocation
from facilitation.workspace.payloads import narrative_payload
from facilitation.workspace.rules import locked, require_open
from rooms.errors import NotFound, StateConflict, ValidationFailed
from rooms.events import EventType, record_event
from rooms.models import Narrative, Observation, Room

EVENT = EventType.NARRATIVE


def _check(room: Room, fields: dict) -> dict:
    errors = inputs.Errors()
    allowed = ("content", "key_decisions", "blockers", "next_steps", "version")
    for key in sorted(k for k in fields if k not in allowed):
        errors.add(key, "Unknown or read-only field.")
    clean = {"version": inputs.version(fields.get("version"), errors)}
    if "content" in fields:
        clean["content"] = inputs.text(fields["content"], "content", errors, limit=inputs.NARRATIVE)
    if "key_decisions" in fields:
        clean["key_decisions"] = inputs.text_list(fields["key_decisions"], "keyDecisions", errors)
    if "next_steps" in fields:
        clean["next_steps"] = inputs.text_list(fields["next_steps"], "nextSteps", errors)
    if "blockers" in fields:
        ids = inputs.id_list(fields["blockers"], "blockers", errors)
        if ids:
            found = set(Observation.objects.filter(room=room, pk__in=ids, event_type=Observation.EventType.BLOCKER)
                        .values_list("pk", flat=True))
            missing = [i for i in ids if i not in found]
            if missing:
                errors.add("blockers", f"Not blocker observations of this room: {missing}.")
        clean["blockers"] = ids
    errors.raise_if_any("The narrative edit is not valid.")
    if len(clean) == 1:
        raise ValidationFailed("Nothing to change.", {"body": ["Send content, keyDecisions, blockers or nextSteps with the version."]})
    return {k: v for k, v in clean.items() if v is not None}


def do_edit_narrative(room: Room, narrative_id: int, user, **fields) -> Narrative:
    with transaction.atomic():
        room = locked(room)
        require_open(room)
        narrative = Narrative.objects.select_for_update().filter(pk=narrative_id, room=room).first()
        if narrative is None:
            raise NotFound("No such narrative in this room.")
        clean = _check(room, fields)
        version = clean.pop("version")
        if version != narrative.version:
            raise StateConflict(
                "The narrative changed meanwhile: compare your text with the current one and save again.",
                {"yourVersion": version, "current": narrative_payload(narrative)}, code="stale_version")
        before = {k: getattr(narrative, k) for k in ("content", "key_decisions", "blockers", "next_steps")}
        for name, value in clean.items():
            setattr(narrative, name, value)
        narrative.version += 1
        narrative.edited_by = user
        narrative.edited_at = timezone.now()
        narrative.save()
        after = {k: getattr(narrative, k) for k in before}
        record_event(room, EVENT, {"narrative": narrative_payload(narrative)})
        log_invocation(room, "manager.edit_narrative", correlation=narrative.correlation_id, user=user,
                       input={"narrativeId": narrative.pk, "round": narrative.round, "version": narrative.version,
                              "before": before, "after": after},
                       output=narrative.content[:2000])
    return narrative
