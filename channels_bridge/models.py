"""The bridge's own bookkeeping: what arrived from each platform, and each bot's state."""
from django.db import models

from rooms.models.chat import Platform


class InboundUpdate(models.Model):
    """One verified webhook request. The unique key makes a repeated update a no-op: Telegram's
    ``update_id``, or a Teams activity's conversation and activity ids."""

    class Status(models.TextChoices):
        RECEIVED = "received"
        PROCESSING = "processing"
        PROCESSED = "processed"
        IGNORED = "ignored"
        FAILED = "failed"

    platform = models.CharField(max_length=16, choices=Platform.choices)
    key = models.CharField(max_length=400)
    payload = models.JSONField()
    # Teams: the serviceUrl claim of the verified token (the only serviceUrl we trust).
    service_url = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RECEIVED)
    note = models.CharField(max_length=300, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "key"], name="inbound_update_once")]
        indexes = [models.Index(fields=["status", "received_at"], name="inbound_update_pending")]


class BotState(models.Model):
    """Per platform: the bot's own account (so its messages are never taken as input) and when
    the last update arrived (shown by /healthz)."""

    platform = models.CharField(max_length=16, choices=Platform.choices, unique=True)
    bot_id = models.CharField(max_length=200, blank=True)
    bot_username = models.CharField(max_length=200, blank=True)
    bot_name = models.CharField(max_length=200, blank=True)
    last_update_at = models.DateTimeField(null=True, blank=True)
    last_sent_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
