"""What an agent learned while wearing one persona in one room."""
from django.db import models


class PersonaAdaptation(models.Model):
    """Learned behaviour of one (agent, persona) pair in one room.

    A persona swapped back finds its own row again. ``version`` is the optimistic lock:
    an update names the version it read and fails when someone else wrote first.
    """

    room = models.ForeignKey("rooms.Room", on_delete=models.CASCADE, related_name="adaptations")
    agent = models.ForeignKey("rooms.Agent", on_delete=models.CASCADE, related_name="adaptations")
    persona = models.ForeignKey("rooms.Persona", null=True, blank=True, on_delete=models.CASCADE, related_name="adaptations")
    # Named numbers the agent works by, e.g. {"confidence": 0.7, "answerBias": 0.5, "narrativeTrust": 1.0}.
    learned_thresholds = models.JSONField(default=dict, blank=True)
    # How often the agent published each observation type while wearing this persona.
    observation_counts = models.JSONField(default=dict, blank=True)
    rounds_learned = models.PositiveIntegerField(default=0)
    last_round = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["room", "agent", "persona"], condition=models.Q(persona__isnull=False),
                                    name="adaptation_once_per_agent_persona_room"),
            models.UniqueConstraint(fields=["room", "agent"], condition=models.Q(persona__isnull=True),
                                    name="adaptation_once_per_agent_room_without_persona"),
        ]
