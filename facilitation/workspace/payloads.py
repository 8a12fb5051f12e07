"""The JSON shapes of workspace rows, shared by realtime events and the REST API (camelCase).

Each shape is its serializer in ``facilitation.workspace.serializers``.
"""
from facilitation.workspace.serializers import (
    AdaptationOut, InvocationOut, NarrativeOut, ObservationOut, RoundOut, TaskOut, WorkspaceSeatOut,
)
from rooms.models import Invocation, Narrative, Observation, PersonaAdaptation, Seat, TaskAssignment, Turn


def observation_payload(obs: Observation) -> dict:
    return ObservationOut.render(obs)


def narrative_payload(narrative: Narrative) -> dict:
    return NarrativeOut.render(narrative)


def task_payload(task: TaskAssignment) -> dict:
    return TaskOut.render(task)


def round_payload(turn: Turn, narrative: Narrative | None = None) -> dict:
    return RoundOut.render(turn, narrative=narrative)


def seat_payload(seat: Seat) -> dict:
    """A workspace participant: who sits there and the persona and role it works with now."""
    return WorkspaceSeatOut.render(seat)


def adaptation_payload(row: PersonaAdaptation) -> dict:
    return AdaptationOut.render(row)


def invocation_payload(inv: Invocation) -> dict:
    return InvocationOut.render(inv)
