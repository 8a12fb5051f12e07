"""Builds model requests from a room's context and the engine's step.

A request is laid out append-only, most stable first, so prompt caching engages:

1. the system prompt (cached): persona, role and seat instructions, the preset's
   selection policy and conclusion structure, markers, and the room brief with every
   seat's role, expertise and persona;
2. the rolling summaries of finished turns, one block per fixed chunk (cached);
3. the latest turns verbatim, one block each, delimited as data (cached up to the last);
4. what changes every call: the room state (round, budget, airtime, votes, open items,
   the facilitator's previous question) and the task or question.

Everything people wrote is quoted as data (``prompts.quoting``): blocks in tags, names and
short texts inside a line as JSON strings.

Blocks are Anthropic-style text blocks; ``cache_control`` marks the breakpoints. Other
providers flatten them. The whole transcript is never replayed.
"""
from functools import lru_cache

from facilitation.context import AgentView, RoomContext
from facilitation.engine import Evaluation, Opening, ParticipantTurn, SeatInfo, Synthesis, eligible
from facilitation.llm import LLMRequest
from facilitation.prompts.decision_schema import DECISION_TOOL, decision_schema
from facilitation.prompts.instructions import (
    ALWAYS_SECTIONS, DECISION_FORMAT, FACILITATOR_GUIDE, FORMAT_SECTIONS, FORMATS, MARKERS,
    PARTICIPANT_GUIDE, SEAT_ROLES, STRICT_FAIRNESS, SYNTHESIS_GUIDE,
)
from facilitation.prompts.quoting import DATA_RULES, quote_user_text, quoted_name
from facilitation.prompts.room_state import ROLE_LABELS, quoted, seat_line, state_lines
from facilitation.presets import GENERIC_FACILITATOR, get_preset

CACHE = {"type": "ephemeral"}
SYNTHESIS_REASONS = {
    "decided": "the facilitator judged the topic covered",
    "max_rounds": "the round limit was reached",
    "budget": "the budget ran out",
    "forced": "it was concluded on request",
    "no_speakers": "nobody is left who can speak",
    "consensus": "the room reached consensus in its last phase",
}


def _block(text: str, cache: bool = False) -> dict:
    block = {"type": "text", "text": text}
    if cache:
        block["cache_control"] = dict(CACHE)
    return block


def brief(ctx: RoomContext) -> str:
    return _brief(ctx.topic, ctx.format, ctx.max_rounds, tuple(ctx.seats), tuple(ctx.agents.get(s.id) for s in ctx.seats))


# The system prompts are made of the seats' views and the room's settings only, which stay as they are from one
# step of a room to the next (``context.AgentView`` and ``SeatInfo`` are frozen): each is written once and kept.
@lru_cache(maxsize=256)
def _brief(topic: str, format: str, max_rounds: int, seats: tuple, agents: tuple) -> str:
    lines = ["## The room", quote_user_text("topic", topic), FORMATS.get(format, f"Format: {format}."),
             f"Rounds: at most {max_rounds}; a round is one speaker's turn.",
             "Seats ([id] name (@alias), seat role: function; expertise; persona):"]
    lines += [seat_line(s, agent) for s, agent in zip(seats, agents)]
    return "\n".join(lines)


def _sections(preset: dict | None, format: str) -> list[str]:
    preset = preset or GENERIC_FACILITATOR
    sections = list(preset.get("synthesis") or GENERIC_FACILITATOR["synthesis"])
    extra = FORMAT_SECTIONS.get(format)
    if extra and not any(extra.split(":")[0].lower() in s.lower() for s in sections):
        sections.insert(0 if format == "review" else len(sections), extra)
    return sections + list(ALWAYS_SECTIONS)


def facilitator_system(ctx: RoomContext) -> str:
    return _facilitator_system(ctx.facilitator, ctx.format, ctx.strict_fairness, brief(ctx))


@lru_cache(maxsize=256)
def _facilitator_system(facilitator: AgentView, format: str, strict: bool, room_brief: str) -> str:
    preset = get_preset(facilitator.persona_key) if facilitator.persona_key else None  # as ``RoomContext.preset``
    policy_name = preset["name"] if preset else "your own"
    selection = (preset or GENERIC_FACILITATOR)["selection"]
    sections = "\n".join(f"{n}. {s}" for n, s in enumerate(_sections(preset, format), start=1))
    guide = FACILITATOR_GUIDE.format(strict=STRICT_FAIRNESS if strict else "", decision_format=DECISION_FORMAT)
    persona = facilitator.persona_prompt
    return "\n\n".join(p for p in (
        quote_user_text("persona", persona) if persona else GENERIC_FACILITATOR["prompt"],
        f"## Your selection policy ({policy_name})\n{selection}",
        f"## Your conclusion\n{SYNTHESIS_GUIDE}\n{sections}",
        SEAT_ROLES["facilitator"], guide, MARKERS, DATA_RULES, room_brief,
    ) if p)


def participant_system(ctx: RoomContext, seat_id: int) -> str:
    return _participant_system(ctx.agents[seat_id], ctx.seat(seat_id), brief(ctx))


@lru_cache(maxsize=256)
def _participant_system(agent: AgentView, seat: SeatInfo, room_brief: str) -> str:
    me = f"You are: [{seat.id}] {quoted_name(seat.name)}" + (f" (@{agent.alias})" if agent.alias else "") + f", {ROLE_LABELS.get(seat.role, seat.role)}."
    return "\n\n".join(p for p in (
        agent.persona_prompt and quote_user_text("persona", agent.persona_prompt),
        agent.role_prompt and quote_user_text("role_prompt", agent.role_prompt),
        SEAT_ROLES.get(seat.role, ""), PARTICIPANT_GUIDE, MARKERS, DATA_RULES, room_brief, me,
    ) if p)


def turn_block_text(turn: dict) -> str:
    body = str(turn.get("content") or "").strip() or f"(no answer: {str(turn.get('status') or 'empty').replace('_', ' ')})"
    if turn.get("passed"):
        body = "(passed: nothing to add)"
    return quote_user_text("turn", body, seat=turn.get("seatId"), speaker=turn.get("speaker") or "someone",
                           role=ROLE_LABELS.get(turn.get("role"), turn.get("role")), round=turn.get("round"))


def history_blocks(ctx: RoomContext, mark_recent: bool = True) -> list[dict]:
    """Narratives, rolling summaries and the latest turns, each a block; breakpoints on the last summary and (with
    ``mark_recent``) the last turn."""
    blocks = []
    if ctx.narratives:
        blocks.append(_block("## Narratives of earlier rounds\n" + "\n".join(quote_user_text("summary", n) for n in ctx.narratives)))
    for n, chunk in enumerate(ctx.summaries):
        head = "## Earlier turns in summary\n" if n == 0 else ""
        blocks.append(_block(head + quote_user_text("summary", chunk), cache=n == len(ctx.summaries) - 1))
    recent = ctx.recent
    for n, turn in enumerate(recent):
        head = "## Latest turns\n" if n == 0 else ""
        blocks.append(_block(head + turn_block_text(turn), cache=mark_recent and n == len(recent) - 1))
    return blocks


def _request(ctx: RoomContext, *, system: str, changing: str, purpose: str, model: str, max_tokens: int, timeout: float,
             meta: dict, schema: dict | None = None, mark_recent: bool = True) -> LLMRequest:
    blocks = history_blocks(ctx, mark_recent) + [_block(changing)]
    return LLMRequest(
        system=system, messages=[{"role": "user", "content": blocks}], purpose=purpose, model=model, max_tokens=max_tokens,
        timeout=timeout, meta=meta, response_schema=schema, response_name=DECISION_TOOL if schema else "",
    )


def _meta(ctx: RoomContext, **extra) -> dict:
    """For logging and the scripted test model only: no provider decides from it."""
    meta = {"round": ctx.round, "maxRounds": ctx.max_rounds, "lastSpeakerId": ctx.last_seat_id,
            "speakers": [{"id": s.id, "name": s.name, "role": s.role} for s in ctx.speakers]}
    meta.update(extra)
    return meta


def _omission_lines(omissions: list[dict]) -> list[str]:
    return [f"- {o.get('id') or o.get('kind')} by {quoted_name(o.get('by') or 'someone')}: {quoted(o.get('text'), 200)}" for o in omissions]


def for_step(ctx: RoomContext, step, timeout: float, *, omissions: list[dict] | None = None) -> LLMRequest:
    fac = ctx.facilitator
    fac_speaker = {"id": fac.seat_id, "name": fac.name, "role": "facilitator"}
    if isinstance(step, (Opening, Evaluation)):
        opening = isinstance(step, Opening)
        rounds_left = ctx.max_rounds - ctx.round if opening else step.rounds_left
        allowed = eligible(ctx.guardrail_facts(rounds_left))
        state = state_lines(ctx, rounds_left=rounds_left, for_facilitator=True, allowed=allowed)
        if opening:
            task = "Open the discussion: choose the first speaker and the opening question for them."
        elif step.must_synthesize:
            task = 'Evaluate the latest turn. No rounds remain: you must decide "synthesize".'
        else:
            left = step.rounds_left
            task = (f"Evaluate the latest turn. {left} round{'s' if left != 1 else ''} remain{'s' if left == 1 else ''}. "
                    "Continue with a next speaker and a question, or synthesize if the topic is covered for your policy.")
        changing = "\n".join(state) + f"\n\n## Your task\n{task}\nRespond with your decision as described above."
        return _request(ctx, system=facilitator_system(ctx), changing=changing, purpose="opening" if opening else "evaluation",
                        model=fac.model, max_tokens=600, timeout=timeout, meta=_meta(ctx, speaker=fac_speaker),
                        schema=decision_schema([s.id for s in ctx.speakers]))
    if isinstance(step, Synthesis):
        rounds_left = max(0, ctx.max_rounds - ctx.round)
        state = state_lines(ctx, rounds_left=rounds_left, for_facilitator=True, full=True)
        why = SYNTHESIS_REASONS.get(step.reason, step.reason.replace("_", " "))
        task = [f"## Your task\nThe discussion is over: {why}. Write the conclusion now, with the sections described above."]
        if omissions:
            task.append("Your previous draft left these items out. Write the complete conclusion again and account for each of them:")
            task += _omission_lines(omissions)
        changing = "\n".join(state) + "\n\n" + "\n".join(task)
        return _request(ctx, system=facilitator_system(ctx), changing=changing, purpose="synthesis", model=fac.model,
                        max_tokens=2000, timeout=timeout, meta=_meta(ctx, reason=step.reason, speaker=fac_speaker))
    if isinstance(step, ParticipantTurn):
        agent = ctx.agents[step.seat_id]
        seat = ctx.seat(step.seat_id)
        question = step.question or "Share your perspective on the topic."
        rounds_left = max(0, ctx.max_rounds - ctx.round)
        state = state_lines(ctx, rounds_left=rounds_left, for_facilitator=False)
        changing = "\n".join(state) + (f"\n\n## Your turn\nThe facilitator asks you, {quoted_name(agent.name)}:\n"
                                       f"{quote_user_text('question', question)}\n\nAnswer in your own voice, in at most about 250 words.")
        return _request(ctx, system=participant_system(ctx, step.seat_id), changing=changing, purpose="contribution",
                        model=agent.model, max_tokens=700, timeout=timeout, mark_recent=False,
                        meta=_meta(ctx, question=question, speaker={"id": seat.id, "name": seat.name, "role": seat.role}))
    raise ValueError(f"No prompt for step {step!r}")
