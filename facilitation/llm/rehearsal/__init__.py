"""The offline rehearsal provider: the default model when no real one is configured.

It never sees the prompt text. It reads ``request.purpose`` and the structured
``request.meta`` and writes what a room needs to run end to end:

- ``opening`` / ``evaluation``: a pure JSON decision (``"rehearsal": true`` inside),
  choosing the next speaker the way the facilitator persona would;
- ``contribution``: a short Markdown turn in the speaker's persona voice, rich in
  markers (``Q:``, ``CONCERN:``, ``DECISION:``, ``TODO:``, ``VOTE:``, ``@mention``);
- ``synthesis``: an extractive conclusion built from the gathered points and recent
  turns, shaped by the facilitator persona;
- anything else (narratives, minutes ...): a short extractive summary.

Every text except the JSON decisions starts with ``LABEL`` on its own line.
It is deterministic: any variation is seeded from a hash of the request's meta, so
the same request always gives the same text. It never sleeps.
"""
import json
import time

from facilitation.llm.base import LLMRequest, LLMResponse, Provider, estimate_tokens
from facilitation.llm.rehearsal.contributions import contribution
from facilitation.llm.rehearsal.decisions import FACILITATOR_STYLES, decision
from facilitation.llm.rehearsal.synthesis import generic, synthesis
from facilitation.llm.rehearsal.text import LABEL

__all__ = ["FACILITATOR_STYLES", "LABEL", "RehearsalProvider"]


def _prompt_text(request: LLMRequest) -> str:
    parts = [request.system or ""]
    for message in request.messages or []:
        content = message.get("content", "") if isinstance(message, dict) else message
        if isinstance(content, list):
            parts.extend(str(block.get("text", "")) if isinstance(block, dict) else str(block) for block in content)
        else:
            parts.append(str(content))
    return "\n".join(parts)


class RehearsalProvider(Provider):
    """Offline, deterministic stand-in for a language model (always labelled as such)."""

    name = "rehearsal"
    offline = True
    model = "rehearsal"

    def __init__(self, pace: float = 0.0):
        #: Seconds each answer takes, so a person can watch a rehearsal unfold (the demo sets it).
        self.pace = pace

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        if self.pace > 0:
            time.sleep(self.pace)
        meta = request.meta or {}
        purpose = request.purpose
        if purpose in ("opening", "evaluation"):
            text = json.dumps(decision(purpose, meta), ensure_ascii=False)
        elif purpose == "contribution":
            text = contribution(meta)
        elif purpose == "synthesis":
            text = synthesis(meta)
        else:
            text = generic(purpose, meta)
        return LLMResponse(
            text=text, provider=self.name, model=self.model,
            input_tokens=estimate_tokens(_prompt_text(request)), output_tokens=estimate_tokens(text),
            latency_ms=int((time.perf_counter() - started) * 1000),
        )
