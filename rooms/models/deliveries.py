"""The outbox: every message the bot sends to a chat or a person is one ``Delivery`` row.

Actions write the rows (``rooms.actions.deliveries``); the bridge's sender task on the
``bridge`` queue sends them, once each, and records the outcome.
"""
from django.db import models

from rooms.models.chat import Platform


class Delivery(models.Model):
    class Kind(models.TextChoices):
        RELAY = "relay"        # a room turn relayed to a linked chat
        POST = "post"          # a message to a group
        REPLY = "reply"        # an answer to a command in a chat
        DIRECT = "direct"      # a direct message to one person
        STATUS = "status"      # the bot's status message in a chat, edited in place

    class Status(models.TextChoices):
        QUEUED = "queued"
        SENDING = "sending"
        RETRYING = "retrying"
        SENT = "sent"
        UNDELIVERABLE = "undeliverable"

    PENDING = (Status.QUEUED, Status.SENDING, Status.RETRYING)

    room = models.ForeignKey("rooms.Room", null=True, blank=True, on_delete=models.CASCADE, related_name="deliveries")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    principal = models.CharField(max_length=200, blank=True, help_text="Who was addressed: user:<name>, role:<key>, chat:<id>.")
    platform = models.CharField(max_length=16, choices=Platform.choices, blank=True)
    chat = models.ForeignKey("rooms.Chat", null=True, blank=True, on_delete=models.SET_NULL, related_name="deliveries")
    identity = models.ForeignKey("rooms.ChatIdentity", null=True, blank=True, on_delete=models.SET_NULL, related_name="deliveries")
    recipient = models.CharField(max_length=300, blank=True, help_text="Who it went to, as people read it.")
    text = models.TextField(blank=True)
    # [{"offset", "length", "identityId"}]: offsets in characters of ``text``; adapters convert.
    mentions = models.JSONField(default=list, blank=True)
    # A card (Teams) or formatting hints; the text is the fallback everywhere.
    card = models.JSONField(default=dict, blank=True)
    # A file sent after the text, rendered at send time: {"kind": "run_minutes", "roomId", "filename"}.
    attachment = models.JSONField(default=dict, blank=True)
    source = models.ForeignKey("rooms.Observation", null=True, blank=True, on_delete=models.SET_NULL, related_name="deliveries")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    # A long message goes out in parts; a retry resumes after the parts already sent.
    parts_sent = models.PositiveIntegerField(default=0)
    message_ids = models.JSONField(default=list, blank=True)
    diagnostic = models.TextField(blank=True)
    correlation_id = models.CharField(max_length=64, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "deliveries"
        constraints = [
            # A room turn reaches each linked chat once, however often the relay is asked for.
            models.UniqueConstraint(fields=["source", "chat"], condition=models.Q(kind="relay"), name="delivery_relay_once_per_chat"),
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="delivery_due")]

    def __str__(self):
        return f"{self.kind} to {self.recipient or self.principal} ({self.status})"

    @property
    def target_key(self) -> str:
        """Messages to one target go out in order."""
        if self.chat_id:
            return f"chat:{self.chat_id}"
        return f"identity:{self.identity_id}"
