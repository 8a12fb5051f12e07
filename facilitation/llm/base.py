"""The one seam to language models.

A provider takes an ``LLMRequest`` (a stable system prefix, messages, limits and
structured ``meta`` describing what is asked) and returns an ``LLMResponse`` with
the text and usage, or raises ``TransientLLMError`` (worth retrying or falling
back) or ``TerminalLLMError`` (not worth it).
"""
import threading
from collections import OrderedDict
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
    #: A few facts about the request for logging and the scripted test model (round,
    #: question, speaker ...). Every provider that writes text decides from the prompt only.
    meta: dict = field(default_factory=dict)
    #: When set, the answer must be one JSON object of this schema: a forced tool call
    #: named ``response_name`` (Anthropic) or a JSON-schema response format (OpenAI).
    response_schema: dict | None = None
    response_name: str = ""


def message_text(message) -> str:
    """A message's text: a plain string, or its text blocks joined."""
    content = message.get("content", "") if isinstance(message, dict) else message
    if isinstance(content, list):
        return "\n\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
    return str(content or "")


def prompt_text(request: "LLMRequest") -> str:
    """Everything a model is shown: the system prompt, then every message's text."""
    return "\n\n".join([request.system or "", *(message_text(m) for m in request.messages or [])])


def plain_messages(request: "LLMRequest") -> list[dict]:
    """The messages with block lists flattened to strings (for providers without blocks)."""
    return [{"role": m.get("role", "user"), "content": message_text(m)} for m in request.messages or []]


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


#: At most this many shared providers per process (each configuration one; the least recently used goes).
SHARED_MAX = 16
_shared: "OrderedDict[tuple, Provider]" = OrderedDict()
_shared_lock = threading.Lock()


class Provider:
    name = "base"
    #: True when the text is not written by a real model (shown as an offline rehearsal).
    offline = False
    #: True when the answer is worked out in this process at once, with nothing to wait for (no network, no
    #: sleep): the engine then calls the model in the step's own thread instead of handing it to a helper.
    inline = False

    @classmethod
    def shared(cls, **config) -> "Provider":
        """This process's instance of the provider for ``config``, made on first use.

        A network provider's SDK client is thread-safe and keeps its connections (and its TLS
        context) from one call to the next; making one costs about 20 ms of CPU, more than a step's
        own work, and every new client opens a new connection.
        """
        key = (cls, tuple(sorted(config.items())))
        with _shared_lock:
            found = _shared.get(key)
            if found is None:
                found = _shared[key] = cls(**config)
            _shared.move_to_end(key)
            while len(_shared) > SHARED_MAX:
                _shared.popitem(last=False)
            return found

    def complete(self, request: LLMRequest) -> LLMResponse:  # pragma: no cover - interface
        raise NotImplementedError


def estimate_tokens(text: str) -> int:
    """A cheap, conservative token estimate (about 4 characters a token)."""
    return max(1, len(text) // 4 + 1)
