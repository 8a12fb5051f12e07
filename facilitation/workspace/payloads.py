"""The JSON shapes of workspace rows, shared by realtime events and the REST API (camelCase)."""
from rooms.models import Invocation, Narrative, Observation, PersonaAdaptation, Seat, TaskAssignment, Turn


def _ts(value):
    return value.isoformat() if value else None


def observation_payload(obs: Observation) -> dict:
    return {
        "id": obs.pk,
        "seq": obs.seq,
        "round": obs.round,
        "type": obs.event_type,
        "content": obs.content,
        "respondingToId": obs.responding_to_id,
        "confidence": obs.confidence,
        "seatId": obs.seat_id,
        "author": {"name": obs.author_name, "kind": obs.author_kind},
        "provider": obs.provider,
        "rehearsal": obs.provider == "rehearsal",
        "createdAt": _ts(obs.created_at),
    }


def narrative_payload(narrative: Narrative) -> dict:
    return {
        "id": narrative.pk,
        "round": narrative.round,
        "content": narrative.content,
        "generatedContent": narrative.generated_content,
        "edited": narrative.edited_at is not None,
        "keyDecisions": list(narrative.key_decisions or []),
        "blockers": list(narrative.blockers or []),
        "nextSteps": list(narrative.next_steps or []),
        "version": narrative.version,
        "editedBy": narrative.edited_by.get_username() if narrative.edited_by_id else None,
        "editedAt": _ts(narrative.edited_at),
        "provider": narrative.provider,
        "rehearsal": narrative.provider == "rehearsal",
        "correlationId": narrative.correlation_id,
        "createdAt": _ts(narrative.created_at),
    }


def task_payload(task: TaskAssignment) -> dict:
    return {
        "id": task.pk,
        "title": task.title,
        "description": task.description,
        "priority": task.priority,
        "status": task.status,
        "assigneeId": task.assignee_id,
        "claimedById": task.claimed_by_id,
        "claimedAt": _ts(task.claimed_at),
        "startedAt": _ts(task.started_at),
        "completedAt": _ts(task.completed_at),
        "round": task.round,
        "createdBy": task.created_by.get_username() if task.created_by_id else None,
        "createdAt": _ts(task.created_at),
        "updatedAt": _ts(task.updated_at),
    }


def round_payload(turn: Turn, narrative: Narrative | None = None, event_count: int | None = None) -> dict:
    return {
        "number": turn.number,
        "startedAt": _ts(turn.started_at),
        "endedAt": _ts(turn.ended_at),
        "eventCount": turn.event_count if event_count is None else event_count,
        "endedBy": turn.ended_by or None,
        "agentStates": turn.agent_states or {},
        "correlationId": turn.correlation_id,
        "narrative": narrative_payload(narrative) if narrative is not None else None,
    }


def seat_payload(seat: Seat) -> dict:
    """A workspace participant: who sits there and the persona and role it works with now."""
    return {
        "seatId": seat.pk,
        "agentId": seat.agent_id,
        "name": seat.display_name,
        "role": seat.role,
        "personaId": seat.persona_in_use_id,
        "roleId": seat.role_in_use_id,
        "version": seat.version,
    }


def adaptation_payload(row: PersonaAdaptation) -> dict:
    return {
        "id": row.pk,
        "agentId": row.agent_id,
        "personaId": row.persona_id,
        "learnedThresholds": row.learned_thresholds or {},
        "observationCounts": row.observation_counts or {},
        "roundsLearned": row.rounds_learned,
        "lastRound": row.last_round,
        "version": row.version,
    }


def invocation_payload(inv: Invocation) -> dict:
    return {
        "id": inv.pk,
        "component": inv.component,
        "correlationId": inv.correlation_id,
        "agentId": inv.agent_id,
        "user": inv.user.get_username() if inv.user_id else None,
        "provider": inv.provider,
        "model": inv.model,
        "input": inv.input,
        "output": inv.output,
        "success": inv.success,
        "error": inv.error,
        "inputTokens": inv.input_tokens,
        "outputTokens": inv.output_tokens,
        "latencyMs": inv.latency_ms,
        "createdAt": _ts(inv.created_at),
    }
