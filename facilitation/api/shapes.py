"""The JSON shapes the API returns (camelCase already; the renderer keeps them so).

Turns reuse ``rooms.payloads.turn_payload`` and usage ``facilitation.transcript.usage_of``,
so REST, realtime events and exports describe the same things the same way.
"""
from facilitation.deliberation.consensus import ConsensusRules
from facilitation.transcript import analytics_of, usage_of
from rooms.models import Agent, Observation, Persona, Role, Room, RoomMember, Seat


def _ts(value):
    return value.isoformat() if value else None


def _money(value):
    return float(value) if value is not None else None


def moderator_shape(agent: Agent | None) -> dict | None:
    if agent is None:
        return None
    return {"id": agent.pk, "name": agent.name, "alias": agent.alias}


def participant_shape(seat: Seat) -> dict:
    return {
        "seatId": seat.pk,
        "agentId": seat.agent_id,
        "username": seat.user.get_username() if seat.user_id else None,
        "name": seat.display_name,
        "role": seat.role,
        "position": seat.position,
        "isActive": seat.is_active,
        "tokensUsed": seat.tokens_used,
        "personaId": seat.persona_in_use_id,
        "roleId": seat.role_in_use_id,
        "version": seat.version,
    }


def discussion_summary(room: Room, access: str) -> dict:
    return {
        "id": room.pk,
        "name": room.name,
        "topic": room.topic,
        "kind": room.kind,
        "format": room.format,
        "status": room.status,
        "round": room.round,
        "maxRounds": room.max_rounds,
        "moderator": moderator_shape(room.moderator),
        "owner": room.owner.get_username(),
        "access": access,
        "createdAt": _ts(room.created_at),
        "updatedAt": _ts(room.updated_at),
        "startedAt": _ts(room.started_at),
        "endedAt": _ts(room.ended_at),
    }


def discussion_detail(room: Room, access: str) -> dict:
    seats = room.seats.select_related("agent", "user").order_by("position", "id")
    return {
        **discussion_summary(room, access),
        "conclusion": room.conclusion,
        "participants": [participant_shape(s) for s in seats if s.role != Seat.Role.FACILITATOR],
        "rehearsal": Observation.objects.filter(room=room, provider="rehearsal").exists(),
        "lastSeq": room.seq,
        "budgetTokens": room.budget_tokens,
        "budgetUsd": _money(room.budget_usd),
        "usage": usage_of(room),
        "analytics": analytics_of(room),
        "template": room.template or None,
        "phase": room.phase or None,
        "consensus": ConsensusRules.load(room.consensus).as_payload(),
        "maxParallel": room.max_parallel,
        "turnPolicy": ({"maxEvents": 10, "maxSeconds": 300, **room.turn_policy}
                       if room.kind == Room.Kind.WORKSPACE else None),
    }


def member_shape(member: RoomMember) -> dict:
    return {"username": member.user.get_username(), "access": member.access, "addedAt": _ts(member.added_at)}


def _ref(row) -> dict | None:
    return {"id": row.pk, "key": row.key, "name": row.name} if row is not None else None


def role_shape(role: Role) -> dict:
    return {
        "id": role.pk, "key": role.key, "name": role.name, "function": role.function, "basePrompt": role.base_prompt,
        "isBuiltin": role.is_builtin, "createdAt": _ts(role.created_at), "updatedAt": _ts(role.updated_at),
    }


def persona_shape(persona: Persona) -> dict:
    return {
        "id": persona.pk, "key": persona.key, "name": persona.name, "description": persona.description,
        "style": persona.style, "prompt": persona.prompt, "isFacilitator": persona.is_facilitator,
        "philosophy": persona.philosophy, "bestFor": list(persona.best_for or []), "modelTier": persona.model_tier,
        "isBuiltin": persona.is_builtin, "createdAt": _ts(persona.created_at), "updatedAt": _ts(persona.updated_at),
    }


def agent_shape(agent: Agent) -> dict:
    return {
        "id": agent.pk, "name": agent.name, "alias": agent.alias, "description": agent.description,
        "isFacilitator": agent.is_facilitator, "roleId": agent.role_id, "role": _ref(agent.role),
        "personaId": agent.persona_id, "persona": _ref(agent.persona), "provider": agent.provider, "model": agent.model,
        "expertise": list(agent.expertise or []), "concerns": list(agent.concerns or []),
        "budgetTokens": agent.budget_tokens, "budgetUsd": _money(agent.budget_usd),
        "tokensUsed": agent.tokens_used, "costUsd": float(agent.cost_usd), "isBuiltin": agent.is_builtin,
        "createdAt": _ts(agent.created_at), "updatedAt": _ts(agent.updated_at),
    }
