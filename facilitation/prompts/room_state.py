"""The room state as prompt text: the changing part that comes last in every request.

Everything the engine knows that bears on the next decision is written here in plain
words; the offline rehearsal model reads this same text (``facilitation.llm.rehearsal.reading``),
so the line formats below are shared with it and covered by round-trip tests.
"""
from facilitation.deliberation.state import Item, RoomState
from facilitation.prompts.quoting import quoted_name
from facilitation.wording import counted

ROLE_LABELS = {"participant": "participant", "devil_advocate": "devil's advocate", "observer": "observer",
               "background": "background"}
VOTING_TEXT = {
    "none": "No votes are asked in this phase.",
    "open": "Votes are asked in this phase: end your turn with VOTE: READY, CHANGES or REJECT; everyone sees them.",
    "ballot": "Independent ballot: each voter casts VOTE: READY, CHANGES or REJECT without seeing the ballots already "
              "cast; they are revealed when everyone has voted.",
}
LIST_LIMIT = 8


def quoted(text: str, limit: int = 240) -> str:
    """Someone's words inside a line: one line, shortened, as a JSON string (it cannot end early)."""
    text = " ".join(str(text or "").split())
    if len(text) > limit:
        text = text[: limit - 3].rsplit(" ", 1)[0] + "..."
    return quoted_name(text)


def name(text: str) -> str:
    """A seat's or person's name inside a line."""
    return quoted_name(text)


def seat_ref(seat_id, names: dict) -> str:
    return f"[{seat_id}] {quoted_name(names.get(seat_id, '?'))}"


def seat_line(seat, agent) -> str:
    """One seat in one line: id, name, alias, seat role, function, expertise, persona."""
    parts = [f"- [{seat.id}] {quoted_name(seat.name)}"]
    if agent is not None and agent.alias:
        parts.append(f" (@{agent.alias})")
    parts.append(f", {ROLE_LABELS.get(seat.role, seat.role)}")
    details = []
    if agent is not None:
        if agent.role_name:
            details.append(quoted_name(agent.role_name))
        if agent.expertise:
            details.append("expertise: " + quoted_name(", ".join(agent.expertise[:5])))
        persona = agent.persona_style or agent.persona_name
        if persona:
            details.append(f"persona: {quoted_name(persona)}")
    if details:
        parts.append(": " + "; ".join(details))
    if not seat.active:
        parts.append(" (absent)")
    elif seat.role == "observer":
        parts.append(" (never speaks)")
    elif seat.role == "background":
        parts.append(" (speaks only to vote)")
    return "".join(parts)


def budget_line(ctx) -> str:
    left = []
    if ctx.budget_tokens is not None:
        left.append(f"{max(0, ctx.budget_tokens - ctx.tokens_used):,} tokens")
    if ctx.budget_usd is not None:
        left.append(f"${max(0.0, ctx.budget_usd - ctx.cost_usd):.2f}")
    return "Budget left: " + " and ".join(left) + "." if left else "Budget: no limit set."


def _item_line(item: Item) -> str:
    extra = ""
    if item.kind == "todo":
        extra = f", {item.status}" + (f", owner {quoted_name(item.owner)}" if item.owner else "")
    return f"- {item.id} by {quoted_name(item.speaker)} (round {item.round}{extra}): {quoted(item.text)}"


def _items(title: str, items: list[Item], empty: str, limit: int = LIST_LIMIT) -> list[str]:
    if not items:
        return [f"{title}: {empty}"]
    shown = items[-limit:]
    head = f"{title}:" if len(shown) == len(items) else f"{title} (latest {len(shown)} of {len(items)}):"
    return [head, *(_item_line(i) for i in shown)]


def _airtime_line(state: RoomState, seat, sealed=lambda seq: False) -> str:
    air = state.airtime.get(seat.id)
    turns = air.turns if air else 0
    words = air.words if air else 0
    line = f"- [{seat.id}] {quoted_name(seat.name)}: {turns} turn{'' if turns == 1 else 's'}, {words} words"
    line += f", last heard in round {air.last_round}" if air and air.last_round is not None else ", not heard yet"
    vote = state.votes.get(seat.id)
    line += f"; vote {vote.value} (round {vote.round})" if vote and not sealed(vote.seq) else "; no vote"
    if air and air.passes:
        line += f" (passed {air.passes} time{'' if air.passes == 1 else 's'})"
    return line


def phase_lines(ctx) -> list[str]:
    """The template's current phase: its instructions, how it votes, and an open ballot's progress."""
    phase = getattr(ctx, "phase", None)
    if phase is None:
        return []
    lines = [f"Phase {ctx.phase_number} ({phase.key}): {quoted_name(phase.title)}. {phase.instructions}",
             VOTING_TEXT.get(phase.voting, "")]
    if ctx.sealed_from is not None:
        voted, voters = ctx.ballot
        verb = "has" if voted == 1 or voters == 1 else "have"  # "1 of 3 voters has voted", "2 of 3 voters have voted"
        lines.append(f"The ballot is open: {voted} of {counted(voters, 'voter')} {verb} voted. "
                     "Ballots stay sealed until everyone has voted.")
    return [line for line in lines if line]


def state_lines(ctx, *, rounds_left: int, for_facilitator: bool, full: bool = False, allowed: list[int] | None = None) -> list[str]:
    """The room state. ``full`` lists every item (the synthesis); ``allowed`` is who may speak next."""
    state = ctx.room
    limit = 1000 if full else LIST_LIMIT
    names = {s.id: s.name for s in ctx.seats}
    lines = ["## Room state",
             f"Round {ctx.round} of {ctx.max_rounds}: {rounds_left} round{'' if rounds_left == 1 else 's'} left. {budget_line(ctx)}",
             "Speaking seats (turns, words, last heard, latest vote):"]
    sealed = getattr(ctx, "sealed", lambda seq: False)
    lines[2:2] = phase_lines(ctx)
    lines += [_airtime_line(state, s, sealed) for s in ctx.speakers]
    last = ctx.last_seat_id
    lines.append(f"Last speaker: {seat_ref(last, names)}" if last is not None else "Last speaker: nobody yet")
    unheard = [seat_ref(s.id, names) for s in state.unheard]
    lines.append("Not heard yet: " + (", ".join(unheard) if unheard else "nobody"))
    mentioned = [seat_ref(i, names) for i in state.mentions]
    lines.append("Addressed with @ in the latest turn: " + (", ".join(mentioned) if mentioned else "nobody"))
    waiting = [seat_ref(i, names) for i in state.requested]
    lines.append("Asked for the floor with @, not heard since: " + (", ".join(waiting) if waiting else "nobody"))
    lines += _items("Open questions", state.open_questions, "none", limit)
    lines += _items("Open concerns", state.open_concerns, "none", limit)
    rejects = [v for v in state.standing_rejects if not sealed(v.seq)]
    lines.append("Standing REJECT votes, unanswered: " + (
        "; ".join(f"{quoted_name(v.speaker)} (round {v.round}): {quoted(v.text, 160)}" for v in rejects) if rejects else "none"))
    lines += _items("Decisions on record", state.decisions, "none", limit)
    lines += _items("TODOs", [t for t in state.todos if t.status != "done" or full], "none", limit)
    if for_facilitator:
        asked = state.last_asked
        if asked is None:
            lines.append("Your previous question: none yet.")
        else:
            outcome = {None: "that turn has not been taken yet", True: "answered"}.get(asked.answered, f"not answered ({asked.turn_status.replace('_', ' ') or 'no answer'})")
            lines.append(f"Your previous question (round {asked.round}, to {seat_ref(asked.seat_id, names)}): {quoted(asked.text, 300)}: {outcome}.")
        if allowed is not None:
            lines.append("May speak next: " + (", ".join(seat_ref(i, names) for i in allowed) if allowed else "nobody"))
    return lines
