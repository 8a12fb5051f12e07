"""Claude through the official ``anthropic`` SDK.

Prompt caching: the system prompt carries a ``cache_control`` breakpoint, and so do
the message blocks the prompt builder marked (the rolling summaries and the latest
turn); at most four breakpoints are sent, the latest ones kept. A request with a
``response_schema`` forces a tool call (``tool_choice``) whose input is the answer;
the tool's input comes back as the response text, as JSON.
"""
import json
import time

import anthropic

from facilitation.llm.base import LLMRequest, LLMResponse, Provider, TerminalLLMError, TransientLLMError
from facilitation.llm.http_errors import status_error

DEFAULT_MODEL = "claude-sonnet-5"
MAX_BREAKPOINTS = 4


def _messages(messages: list[dict], room: int) -> list[dict]:
    """Copies of the messages keeping only the last ``room`` cache breakpoints."""
    out = [{**m, "content": [dict(b) for b in m["content"]]} if isinstance(m.get("content"), list) else dict(m) for m in messages]
    marked = [b for m in out if isinstance(m.get("content"), list) for b in m["content"] if b.get("cache_control")]
    for block in marked[: max(0, len(marked) - room)]:
        block.pop("cache_control", None)
    return out


class AnthropicProvider(Provider):
    name = "anthropic"

    def __init__(self, api_key: str = "", base_url: str = "", model: str = DEFAULT_MODEL, client=None):
        self.model = model or DEFAULT_MODEL
        # The engine owns retries and the fallback chain owns failover, so the SDK must not retry.
        self.client = client or anthropic.Anthropic(api_key=api_key or None, base_url=base_url or None, max_retries=0)

    @classmethod
    def from_settings(cls) -> "AnthropicProvider":
        from django.conf import settings

        return cls.shared(
            api_key=settings.LLM.get("ANTHROPIC_API_KEY", ""),
            base_url=settings.LLM.get("ANTHROPIC_BASE_URL", ""),
            model=settings.CONVENE.get("DEFAULT_MODEL") or DEFAULT_MODEL,
        )

    def _params(self, request: LLMRequest) -> dict:
        # No temperature: SDK 2.x speaks API version 2026-10-21, which refuses sampling
        # parameters (temperature, top_p, top_k) with a 400, so request.temperature is not sent.
        params = {
            "model": request.model or self.model,
            "messages": _messages(request.messages, MAX_BREAKPOINTS - (1 if request.system else 0)),
            "max_tokens": request.max_tokens,
            "timeout": request.timeout,
        }
        if request.system:  # the API refuses empty text blocks
            params["system"] = [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}]
        if request.response_schema:
            name = request.response_name or "answer"
            params["tools"] = [{"name": name, "description": "Record the answer.", "input_schema": request.response_schema}]
            params["tool_choice"] = {"type": "tool", "name": name}
        return params

    @staticmethod
    def _text(message, request: LLMRequest) -> str:
        """The tool's input as JSON when a tool was forced, else the text blocks."""
        if request.response_schema:
            for block in message.content:
                if getattr(block, "type", "") == "tool_use":
                    return json.dumps(block.input, ensure_ascii=False)
        return "".join(block.text for block in message.content if getattr(block, "type", "") == "text")

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.monotonic()
        try:
            message = self.client.messages.create(**self._params(request))
        except anthropic.AnthropicError as exc:
            raise self._translate(exc) from exc
        except TypeError as exc:
            if "authentication method" not in str(exc):  # a programming error: let it show
                raise
            raise TerminalLLMError(f"Anthropic client has no credentials: {exc}", provider=self.name) from exc
        latency_ms = int((time.monotonic() - started) * 1000)
        usage = message.usage
        return LLMResponse(
            text=self._text(message, request),
            provider=self.name,
            model=message.model or request.model or self.model,
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_read_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
            cache_write_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
            latency_ms=latency_ms,
        )

    def _translate(self, exc: anthropic.AnthropicError):
        if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
            return TransientLLMError(f"Anthropic unreachable: {exc}", provider=self.name)
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            message = f"Anthropic {status}: {getattr(exc, 'api_message', None) or exc.message}"
            return status_error(self.name, status, message, exc.response.headers)
        # Missing credentials, or a response the SDK could not read: another attempt would fare the same.
        return TerminalLLMError(f"Anthropic error: {exc}", provider=self.name)
