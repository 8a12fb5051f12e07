"""Swapping the persona or role an agent seat works with, mid-room.

Each (agent, persona) pair keeps its own adaptation: swapping to a persona makes sure its row
exists, and swapping back finds the old one untouched.

A swap pushes one ``discussion:participant`` event and leaves an invocation per thing swapped:
``manager.swap_persona`` for the persona, ``manager.swap_role`` for the role it works in.
"""
from django.db import transaction

from facilitation.workspace import inputs
from facilitation.workspace.actions.adaptation import adaptation_for
from facilitation.workspace.audit import log_invocation
from facilitation.workspace.payloads import seat_payload
from facilitation.workspace.rules import correlation_of, locked, require_open
from rooms.actions.catalog import usable_by
from rooms.actions.rooms import work_role_refusal
from rooms.errors import NotFound, StateConflict, ValidationFailed
from rooms.events import EventType, record_event
from rooms.models import Persona, Role, Room, Seat

EVENT = EventType.PARTICIPANT
# The invocation each swap leaves (its audit row's component), by the field that asks for it: a PATCH that
# swaps both leaves one of each, in one correlation, with the same before and after. One event either way.
SWAPS = (("persona_id", "manager.swap_persona"), ("role_id", "manager.swap_role"))


def do_swap_seat(room: Room, seat_id: int, user, **fields) -> Seat:
    with transaction.atomic():
        room = locked(room)
        require_open(room)
        seat = Seat.objects.select_for_update(of=("self",)).filter(pk=seat_id, room=room).select_related("agent").first()
        if seat is None or seat.role == Seat.Role.FACILITATOR:
            raise NotFound("No such participant seat in this room.")
        errors = inputs.Errors()
        for key in sorted(k for k in fields if k not in ("persona_id", "role_id", "version")):
            errors.add(key, "Unknown or read-only field.")
        version = inputs.version(fields.get("version"), errors)
        persona = role = None
        if "persona_id" in fields:
            pid = inputs.optional_id(fields["persona_id"], "personaId", errors)
            persona = usable_by(Persona, user).filter(pk=pid, is_facilitator=False).first() if pid else None
            if pid and persona is None:
                errors.add("personaId", "Unknown persona (or a facilitator's).")
        if "role_id" in fields:
            rid = inputs.optional_id(fields["role_id"], "roleId", errors)
            role = usable_by(Role, user).filter(pk=rid).first() if rid else None
            if rid and role is None:
                errors.add("roleId", "Unknown role.")
            elif role is not None and (refusal := work_role_refusal(role)):
                errors.add("roleId", refusal)
        errors.raise_if_any("The swap is not valid.")
        if "persona_id" not in fields and "role_id" not in fields:
            raise ValidationFailed("Nothing to change.", {"body": ["Send personaId or roleId with the version."]})
        if seat.agent_id is None:
            raise StateConflict("Only agent seats carry a persona and a role.", code="not_agent")
        if version != seat.version:
            raise StateConflict("This participant changed meanwhile; reload and try again.",
                                {"yourVersion": version, "current": seat_payload(seat)}, code="stale_version")
        before = seat_payload(seat)
        if "persona_id" in fields:
            seat.persona = persona
        if "role_id" in fields:
            seat.work_role = role
        seat.version += 1
        seat.save(update_fields=["persona", "work_role", "version"])
        adaptation_for(room, seat)
        after = seat_payload(seat)
        record_event(room, EVENT, {"participant": after})
        correlation = correlation_of(room)
        for field, component in SWAPS:
            if field in fields:
                log_invocation(room, component, correlation=correlation, user=user,
                               input={"seatId": seat.pk, "before": before, "after": after}, output=f"{seat.agent.name}")
    return seat
