"""What happens in a room: turns, observations, narratives, tasks, invocations and events."""
from django.conf import settings
from django.db import models


class Turn(models.Model):
    """A round's time boundary. In a workspace: when it started and ended, how many observations it
    gathered, and a snapshot of every agent seat's state when it ended."""

    class EndedBy(models.TextChoices):
        MANAGER = "manager"
        POLICY = "policy"
        SCOPE = "scope"

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="turns")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    event_count = models.PositiveIntegerField(default=0)
    agent_states = models.JSONField(default=dict, blank=True)
    ended_by = models.CharField(max_length=20, choices=EndedBy.choices, blank=True)
    correlation_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["room", "number"], name="turn_number_once_per_room")]


EVENT_TYPES = ("question", "blocker", "solution", "agreement", "disagreement", "observation", "decision", "analysis",
               "concern", "clarification")


class Observation(models.Model):
    """One contribution to a room: a participant's turn, a facilitator decision, a synthesis."""

    class Kind(models.TextChoices):
        CONTRIBUTION = "contribution"
        DECISION = "decision"
        SYNTHESIS = "synthesis"
        MESSAGE = "message"  # said to everyone by the facilitator or the system (author_kind tells which)

    class AuthorKind(models.TextChoices):
        AGENT = "agent"
        FACILITATOR = "facilitator"
        HUMAN = "human"
        SYSTEM = "system"

    class Status(models.TextChoices):
        OK = "ok"
        TIMED_OUT = "timed_out"
        ERROR = "error"

    class EventType(models.TextChoices):
        """The type of a workspace observation."""

        QUESTION = "question"
        BLOCKER = "blocker"
        SOLUTION = "solution"
        AGREEMENT = "agreement"
        DISAGREEMENT = "disagreement"
        OBSERVATION = "observation"
        DECISION = "decision"
        ANALYSIS = "analysis"
        CONCERN = "concern"
        CLARIFICATION = "clarification"

    # No index of its own: the unique (room, seq) and (room, event_type) both begin with it.
    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="observations", db_index=False)
    seq = models.PositiveBigIntegerField()
    # Indexed only where set (Meta): a discussion's turns and decisions have no Turn row.
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="observations",
                             db_index=False)
    round = models.PositiveIntegerField(default=0)
    seat = models.ForeignKey("rooms.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="observations")
    author_name = models.CharField(max_length=200)
    author_kind = models.CharField(max_length=20, choices=AuthorKind.choices, default=AuthorKind.AGENT)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.CONTRIBUTION)
    event_type = models.CharField(max_length=40, blank=True, choices=EventType.choices,
                                  help_text="The typed observation's type (workspace rooms); empty elsewhere.")
    # Threading: the observation this one answers, always in the same room (checked by the actions).
    responding_to = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="responses",
                                      db_index=False)  # indexed only where set (Meta)
    confidence = models.FloatField(null=True, blank=True)
    content = models.TextField(blank=True)
    markers = models.JSONField(default=list, blank=True)
    data = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OK)
    provider = models.CharField(max_length=32, blank=True)
    tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["room", "seq"], name="observation_seq_once_per_room"),
            models.CheckConstraint(condition=models.Q(confidence__isnull=True) | (models.Q(confidence__gte=0) & models.Q(confidence__lte=1)),
                                   name="observation_confidence_0_1"),
            models.CheckConstraint(condition=models.Q(event_type="") | models.Q(event_type__in=EVENT_TYPES),
                                   name="observation_event_type_known"),
        ]
        indexes = [
            # A workspace's typed observations only: a discussion's turns and decisions (no type) never look it up,
            # and each of their inserts would rewrite one of its pages. A query uses it when it says
            # ``.exclude(event_type="")``, as every typed lookup here does.
            models.Index(fields=["room", "event_type"], condition=~models.Q(event_type=""), name="observation_room_typed"),
            models.Index(fields=["turn"], condition=models.Q(turn__isnull=False), name="observation_turn"),
            models.Index(fields=["responding_to"], condition=models.Q(responding_to__isnull=False), name="observation_responding_to"),
        ]


class Narrative(models.Model):
    """A workspace round's summary: written by the moderator agent, editable by the manager.

    ``generated_content`` keeps what the agent wrote; ``content`` is the current text (the
    manager's edit once there is one). ``version`` grows with every edit (optimistic locking).
    """

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="narratives")
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.CASCADE, related_name="narratives")
    round = models.PositiveIntegerField(default=0)
    content = models.TextField()
    generated_content = models.TextField(blank=True)
    key_decisions = models.JSONField(default=list, blank=True)
    # Ids of the blocker observations still unresolved when the narrative was written.
    blockers = models.JSONField(default=list, blank=True)
    next_steps = models.JSONField(default=list, blank=True)
    version = models.PositiveIntegerField(default=1)
    provider = models.CharField(max_length=32, blank=True)
    written_by_agent = models.ForeignKey("rooms.Agent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    edited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    edited_at = models.DateTimeField(null=True, blank=True)
    correlation_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["round", "id"]
        constraints = [models.UniqueConstraint(fields=["room", "round"], condition=models.Q(round__gt=0),
                                               name="narrative_once_per_round")]


class TaskAssignment(models.Model):
    """A unit of work in a workspace: assigned to a seat or claimed by one.

    ``pending -> claimed -> in_progress -> completed``; everyone in the room sees every task.
    ``version`` grows with every change (an edit or a step): an edit names the version it was made on.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        CLAIMED = "claimed"
        IN_PROGRESS = "in_progress"
        COMPLETED = "completed"

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="tasks")
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    priority = models.PositiveSmallIntegerField(default=3, help_text="1 (low) to 5 (urgent).")
    assignee = models.ForeignKey("rooms.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING, db_index=True)
    claimed_by = models.ForeignKey("rooms.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="claimed_tasks")
    claimed_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    round = models.PositiveIntegerField(default=0, help_text="The round the task was created in.")
    source = models.ForeignKey(Observation, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    due_at = models.DateTimeField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-priority", "id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(priority__gte=1) & models.Q(priority__lte=5), name="task_priority_1_5"),
        ]


class Invocation(models.Model):
    """Every model call and every manager action, for audit, cost and learning."""

    class Kind(models.TextChoices):
        CALL = "call"  # a model call (tokens, cost, latency)
        ACTION = "action"  # a write by a person or the system (``rooms.audit``): before and after

    # Indexed by (room, correlation_id) and, for the rows a person's action wrote, by user (Meta).
    room = models.ForeignKey("rooms.Room", null=True, blank=True, on_delete=models.CASCADE, related_name="invocations",
                             db_index=False)
    agent = models.ForeignKey("rooms.Agent", null=True, blank=True, on_delete=models.SET_NULL, related_name="invocations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                             db_index=False)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.CALL)
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
    correlation_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # Every lookup by correlation is within a room; lookups by room alone use the first column.
            models.Index(fields=["room", "correlation_id"], name="invocation_room_correlation"),
            # A model call the engine makes has no user: only the rows of people's actions are indexed by theirs.
            models.Index(fields=["user"], condition=models.Q(user__isnull=False), name="invocation_user"),
        ]


class RoomEvent(models.Model):
    """The room's event log: what was pushed live, kept for replay after a reconnect."""

    # No index of its own: the unique (room, seq) begins with it.
    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="events", db_index=False)
    seq = models.PositiveBigIntegerField()
    type = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["room", "seq"], name="room_event_seq_once")]
