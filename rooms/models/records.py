"""What happens in a room: turns, observations, narratives, tasks, invocations and events."""
from django.conf import settings
from django.db import models


class Turn(models.Model):
    """A round's time boundary."""

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["room", "number"], name="turn_number_once_per_room")]


class Observation(models.Model):
    """One contribution to a room: a participant's turn, a facilitator decision, a synthesis."""

    class Kind(models.TextChoices):
        CONTRIBUTION = "contribution"
        DECISION = "decision"
        SYNTHESIS = "synthesis"
        MESSAGE = "message"
        SYSTEM = "system"

    class AuthorKind(models.TextChoices):
        AGENT = "agent"
        FACILITATOR = "facilitator"
        HUMAN = "human"
        SYSTEM = "system"

    class Status(models.TextChoices):
        OK = "ok"
        TIMED_OUT = "timed_out"
        ERROR = "error"

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="observations")
    seq = models.PositiveBigIntegerField()
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="observations")
    round = models.PositiveIntegerField(default=0)
    seat = models.ForeignKey("rooms.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="observations")
    author_name = models.CharField(max_length=200)
    author_kind = models.CharField(max_length=20, choices=AuthorKind.choices, default=AuthorKind.AGENT)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.CONTRIBUTION)
    event_type = models.CharField(max_length=40, blank=True, help_text="The typed observation's type (workspace rooms).")
    content = models.TextField(blank=True)
    markers = models.JSONField(default=list, blank=True)
    data = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OK)
    provider = models.CharField(max_length=32, blank=True)
    tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["room", "seq"], name="observation_seq_once_per_room")]


class Narrative(models.Model):
    """A summary of a turn; a manager may edit it (the version counts edits)."""

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="narratives")
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.CASCADE, related_name="narratives")
    content = models.TextField()
    version = models.PositiveIntegerField(default=1)
    written_by_agent = models.ForeignKey("rooms.Agent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    edited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["turn__number", "id"]


class TaskAssignment(models.Model):
    """A task a manager assigns to a seat (agent or person) in a room."""

    class Status(models.TextChoices):
        OPEN = "open"
        CLAIMED = "claimed"
        DONE = "done"
        CANCELLED = "cancelled"

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="tasks")
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    assignee = models.ForeignKey("rooms.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    source = models.ForeignKey(Observation, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    due_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)


class Invocation(models.Model):
    """Every model call and every manager action, for audit, cost and learning."""

    room = models.ForeignKey("rooms.Room", null=True, blank=True, on_delete=models.CASCADE, related_name="invocations")
    agent = models.ForeignKey("rooms.Agent", null=True, blank=True, on_delete=models.SET_NULL, related_name="invocations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    component = models.CharField(max_length=60, help_text="e.g. facilitator.evaluation, participant.turn, manager.edit_narrative")
    provider = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=120, blank=True)
    input = models.JSONField(default=dict, blank=True)
    output = models.TextField(blank=True)
    success = models.BooleanField(default=True)
    error = models.TextField(blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_write_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    correlation_id = models.CharField(max_length=64, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]


class RoomEvent(models.Model):
    """The room's event log: what was pushed live, kept for replay after a reconnect."""

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveBigIntegerField()
    type = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["room", "seq"], name="room_event_seq_once")]
