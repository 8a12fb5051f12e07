"""Send again the slots of active rooms whose lease expired or that nobody picked up."""
from facilitation.runs import leases, scheduling


def sweep(stale_seconds: float = 15.0) -> int:
    """Re-send every stranded slot; the number sent. Duplicates are harmless: one claim wins."""
    count = 0
    for room_id, step_seq, slot in leases.stranded(stale_seconds):
        scheduling.send_step(room_id, step_seq, slot=slot)
        count += 1
    return count
