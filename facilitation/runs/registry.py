"""Which code runs a room's next step.

A room kind registers a *planner*: given the claimed room, it returns the step to run
(an object with a ``kind``) or ``None`` when there is nothing to do. Each step kind
registers a *handler*: ``handler(run) -> StepResult``, where ``run`` is a ``StepRun``
holding the claim, the room, the step and whatever the planner loaded.

Two optional attributes of a planned step:

- ``runs_in``: the room statuses in which the step may run and its lease holds (default: it is
  claimed while the room is active and may finish while it is paused). A room kind whose steps
  run in other statuses says so when it registers its planner (``claims_in``).
- ``for_slot(slot, slots)``: for a step whose slots do different work (a workspace round: one
  slot per agent, the last one its clock), the step that slot runs.

Registration happens at app start (``FacilitationConfig.ready``); the runner never
changes when a room kind or step kind is added.
"""
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from django.db import InterfaceError, OperationalError, connection

from facilitation.runs.leases import ACTIVE, RUNNING, Claim, extend, still_ours

log = logging.getLogger("convene.engine")


@dataclass
class StepResult:
    outcome: str  # committed | not_claimable | lost_lease | abandoned | retry | missing
    retry_in: float = 0.0
    step: str = ""


@dataclass(frozen=True)
class Planned:
    """A planner's answer: the step and what it loaded to decide it (handed on to the handler)."""

    step: Any
    context: Any = None


@dataclass
class StepRun:
    """One claimed step, as its handler receives it."""

    claim: Claim
    room: Any
    step: Any
    context: Any = None
    provider_override: str = ""
    extra: dict = field(default_factory=dict)
    lease: float = 0.0  # the lease's length in seconds; 0: no heartbeats
    holds_in: tuple = RUNNING  # the room statuses in which the lease holds
    _next_beat: float = field(default=0.0, repr=False)

    def __post_init__(self):
        self._next_beat = time.monotonic() + self.lease / 3 if self.lease else float("inf")

    def abandoned(self) -> bool:
        """The lease is gone (a stop or a forced conclusion): the work in flight should stop.

        Called every poll while a call runs; every third of the lease's length it extends the
        lease instead of only checking it (a heartbeat), so a lease can be short and a dead
        worker's slot is taken over soon, however long the model may take.
        """
        try:
            if time.monotonic() >= self._next_beat:
                self._next_beat = time.monotonic() + self.lease / 3
                return not extend(self.claim, self.lease, self.holds_in)
            return not still_ours(self.claim, self.holds_in)
        except (OperationalError, InterfaceError):
            # The database is away (a restart): nobody can take the lease meanwhile, so the call goes
            # on; its commit checks the lease as always. The broken connection is opened anew at the next check.
            log.warning("room %s step %s: the lease check met a database error; the call goes on",
                        self.claim.room_id, self.claim.step_seq, exc_info=True)
            if not connection.in_atomic_block:
                connection.close()
            return False


class Planner(Protocol):
    def __call__(self, room) -> Planned | None: ...


Handler = Callable[[StepRun], StepResult]

_planners: dict[str, Planner] = {}
_claims_in: dict[str, tuple] = {}
_handlers: dict[str, Handler] = {}


def register_planner(room_kind: str, planner: Planner, claims_in: tuple = ACTIVE) -> None:
    """``claims_in``: the room statuses in which a slot of this kind of room may be claimed at all
    (each step narrows it with its ``runs_in``)."""
    _planners[room_kind] = planner
    _claims_in[room_kind] = tuple(claims_in)


def claims_in(room_kind: str) -> tuple:
    return _claims_in.get(room_kind, ACTIVE)


def statuses_claimed() -> set:
    """Every room status in which some kind of room claims steps (the sweeper looks at those rooms)."""
    return {status for statuses in _claims_in.values() for status in statuses} | set(ACTIVE)


def slot_step(step, slot: int, slots: int):
    """What slot ``slot`` of a planned step runs: the step itself, or the part its ``for_slot`` gives."""
    return step.for_slot(slot, slots) if hasattr(step, "for_slot") else step


def runs_in(step) -> tuple:
    """The room statuses in which ``step`` runs (see the module's docstring)."""
    return tuple(getattr(step, "runs_in", ACTIVE))


def register_handler(step_kind: str, handler: Handler) -> None:
    _handlers[step_kind] = handler


def planner_for(room_kind: str) -> Planner:
    try:
        return _planners[room_kind]
    except KeyError:
        raise LookupError(f"No planner registered for rooms of kind {room_kind!r}.") from None


def handler_for(step_kind: str) -> Handler:
    try:
        return _handlers[step_kind]
    except KeyError:
        raise LookupError(f"No handler registered for steps of kind {step_kind!r}.") from None


def registered() -> dict[str, list[str]]:
    """What is registered, for the docs and the tests."""
    return {"planners": sorted(_planners), "handlers": sorted(_handlers)}
