"""Any OpenAI-compatible Chat Completions endpoint (OpenAI, or a local Ollama, vLLM or llama.cpp server).

A request with a ``response_schema`` asks for a ``json_schema`` response format (strict).
A server that refuses it with a 400 about the response format is asked again in plain
JSON mode (the prompt already asks for JSON), and remembered as one that does not
support it, for the life of the process.
"""
import re
import threading
import time

import openai

from facilitation.llm.base import LLMRequest, LLMResponse, Provider, TerminalLLMError, TransientLLMError, plain_messages
from facilitation.llm.http_errors import status_error

DEFAULT_MODEL = "gpt-4o-mini"
# Local servers ignore the key, but the SDK insists on having one.
PLACEHOLDER_KEY = "not-needed"
_FORMAT_REFUSED = re.compile(r"response_format|json_schema|structured output|schema", re.IGNORECASE)
# Base URLs whose server refused a JSON-schema response format.
_no_json_schema: set[str] = set()
_lock = threading.Lock()


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
        self.base_url = str(getattr(client, "base_url", "") or base_url)

    @classmethod
    def from_settings(cls) -> "OpenAIProvider":
        from django.conf import settings

        return cls.shared(
            base_url=settings.LLM.get("OPENAI_BASE_URL", ""),
            api_key=settings.LLM.get("OPENAI_API_KEY", ""),
            model=settings.CONVENE.get("DEFAULT_MODEL") or DEFAULT_MODEL,
        )

    def supports_json_schema(self) -> bool:
        with _lock:
            return self.base_url not in _no_json_schema

    def _create(self, request: LLMRequest, messages: list[dict], schema: bool):
        params = {"model": request.model or self.model, "messages": messages, "max_tokens": request.max_tokens,
                  "temperature": request.temperature, "timeout": request.timeout}
        if schema:
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.response_name or "answer", "schema": request.response_schema, "strict": True}}
        return self.client.chat.completions.create(**params)

    def complete(self, request: LLMRequest) -> LLMResponse:
        messages = plain_messages(request)
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        schema = bool(request.response_schema) and self.supports_json_schema()
        started = time.monotonic()
        try:
            try:
                completion = self._create(request, messages, schema)
            except openai.BadRequestError as exc:
                if not schema or not _FORMAT_REFUSED.search(str(exc)):
                    raise
                with _lock:
                    _no_json_schema.add(self.base_url)
                completion = self._create(request, messages, False)
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
