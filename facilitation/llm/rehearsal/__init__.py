"""The offline rehearsal provider: the default model when no real one is configured.

It reads only the prompt text, as a real model does (``reading.read_prompt``): the
room brief and seats from the system prompt, the rolling summaries, the latest turns
and the room state from the messages. Nothing else of the request is looked at. From
the task in the text it writes what a room needs to run end to end:

- an opening or evaluation: a pure JSON decision (``"rehearsal": true`` inside),
  choosing the next speaker the way the facilitator's selection policy says;
- a participant's turn: a short Markdown turn in the speaker's persona voice, rich in
  markers (``Q:``, ``CONCERN:``, ``DECISION:``, ``TODO:``, ``VOTE:``, ``@mention``);
- a conclusion: an extractive synthesis shaped by the facilitator persona, accounting
  for every decision and open item the room state lists;
- anything else (narratives, minutes ...): a short extractive summary.

Every text except the JSON decisions starts with ``LABEL`` on its own line.
It is deterministic: any variation is seeded from a hash of the prompt text.
"""
import json
import time

from facilitation.llm.base import LLMRequest, LLMResponse, Provider, estimate_tokens, message_text
from facilitation.llm.rehearsal.contributions import contribution
from facilitation.llm.rehearsal.decisions import FACILITATOR_STYLES, decision
from facilitation.llm.rehearsal.reading import read_prompt
from facilitation.llm.rehearsal.room import Room
from facilitation.llm.rehearsal.synthesis import generic, synthesis
from facilitation.llm.rehearsal import workspace
from facilitation.llm.rehearsal.text import LABEL

__all__ = ["FACILITATOR_STYLES", "LABEL", "RehearsalProvider"]


def answer(system: str, user: str) -> str:
    """What the rehearsal model writes for this prompt text."""
    reading = read_prompt(system or "", user or "")
    room = Room(reading, reading.kind)
    if reading.kind in ("opening", "evaluation"):
        return json.dumps(decision(room), ensure_ascii=False)
    if reading.kind == "contribution":
        return contribution(room)
    if reading.kind == "synthesis":
        return synthesis(room)
    return generic(room)


class RehearsalProvider(Provider):
    """Offline, deterministic stand-in for a language model (always labelled as such)."""

    name = "rehearsal"
    offline = True
    model = "rehearsal"

    def __init__(self, pace: float = 0.0):
        #: Seconds each answer takes, so a person can watch a rehearsal unfold (the demo sets it).
        self.pace = pace
        self.inline = pace <= 0

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        if self.pace > 0:
            time.sleep(self.pace)
        user = "\n\n".join(message_text(m) for m in request.messages or [] if not isinstance(m, dict) or m.get("role", "user") == "user")
        if workspace.is_workspace_prompt(user):
            text = workspace.answer(request.system, user)
        else:
            text = answer(request.system, user)
        return LLMResponse(
            text=text, provider=self.name, model=self.model,
            input_tokens=estimate_tokens((request.system or "") + user), output_tokens=estimate_tokens(text),
            latency_ms=int((time.perf_counter() - started) * 1000),
        )
