"""The data of rooms and who is in them, shared by the three kinds of room."""
from rooms.models.adaptations import PersonaAdaptation
from rooms.models.agents import Agent, Persona, Role
from rooms.models.chat import Chat, ChatCode, ChatIdentity, ChatLink, ChatMember
from rooms.models.deliveries import Delivery
from rooms.models.goals import FacilitationRun
from rooms.models.records import Invocation, Narrative, Observation, RoomEvent, TaskAssignment, Turn
from rooms.models.rooms import Room, RoomMember, Seat
from rooms.models.tokens import ApiToken

__all__ = [
    "Agent", "Persona", "Role", "Room", "RoomMember", "Seat", "Turn", "Observation",
    "Narrative", "TaskAssignment", "Invocation", "RoomEvent", "ApiToken", "FacilitationRun", "PersonaAdaptation",
    "Chat", "ChatCode", "ChatIdentity", "ChatLink", "ChatMember", "Delivery",
]
