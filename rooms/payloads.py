"""The JSON shapes of rooms, turns and statuses, shared by events, REST and exports.

Each shape is its serializer in ``rooms.serializers``; these are the calls the callers use.
"""
from rooms.models import Observation, Room
from rooms.serializers import SpeakerOut, StatusOut, TurnOut


def speaker_payload(obs: Observation, role: str | None = None) -> dict:
    """Who spoke. ``role`` saves a seat lookup when the caller knows it."""
    return SpeakerOut.render(obs, role=role)


def turn_payload(obs: Observation, role: str | None = None) -> dict:
    return TurnOut.render(obs, role=role)


def status_payload(room: Room) -> dict:
    return StatusOut.render(room)
