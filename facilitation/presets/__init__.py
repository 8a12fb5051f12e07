"""Built-in data: facilitator presets, seat and function roles, bundled participants.

The modules hold plain data; ``facilitation.presets.seed.seed_presets`` writes it
to the database (idempotently).
"""
from facilitation.presets.facilitators import FACILITATOR_PRESETS, GENERIC_FACILITATOR, PRESET_KEYS, get_preset
from facilitation.presets.participants import BUNDLED_PARTICIPANTS, FUNCTION_ROLES, PARTICIPANT_ALIASES, SEAT_ROLES, get_participant

__all__ = [
    "FACILITATOR_PRESETS", "GENERIC_FACILITATOR", "PRESET_KEYS", "get_preset",
    "BUNDLED_PARTICIPANTS", "FUNCTION_ROLES", "PARTICIPANT_ALIASES", "SEAT_ROLES", "get_participant",
]
