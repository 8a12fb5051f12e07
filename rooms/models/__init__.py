"""The data of rooms and who is in them, shared by the three kinds of room."""
from rooms.models.agents import Agent, Persona, Role
from rooms.models.records import Invocation, Narrative, Observation, RoomEvent, TaskAssignment, Turn
from rooms.models.rooms import Room, RoomMember, Seat

__all__ = [
    "Agent", "Persona", "Role", "Room", "RoomMember", "Seat", "Turn", "Observation",
    "Narrative", "TaskAssignment", "Invocation", "RoomEvent",
]
