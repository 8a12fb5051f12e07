"""Run one step of any room: claim its lease, ask the room kind's planner, run the step's handler.

Celery (``facilitation.tasks``) and the in-process driver of ``run_discussion`` both drive
rooms through ``run_step``; only the scheduling of the next step differs.
"""
import logging

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from facilitation.runs import calls, leases, registry
from facilitation.runs.registry import StepResult, StepRun
from rooms import quiet

log = logging.getLogger("convene.engine")


def lease_seconds() -> float:
    """How long a claim holds before somebody else may take the slot (extended while a call runs):
    ``CONVENE["STEP_LEASE"]`` when set, else the longest model timeout plus ``LEASE_MARGIN``."""
    if settings.CONVENE.get("STEP_LEASE"):
        return float(settings.CONVENE["STEP_LEASE"])
    participant, facilitator = calls.timeouts()
    return max(participant, facilitator) + settings.CONVENE["LEASE_MARGIN"]


def run_step(room_id: int, step_seq: int, provider_override: str = "", slot: int = 0) -> StepResult:
    """Run slot ``slot`` of the room's step ``step_seq`` if it can be claimed; ``provider_override``
    forces one model provider."""
    lease = lease_seconds()
    try:  # what the claim knew unchanged (``rooms.quiet.steady``) holds until the step has planned
        claimed = leases.claim_step(room_id, step_seq, lease, slot, may_run=_may_run)
        if claimed is None:
            return StepResult("not_claimable")
        claim, room = claimed
        planned = registry.planner_for(room.kind)(room)
    finally:
        quiet.planned(connections[DEFAULT_DB_ALIAS], room_id)
    if planned is None:
        leases.release_claim(claim)
        return StepResult("not_claimable", step="concluded")
    step = registry.slot_step(planned.step, claim.slot, claim.slots)
    runs_in = registry.runs_in(step)
    if room.status not in runs_in:  # e.g. a workspace agent's slot while the room is paused: no attempt used
        leases.give_back(claim)
        return StepResult("not_claimable", step=step.kind)
    run = StepRun(claim=claim, room=room, step=step, context=planned.context, provider_override=provider_override,
                  lease=lease, holds_in=tuple(dict.fromkeys((*leases.RUNNING, *runs_in))))
    try:
        return registry.handler_for(step.kind)(run)
    except calls.Abandoned:
        leases.release_claim(claim)
        log.info("room %s step %s abandoned", room_id, step_seq)
        return StepResult("abandoned", step=step.kind)


def _may_run(room) -> bool:
    return room.status in registry.claims_in(room.kind)
