"""Any OpenAI-compatible Chat Completions endpoint (OpenAI, or a local Ollama, vLLM or llama.cpp server)."""
import time

import openai

from facilitation.llm.base import LLMRequest, LLMResponse, Provider, TerminalLLMError, TransientLLMError
from facilitation.llm.http_errors import status_error

DEFAULT_MODEL = "gpt-4o-mini"
# Local servers ignore the key, but the SDK insists on having one.
PLACEHOLDER_KEY = "not-needed"


class OpenAIProvider(Provider):
    name = "openai"

    def __init__(self, base_url: str = "", api_key: str = "", model: str = DEFAULT_MODEL, client=None):
        self.model = model or DEFAULT_MODEL
        if client is None:
            options = {"api_key": api_key or PLACEHOLDER_KEY, "max_retries": 0}
            if base_url:
                options["base_url"] = base_url
            client = openai.OpenAI(**options)
        self.client = client

    @classmethod
    def from_settings(cls) -> "OpenAIProvider":
        from django.conf import settings

        return cls(
            base_url=settings.LLM.get("OPENAI_BASE_URL", ""),
            api_key=settings.LLM.get("OPENAI_API_KEY", ""),
            model=settings.CONVENE.get("DEFAULT_MODEL") or DEFAULT_MODEL,
        )

    def complete(self, request: LLMRequest) -> LLMResponse:
        messages = list(request.messages)
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        started = time.monotonic()
        try:
            completion = self.client.chat.completions.create(
                model=request.model or self.model,
                messages=messages,
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                timeout=request.timeout,
            )
        except openai.OpenAIError as exc:
            raise self._translate(exc) from exc
        latency_ms = int((time.monotonic() - started) * 1000)
        usage = completion.usage
        details = getattr(usage, "prompt_tokens_details", None)
        cached = (getattr(details, "cached_tokens", None) or 0) if details else 0
        prompt = (usage.prompt_tokens or 0) if usage else 0
        text = completion.choices[0].message.content if completion.choices else ""
        return LLMResponse(
            text=text or "",
            provider=self.name,
            model=completion.model or request.model or self.model,
            # OpenAI counts cached tokens inside prompt_tokens; split them out as Anthropic does.
            input_tokens=max(0, prompt - cached),
            output_tokens=(usage.completion_tokens or 0) if usage else 0,
            cache_read_tokens=cached,
            latency_ms=latency_ms,
        )

    def _translate(self, exc: openai.OpenAIError):
        if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
            return TransientLLMError(f"OpenAI-compatible endpoint unreachable: {exc}", provider=self.name)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            message = f"OpenAI-compatible endpoint {status}: {exc.message}"
            return status_error(self.name, status, message, exc.response.headers)
        return TerminalLLMError(f"OpenAI-compatible endpoint error: {exc}", provider=self.name)
