"""Driving a room's steps in this process, without workers (``run_discussion``, tests, benchmarks)."""
import time

from facilitation.runs.leases import current
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline
from rooms.models import Room


def drive_inline(room_id: int, on_step=None, max_steps: int = 500, provider: str = "") -> Room:
    """Run a room's steps until it is no longer active; ``provider`` forces one model provider for every call."""
    with inline():
        for _ in range(max_steps):
            room = Room.objects.get(pk=room_id)
            if room.status != Room.Status.ACTIVE:
                return room
            step = current(room_id)
            results = [run_step(room_id, step.step_seq, provider_override=provider, slot=slot) for slot in range(step.slots)]
            if any(r.outcome == "retry" for r in results):
                time.sleep(max(r.retry_in for r in results))
            elif all(r.outcome == "not_claimable" for r in results):
                time.sleep(0.05)
            if on_step:
                for result in results:
                    on_step(result)
    return Room.objects.get(pk=room_id)
