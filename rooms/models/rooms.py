"""Rooms and the seats and memberships of the people and agents in them."""
from django.conf import settings
from django.db import models


class Room(models.Model):
    class Kind(models.TextChoices):
        DISCUSSION = "discussion"
        WORKSPACE = "workspace"
        FACILITATION = "facilitation"

    class Format(models.TextChoices):
        BRAINSTORM = "brainstorm"
        REVIEW = "review"
        DELIBERATION = "deliberation"

    class Status(models.TextChoices):
        DRAFT = "draft"
        ACTIVE = "active"
        PAUSED = "paused"
        CONCLUDED = "concluded"
        STOPPED = "stopped"
        FAILED = "failed"
        # A workspace's scope is done (completed) or put away (archived): read-only from then on.
        COMPLETED = "completed"
        ARCHIVED = "archived"

    TERMINAL = (Status.CONCLUDED, Status.STOPPED, Status.FAILED, Status.COMPLETED, Status.ARCHIVED)

    name = models.CharField(max_length=200)
    topic = models.TextField(help_text="The topic of a discussion or the goal of a facilitation.")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.DISCUSSION)
    format = models.CharField(max_length=20, choices=Format.choices, default=Format.DELIBERATION)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT, db_index=True)
    round = models.PositiveIntegerField(default=0)
    max_rounds = models.PositiveIntegerField(default=5)
    conclusion = models.TextField(blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rooms")
    moderator = models.ForeignKey("rooms.Agent", null=True, blank=True, on_delete=models.PROTECT, related_name="moderated_rooms")

    # The engine's persisted state: the next step's inputs (see facilitation.engine).
    engine_state = models.JSONField(default=dict, blank=True)
    # The realtime/event sequence: every event and observation takes the next value.
    seq = models.PositiveBigIntegerField(default=0)

    # Structured deliberation: the template's phases, the current one, when it began (the seq of its
    # first event: votes count from there), the consensus rules and how many turns may run at once.
    template = models.CharField(max_length=20, blank=True)
    phase = models.CharField(max_length=40, blank=True)
    phase_started_seq = models.PositiveBigIntegerField(default=0)
    consensus = models.JSONField(default=dict, blank=True)
    max_parallel = models.PositiveSmallIntegerField(default=1)
    # A chat was linked to the room at some time: its turns may go out to chats. Set by the link
    # action under the room's lock; a committing step reads it with the locked room and skips the
    # look-up of the chat links for the many rooms that never had one.
    chat_linked = models.BooleanField(default=False)

    budget_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    budget_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    tokens_used = models.PositiveBigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    # Workspace rooms: when a round ends by itself, e.g. {"maxEvents": 10, "maxSeconds": 300}.
    turn_policy = models.JSONField(default=dict, blank=True)
    # Why a paused room is paused when nobody paused it: "idle" (a workspace nobody acted in for a while)
    # or "budget" (its budget is used up); empty otherwise.
    pause_reason = models.CharField(max_length=20, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(max_rounds__gte=1) & models.Q(max_rounds__lte=20), name="room_max_rounds_1_20"),
            models.CheckConstraint(condition=models.Q(max_parallel__gte=1) & models.Q(max_parallel__lte=3), name="room_max_parallel_1_3"),
        ]

    def __str__(self):
        return self.name

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL


class Seat(models.Model):
    """An agent or a person seated in a room with a role."""

    class Role(models.TextChoices):
        FACILITATOR = "facilitator"
        PARTICIPANT = "participant"
        OBSERVER = "observer"
        DEVIL_ADVOCATE = "devil_advocate"
        # Speaks only when the room asks for votes (a template phase that takes them), to cast its vote.
        BACKGROUND = "background"

    SPEAKING = (Role.PARTICIPANT, Role.DEVIL_ADVOCATE)
    VOTING = (Role.PARTICIPANT, Role.DEVIL_ADVOCATE, Role.BACKGROUND)
    # Function roles (by key) no workspace agent works in: the facilitator's is the narrator's seat, and an
    # observer never takes a turn, while every agent seat of a workspace publishes observations each round.
    NOT_WORK_ROLES = (Role.FACILITATOR.value, Role.OBSERVER.value)

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="seats")
    agent = models.ForeignKey("rooms.Agent", null=True, blank=True, on_delete=models.PROTECT, related_name="seats")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="seats")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.PARTICIPANT)
    # Workspace rooms: the persona and the functional role this seat works with (empty: the agent's own).
    # The manager swaps them mid-room; ``version`` is the optimistic lock for that swap.
    persona = models.ForeignKey("rooms.Persona", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    work_role = models.ForeignKey("rooms.Role", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    version = models.PositiveIntegerField(default=1)
    position = models.PositiveIntegerField(default=0)
    is_active = models.BooleanField(default=True)
    tokens_used = models.PositiveBigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(agent__isnull=False) & models.Q(user__isnull=True)) | (models.Q(agent__isnull=True) & models.Q(user__isnull=False)),
                name="seat_agent_xor_user",
            ),
            models.UniqueConstraint(fields=["room", "agent"], condition=models.Q(agent__isnull=False), name="seat_agent_once_per_room"),
        ]

    @property
    def display_name(self) -> str:
        if self.agent_id:
            return self.agent.name
        return self.user.get_full_name() or self.user.get_username()

    @property
    def persona_in_use_id(self) -> int | None:
        return self.persona_id or (self.agent.persona_id if self.agent_id else None)

    @property
    def role_in_use_id(self) -> int | None:
        return self.work_role_id or (self.agent.role_id if self.agent_id else None)

    @property
    def is_speaking(self) -> bool:
        return self.is_active and self.role in self.SPEAKING


class RoomMember(models.Model):
    """A person a room is shared with, and what they may do there."""

    class Access(models.TextChoices):
        VIEWER = "viewer"
        PARTICIPANT = "participant"

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="room_memberships")
    access = models.CharField(max_length=20, choices=Access.choices, default=Access.VIEWER)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["room", "user"], name="room_member_once")]
