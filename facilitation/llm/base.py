"""The one seam to language models.

A provider takes an ``LLMRequest`` (a stable system prefix, messages, limits and
structured ``meta`` describing what is asked) and returns an ``LLMResponse`` with
the text and usage, or raises ``TransientLLMError`` (worth retrying or falling
back) or ``TerminalLLMError`` (not worth it).
"""
from dataclasses import dataclass, field


@dataclass
class LLMRequest:
    system: str
    messages: list[dict]
    purpose: str  # "opening" | "evaluation" | "contribution" | "synthesis" | other component names
    model: str = ""
    max_tokens: int = 1024
    temperature: float = 0.7
    timeout: float = 90.0
    # Structured view of the same request, for offline providers and logging:
    # topic, format, persona (key, name), role, speakers [{id, name, role}], question,
    # round, maxRounds, mustSynthesize, recent [{speaker, content, markers}], digest [..]
    meta: dict = field(default_factory=dict)


@dataclass
class LLMResponse:
    text: str
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    latency_ms: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens


class LLMError(Exception):
    def __init__(self, message: str, *, provider: str = "", status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.provider = provider
        self.status = status
        self.retry_after = retry_after


class TransientLLMError(LLMError):
    """Rate limits, overload, server errors, connection problems and timeouts."""


class TerminalLLMError(LLMError):
    """Bad requests, authentication and permission errors: retrying will not help."""


class Provider:
    name = "base"
    #: True when the text is not written by a real model (shown as an offline rehearsal).
    offline = False

    def complete(self, request: LLMRequest) -> LLMResponse:  # pragma: no cover - interface
        raise NotImplementedError


def estimate_tokens(text: str) -> int:
    """A cheap, conservative token estimate (about 4 characters a token)."""
    return max(1, len(text) // 4 + 1)
