"""Roles, personas and the reusable assistants (agents) built from them."""
from django.conf import settings
from django.db import models


def _key_constraints(prefix: str) -> list:
    """Built-in keys are unique among built-ins; a custom key is unique among its owner's rows only."""
    return [
        models.UniqueConstraint(fields=["key"], condition=models.Q(is_builtin=True), name=f"{prefix}_builtin_key_unique"),
        models.UniqueConstraint(fields=["created_by", "key"], condition=models.Q(is_builtin=False),
                                name=f"{prefix}_key_unique_per_owner"),
    ]


class Role(models.Model):
    """What a participant does in a room: a function and the base prompt for it."""

    key = models.SlugField(max_length=64)
    name = models.CharField(max_length=120)
    function = models.CharField(max_length=300, blank=True)
    base_prompt = models.TextField(blank=True)
    is_builtin = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = _key_constraints("role")

    def __str__(self):
        return self.name


class Persona(models.Model):
    """How an agent speaks and thinks. Facilitator presets are personas with ``is_facilitator``."""

    key = models.SlugField(max_length=64)
    name = models.CharField(max_length=120)
    description = models.CharField(max_length=500, blank=True)
    style = models.CharField(max_length=300, blank=True)
    prompt = models.TextField(help_text="The personality prompt, used verbatim as the system prompt's core.")
    is_facilitator = models.BooleanField(default=False)
    philosophy = models.CharField(max_length=500, blank=True)
    best_for = models.JSONField(default=list, blank=True)
    model_tier = models.CharField(max_length=20, blank=True)
    is_builtin = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = _key_constraints("persona")

    def __str__(self):
        return self.name


class Agent(models.Model):
    """A reusable assistant: a role and a persona bound to a model and a budget."""

    name = models.CharField(max_length=120)
    alias = models.SlugField(max_length=64, blank=True)
    description = models.CharField(max_length=500, blank=True)
    role = models.ForeignKey(Role, null=True, blank=True, on_delete=models.PROTECT, related_name="agents")
    persona = models.ForeignKey(Persona, null=True, blank=True, on_delete=models.PROTECT, related_name="agents")
    is_facilitator = models.BooleanField(default=False)
    provider = models.CharField(max_length=32, blank=True, help_text="Empty: the configured default provider.")
    model = models.CharField(max_length=120, blank=True, help_text="Empty: the provider's default model.")
    expertise = models.JSONField(default=list, blank=True)
    concerns = models.JSONField(default=list, blank=True)
    budget_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    budget_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    tokens_used = models.PositiveBigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    is_builtin = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="agents")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-is_builtin", "name"]
        constraints = [
            models.UniqueConstraint(fields=["alias"], condition=models.Q(is_builtin=True) & ~models.Q(alias=""), name="builtin_agent_alias_unique"),
        ]

    def __str__(self):
        return self.name
