"""Leases on the slots of a room's current step: who may run it, and commit it.

A room's current step has one **slot** per concurrent call (one for a discussion turn, one per
agent of a workspace round), each a ``StepLease`` row. ``claim_step`` takes a slot's lease with
one conditional UPDATE; the work (a model call) runs outside any transaction, checking
``still_ours`` and extending the lease (``extend``) as it goes; ``locked_if_ours`` / ``finish``
run inside the commit's transaction with the room's row locked and end the slot only if the
lease is still the caller's. When a step's last slot is done the next step opens. A redelivered,
duplicated or abandoned step therefore never writes twice.
"""
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from facilitation.runs.models import StepLease
from rooms.models import Room

RUNNING = (Room.Status.ACTIVE, Room.Status.PAUSED)


@dataclass(frozen=True)
class Claim:
    room_id: int
    step_seq: int
    token: str
    attempt: int
    slot: int = 0
    slots: int = 1

    @property
    def correlation(self) -> str:
        """Links the rows one attempt at this slot wrote (its Invocation, its discarded calls)."""
        base = f"{self.room_id}:{self.step_seq}:{self.attempt}"
        return base if self.slots == 1 else f"{base}:{self.slot}"


@dataclass(frozen=True)
class OpenStep:
    """A step made ready: its seq, its slots (one task each) and when it may run."""

    step_seq: int
    slots: int = 1
    ready_at: datetime | None = None


def _ours(claim: Claim):
    return StepLease.objects.filter(room_id=claim.room_id, slot=claim.slot, step_seq=claim.step_seq, token=claim.token)


def claim_step(room_id: int, step_seq: int, lease_seconds: float, slot: int = 0) -> tuple[Claim, Room] | None:
    """Take the lease on one slot of a room's step; the claim and the room as claimed, or None.

    Claimable: the room is active, the slot belongs to ``step_seq`` and is not done, it is ready
    (``ready_at`` reached) and nobody holds an unexpired lease on it. The room's status is read
    with the room (a join in the UPDATE costs more than the rare give-back of a paused room's slot).
    """
    now = timezone.now()
    token = uuid.uuid4().hex
    taken = (
        StepLease.objects.filter(room_id=room_id, slot=slot, step_seq=step_seq, done=False)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .filter(Q(ready_at__isnull=True) | Q(ready_at__lte=now))
        .update(token=token, lease_until=now + timedelta(seconds=lease_seconds), attempt=F("attempt") + 1)
    )
    if not taken:
        return None
    found = list(StepLease.objects.select_related("room").filter(room_id=room_id, slot=slot, token=token)[:1])
    if not found:
        return None
    lease = found[0]
    if lease.room.status != Room.Status.ACTIVE:  # paused or ended: not claimable, and no attempt used
        StepLease.objects.filter(pk=lease.pk, token=token).update(token="", lease_until=None, attempt=F("attempt") - 1)
        return None
    return Claim(room_id=room_id, step_seq=step_seq, token=token, attempt=lease.attempt, slot=slot, slots=lease.slots), lease.room


def release_claim(claim: Claim) -> None:
    """Give the lease back without committing (a transient failure to retry, an abandoned call)."""
    _ours(claim).update(token="", lease_until=None)


def still_ours(claim: Claim) -> bool:
    """The lease holds: no stop or forced conclusion took the step away (a pause lets it finish)."""
    return _ours(claim).filter(room__status__in=RUNNING).exists()


def extend(claim: Claim, lease_seconds: float) -> bool:
    """Heartbeat: the lease now ends ``lease_seconds`` from now; False when it is no longer ours."""
    until = timezone.now() + timedelta(seconds=lease_seconds)
    return bool(_ours(claim).filter(room__status__in=RUNNING).update(lease_until=until))


@dataclass(frozen=True)
class Finished:
    """The slot is committed; ``next`` is the step opened when it was the step's last slot."""

    next: OpenStep | None


def finish(claim: Claim, *, next_slots: int = 1, ready_at: datetime | None = None) -> Finished | None:
    """End the claimed slot inside the commit's transaction (the caller holds the room's row lock).

    None when the lease is no longer ours: the caller writes nothing. When every slot of the step
    is done, the next step opens with ``next_slots`` slots, ready at ``ready_at`` (default: now);
    the caller sends it on commit (``scheduling.schedule_step``).
    """
    if claim.slots == 1 and claim.slot == 0 and next_slots == 1:
        # The common case in one statement: check the lease and open the next step.
        ready = ready_at or timezone.now()
        moved = _ours(claim).update(step_seq=claim.step_seq + 1, attempt=0, token="", lease_until=None,
                                    ready_at=ready, done=False)
        return Finished(OpenStep(claim.step_seq + 1, 1, ready)) if moved else None
    if not _ours(claim).update(done=True, token="", lease_until=None):
        return None
    if StepLease.objects.filter(room_id=claim.room_id, step_seq=claim.step_seq, done=False).exists():
        return Finished(None)
    return Finished(open_step(claim.room_id, slots=next_slots, ready_at=ready_at, step_seq=claim.step_seq + 1))


def locked_if_ours(claim: Claim, *, next_slots: int = 1, ready_at: datetime | None = None) -> Room | None:
    """Inside a commit's transaction: the room, row-locked, with the claimed slot finished
    (``finish``); None, with nothing written, when the lease is no longer the caller's."""
    room = Room.objects.select_for_update().filter(pk=claim.room_id).first()
    if room is None or room.status not in RUNNING:
        return None
    if finish(claim, next_slots=next_slots, ready_at=ready_at) is None:
        return None
    return room


def open_step(room_id: int, *, slots: int = 1, ready_at: datetime | None = None, step_seq: int | None = None) -> OpenStep:
    """Make a new step the room's current one; whatever step was in flight loses its lease.

    The caller holds the room's row lock (lifecycle actions, commits).
    """
    if slots < 1:
        raise ValueError("a step has at least one slot")
    if step_seq is None:
        current_seq = StepLease.objects.filter(room_id=room_id, slot=0).values_list("step_seq", flat=True).first()
        step_seq = (current_seq or 0) + 1
    existing = set(StepLease.objects.filter(room_id=room_id).values_list("slot", flat=True))
    missing = [StepLease(room_id=room_id, slot=s) for s in range(slots) if s not in existing]
    if missing:
        StepLease.objects.bulk_create(missing)
    ready = ready_at or timezone.now()
    StepLease.objects.filter(room_id=room_id).update(
        step_seq=step_seq, slots=slots, attempt=0, token="", lease_until=None, ready_at=ready,
        # Slots beyond this step's count stay behind, done.
        done=Case(When(slot__lt=slots, then=Value(False)), default=Value(True)),
    )
    return OpenStep(step_seq, slots, ready)


def advance(room: Room, *, slots: int = 1, ready_at: datetime | None = None) -> OpenStep:
    """Invalidate any step in flight and make the room's next step ready (lifecycle actions)."""
    return open_step(room.pk, slots=slots, ready_at=ready_at)


def current(room_id: int) -> OpenStep | None:
    """The room's current step (None before it ever started)."""
    row = StepLease.objects.filter(room_id=room_id, slot=0).values_list("step_seq", "slots", "ready_at").first()
    return OpenStep(*row) if row else None


def mark_ready(room_id: int) -> OpenStep | None:
    """The current step may run now (a resume): its waiting clock restarts unless it waits for a time."""
    now = timezone.now()
    StepLease.objects.filter(room_id=room_id, done=False).filter(Q(ready_at__isnull=True) | Q(ready_at__lt=now)).update(ready_at=now)
    return current(room_id)


def held(room_id: int) -> bool:
    """Somebody holds a lease on the room's current step."""
    return StepLease.objects.filter(room_id=room_id, done=False).exclude(token="").exists()


def stranded(stale_seconds: float) -> list[tuple[int, int, int]]:
    """Slots of active rooms to send again: ``(room_id, step_seq, slot)``.

    A slot whose lease expired (its worker died), or that was ready for ``stale_seconds`` and
    nobody claimed (its message was lost). Those waiting restart their clock.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=stale_seconds)
    rows = list(
        StepLease.objects.filter(room__status=Room.Status.ACTIVE, done=False)
        .filter(Q(lease_until__lt=now) | Q(lease_until__isnull=True, ready_at__lt=stale))
        .values_list("pk", "room_id", "step_seq", "slot", "lease_until")
    )
    waiting = [pk for pk, _, _, _, until in rows if until is None]
    if waiting:
        StepLease.objects.filter(pk__in=waiting, lease_until__isnull=True).update(ready_at=now)
    return [(room_id, step_seq, slot) for _, room_id, step_seq, slot, _ in rows]
