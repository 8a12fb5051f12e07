"""Send again the slots of rooms whose lease expired or that nobody picked up.

Active rooms' slots are sent as they are found. A room in another status (a paused workspace
writes its round's narrative; so does one whose scope closed) has its slot sent only when the
room's planner says the slot's step runs in that status: a paused room's other steps wait for the
resume, which sends them itself.
"""
from facilitation.runs import leases, registry, scheduling
from rooms.models import Room


def sweep(stale_seconds: float = 15.0) -> int:
    """Re-send every stranded slot; the number sent. Duplicates are harmless: one claim wins."""
    found = leases.stranded(stale_seconds)
    others = tuple(registry.statuses_claimed() - set(leases.ACTIVE))
    if others:
        found += _runs_now(leases.stranded(stale_seconds, others))
    for room_id, step_seq, slot in found:
        scheduling.send_step(room_id, step_seq, slot=slot)
    return len(found)


def _runs_now(slots: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The slots whose step runs in its room's present status (asked of the room kind's planner, once per room)."""
    rooms = {room.pk: room for room in Room.objects.filter(pk__in={room_id for room_id, _, _ in slots})}
    plans: dict = {}
    kept = []
    for room_id, step_seq, slot in slots:
        room = rooms.get(room_id)
        if room is None or room.status not in registry.claims_in(room.kind):
            continue
        if room_id not in plans:
            planned = registry.planner_for(room.kind)(room)
            plans[room_id] = (planned.step, leases.current(room_id).slots) if planned is not None else None
        if plans[room_id] is None:
            continue
        step, count = plans[room_id]
        if room.status in registry.runs_in(registry.slot_step(step, slot, count)):
            kept.append((room_id, step_seq, slot))
    return kept
