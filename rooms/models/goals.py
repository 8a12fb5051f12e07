"""A facilitation run: a room of kind ``facilitation`` pursuing one goal with people.

The run is an instance of a validated pattern (see ``facilitation.goals.patterns``) with filled
slots, the artifact being built, who must confirm it, who receives the report and when it ends.
Runs are ephemeral by default: a mandatory TTL; a reaper removes the scaffold after a terminal
state or at the TTL and keeps the protocol (transcript, artifact, deliveries, minutes).
"""
from django.conf import settings
from django.db import models


class FacilitationRun(models.Model):
    class Origin(models.TextChoices):
        EPHEMERAL = "ephemeral"
        PERSISTENT = "persistent"

    class State(models.TextChoices):
        WAITING = "waiting"          # created; no group yet
        ACTIVE = "active"            # moderating
        CONFIRMING = "confirming"    # done by the machine check; waiting for confirmations
        COMPLETED = "completed"
        FAILED = "failed"            # the deadline passed without a confirmed result
        STOPPED = "stopped"          # stopped by the owner or the initiator

    TERMINAL = (State.COMPLETED, State.FAILED, State.STOPPED)
    LIVE = (State.WAITING, State.ACTIVE, State.CONFIRMING)

    class Mode(models.TextChoices):
        FACILITATE = "facilitate"
        RECORD = "record"
        TIMEKEEP = "timekeep"

    room = models.OneToOneField("rooms.Room", on_delete=models.CASCADE, related_name="run")
    pattern = models.CharField(max_length=30)
    slots = models.JSONField(default=dict)
    artifact = models.JSONField(default=dict)
    artifact_version = models.PositiveIntegerField(default=0)
    confirmations = models.JSONField(default=list, blank=True, help_text="Who confirmed the current artifact version.")
    confirm_mode = models.CharField(max_length=20, default="named", help_text="named: everyone named confirms; initiator.")
    report_to = models.JSONField(default=list, help_text='Principals: "user:<username>" or "role:<key>".')
    disclose_report_to = models.BooleanField(default=True)
    interim_reports = models.BooleanField(default=False, help_text="On a stall, the report targets get an interim status too.")
    mode = models.CharField(max_length=20, choices=Mode.choices, default=Mode.FACILITATE)
    state = models.CharField(max_length=20, choices=State.choices, default=State.WAITING, db_index=True)
    deadline = models.DateTimeField()
    reminder_minutes = models.PositiveIntegerField(null=True, blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.EPHEMERAL, db_index=True)
    ttl_hours = models.PositiveIntegerField()
    expires_at = models.DateTimeField(db_index=True)
    join_code = models.CharField(max_length=64, unique=True)
    initiator_name = models.CharField(max_length=200, blank=True, help_text="Who invited the facilitator (chat name).")
    initiator_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    initiator_key = models.CharField(max_length=100, blank=True,
                                     help_text="The initiator's chat account (telegram:<id>, teams:<id>): may stop the run.")
    last_progress_at = models.DateTimeField(null=True, blank=True)
    last_reminder_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=300, blank=True)
    reaped_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        permissions = [("start_facilitation_run", "Can start facilitation runs")]

    def __str__(self):
        return f"{self.pattern} run for room {self.room_id} ({self.state})"

    @property
    def is_terminal(self) -> bool:
        return self.state in self.TERMINAL
