"""The engine's bookkeeping of a room's run, kept apart from the room itself."""
from django.db import models


class StepLease(models.Model):
    """One slot of a room's current step.

    A step has one slot per concurrent call (one for a discussion turn, one per agent of a
    workspace round). A worker claims a slot with a conditional UPDATE and commits its
    outcome only while the lease is still its own, so each slot commits exactly once.
    """

    # No index of its own: the unique (room, slot) begins with it.
    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="step_leases", db_index=False)
    slot = models.PositiveSmallIntegerField(default=0)
    # The step this slot belongs to; the room's current step is slot 0's.
    step_seq = models.PositiveIntegerField(default=0)
    # How many slots the step has (the same on every slot of the step).
    slots = models.PositiveSmallIntegerField(default=1)
    attempt = models.PositiveIntegerField(default=0)
    token = models.CharField(max_length=32, blank=True)
    # Not indexed: the sweeper finds expired leases through the active rooms (``leases.stranded``), and every
    # step sets this field, which would rewrite an index page at each commit.
    lease_until = models.DateTimeField(null=True, blank=True)
    # When the slot becomes ready to run (a timer step lies in the future); the sweeper
    # re-enqueues slots left waiting after that.
    ready_at = models.DateTimeField(null=True, blank=True)
    done = models.BooleanField(default=False)
    # What the holder's call may use at most (``budget.estimate``), kept while it runs so the room's other
    # slots that check its budget at the same time count it (``leases.reserve``); it holds only for the
    # attempt that kept it (``reserved_by`` is that attempt's token), until the slot is done.
    reserved_tokens = models.PositiveBigIntegerField(default=0)
    reserved_usd = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    reserved_by = models.CharField(max_length=32, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["room", "slot"], name="step_lease_slot_once")]

    def __str__(self):
        return f"room {self.room_id} step {self.step_seq} slot {self.slot}"
