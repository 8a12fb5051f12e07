"""Driving a room's steps in this process, without workers (``run_discussion``, tests, benchmarks)."""
import time

from facilitation.runs.leases import current, waiting
from facilitation.runs.registry import StepResult
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import driving, inline
from rooms.models import Room


def drive_inline(room_id: int, on_step=None, max_steps: int = 500, provider: str = "") -> Room:
    """Run a room's steps until it is no longer active; ``provider`` forces one model provider for every call.
    Each commit hands the next step's claim on to this loop (``scheduling.driving``)."""
    with driving():
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


def run_ready(room_id: int, provider: str = "", max_steps: int = 100) -> list[StepResult]:
    """Run every slot of the room's current step that can run now, then those of the steps that
    opens, until nothing more can (a workspace: its agents, a close, the next round's agents; a
    round's clock waits for its time). What ran, in order."""
    ran: list[StepResult] = []
    with inline():
        for _ in range(max_steps):
            found = waiting(room_id)
            if found is None:
                break
            step_seq, slots = found
            results = [run_step(room_id, step_seq, provider_override=provider, slot=slot) for slot, _ in slots]
            ran += [r for r in results if r.outcome != "not_claimable"]
            if all(r.outcome == "not_claimable" for r in results):
                break
    return ran
