"""Builds model requests from a room's context and the engine's step.

A prompt is a stable prefix (persona, role, format: cacheable) followed by the room
brief, the narratives of finished rounds, one-line digests of older turns, the last
few turns verbatim and the question. The whole transcript is never replayed, so a
prompt's size does not grow with the length of the discussion.
"""
from facilitation.context import RoomContext
from facilitation.engine import Evaluation, Opening, ParticipantTurn, Synthesis
from facilitation.llm import LLMRequest
from facilitation.prompts.instructions import DECISION_FORMAT, FORMATS, MARKERS, SEAT_ROLES, SYNTHESIS_FORMAT


def _brief(ctx: RoomContext) -> str:
    lines = [f"# {ctx.name}", f"Topic: {ctx.topic}", f"Format: {ctx.format}", f"Round {ctx.round} of {ctx.max_rounds}."]
    lines.append("Speaking participants: " + ", ".join(f"{s.name} (id {s.id}, {s.role})" for s in ctx.speakers) + ".")
    observers = [s for s in ctx.seats if s.role == "observer" and s.active]
    if observers:
        lines.append("Observers (never chosen to speak): " + ", ".join(s.name for s in observers) + ".")
    return "\n".join(lines)


def _history(ctx: RoomContext) -> str:
    parts = []
    if ctx.narratives:
        parts.append("## Summaries of earlier rounds\n" + "\n".join(f"- {n}" for n in ctx.narratives))
    if ctx.digest:
        parts.append("## Earlier turns in brief\n" + "\n".join(f"- {d}" for d in ctx.digest))
    if ctx.recent:
        turns = "\n\n".join(f"### {t['speaker']} ({t['role']}, round {t['round']})\n{t['content'] or '(no response)'}" for t in ctx.recent)
        parts.append("## Latest turns\n" + turns)
    return "\n\n".join(parts) or "Nothing has been said yet."


def _meta(ctx: RoomContext, **extra) -> dict:
    meta = {
        "topic": ctx.topic, "format": ctx.format, "round": ctx.round, "maxRounds": ctx.max_rounds,
        "roundsLeft": max(0, ctx.max_rounds - ctx.round),
        "speakers": [{"id": s.id, "name": s.name, "role": s.role} for s in ctx.speakers],
        "lastSpeakerId": ctx.last_seat_id, "recent": ctx.recent, "points": ctx.points, "airtime": ctx.airtime,
    }
    meta.update(extra)
    return meta


def facilitator_system(ctx: RoomContext) -> str:
    f = ctx.facilitator
    return "\n\n".join(p for p in (
        f.persona_prompt or "You are a fair, focused facilitator.",
        SEAT_ROLES["facilitator"], FORMATS.get(ctx.format, ""),
    ) if p)


def participant_system(ctx: RoomContext, seat_id: int) -> str:
    agent = ctx.agents[seat_id]
    seat = ctx.seat(seat_id)
    return "\n\n".join(p for p in (
        agent.persona_prompt, agent.role_prompt, SEAT_ROLES.get(seat.role, ""), FORMATS.get(ctx.format, ""), MARKERS,
    ) if p)


def for_step(ctx: RoomContext, step, timeout: float) -> LLMRequest:
    facilitator = ctx.facilitator
    fac_meta = {"persona": {"key": facilitator.persona_key, "name": facilitator.name},
                "speaker": {"id": facilitator.seat_id, "name": facilitator.name, "role": "facilitator"}}
    if isinstance(step, Opening):
        ask = "Open the discussion: choose the first speaker and the opening question for them.\n\n" + DECISION_FORMAT
        return LLMRequest(
            system=facilitator_system(ctx), purpose="opening", model=facilitator.model, max_tokens=600, timeout=timeout,
            messages=[{"role": "user", "content": f"{_brief(ctx)}\n\n{ask}"}],
            meta=_meta(ctx, mustSynthesize=False, **fac_meta),
        )
    if isinstance(step, Evaluation):
        left = step.rounds_left
        rule = ("No rounds remain: you must decide \"synthesize\"." if step.must_synthesize
                else f"{left} round{'s' if left != 1 else ''} remain{'s' if left == 1 else ''}. Continue with a next speaker and question, or synthesize if the topic is covered.")
        ask = f"Evaluate the progress after the latest turn. {rule}\n\n{DECISION_FORMAT}"
        return LLMRequest(
            system=facilitator_system(ctx), purpose="evaluation", model=facilitator.model, max_tokens=600, timeout=timeout,
            messages=[{"role": "user", "content": f"{_brief(ctx)}\n\n{_history(ctx)}\n\n{ask}"}],
            meta=_meta(ctx, mustSynthesize=step.must_synthesize, **fac_meta),
        )
    if isinstance(step, Synthesis):
        ask = f"The discussion is over ({step.reason.replace('_', ' ')}). {SYNTHESIS_FORMAT}"
        return LLMRequest(
            system=facilitator_system(ctx), purpose="synthesis", model=facilitator.model, max_tokens=1500, timeout=timeout,
            messages=[{"role": "user", "content": f"{_brief(ctx)}\n\n{_history(ctx)}\n\n{ask}"}],
            meta=_meta(ctx, reason=step.reason, mustSynthesize=True, **fac_meta),
        )
    if isinstance(step, ParticipantTurn):
        agent = ctx.agents[step.seat_id]
        seat = ctx.seat(step.seat_id)
        question = step.question or "Share your perspective on the topic."
        ask = f"The facilitator asks you, {agent.name}: {question}\n\nAnswer in your own voice, in at most about 250 words."
        return LLMRequest(
            system=participant_system(ctx, step.seat_id), purpose="contribution", model=agent.model, max_tokens=700,
            timeout=timeout, messages=[{"role": "user", "content": f"{_brief(ctx)}\n\n{_history(ctx)}\n\n{ask}"}],
            meta=_meta(ctx, question=question, persona={"key": agent.persona_key, "name": agent.name},
                       speaker={"id": seat.id, "name": seat.name, "role": seat.role}),
        )
    raise ValueError(f"No prompt for step {step!r}")
