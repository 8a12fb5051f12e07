"""A fake OpenAI-compatible Chat Completions API on loopback.

Answers ``POST /v1/chat/completions`` and ``POST /chat/completions`` with the real
response and error shapes, like a local Ollama, vLLM or llama.cpp server. Point
the SDK at it with ``openai.OpenAI(base_url=server.url, api_key=...)``; ``url``
ends in ``/v1`` as those servers' base URLs do.

Cached prompt tokens are imitated: a system message seen before is reported in
``usage.prompt_tokens_details.cached_tokens``. Pass ``usage_details=False`` to
leave the details out, as many local servers do.

Structured output: a ``response_format`` of type ``json_schema`` is accepted unless
``json_schema=False`` (then a 400 like a server without structured outputs); a
responder's dict is sent back as JSON text.
"""
import hashlib
import itertools
import json
import time

from tests.fakes import FakeServer, Reply

ERRORS = {  # status: (type, code)
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def tokens(text: str) -> int:
    return len(text) // 4 + 1 if text else 0


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class FakeOpenAIServer(FakeServer):
    paths = ("/v1/chat/completions", "/chat/completions")

    def __init__(self, responder=None, *, api_key: str | None = None, usage_details: bool = True, json_schema: bool = True):
        self.usage_details = usage_details
        self.json_schema = json_schema
        self._ids = itertools.count(1)
        self._seen_systems: set[str] = set()
        super().__init__(responder, api_key=api_key)

    @property
    def url(self) -> str:
        """The base URL for the SDK (it appends ``/chat/completions`` itself)."""
        return self.root + "/v1"

    def presented_key(self, headers: dict) -> str | None:
        auth = headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def error_reply(self, status: int, message: str = "", retry_after=None) -> Reply:
        kind, code = ERRORS.get(status, ("server_error", None))
        payload = {"error": {"message": message or f"Fake error {status}.", "type": kind, "param": None, "code": code}}
        headers = {"x-request-id": f"req_fake{next(self._ids):06d}"}
        if retry_after is not None:
            headers["retry-after"] = retry_after
        return Reply(status, payload, headers)

    def _usage(self, messages: list, text: str) -> dict:
        prompt = sum(tokens(_text(m.get("content"))) for m in messages)
        usage = {"prompt_tokens": prompt, "completion_tokens": tokens(text)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if self.usage_details:
            system = "\x00".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
            key = hashlib.sha256(system.encode()).hexdigest()
            with self._lock:
                seen = bool(system) and key in self._seen_systems
                self._seen_systems.add(key)
            usage["prompt_tokens_details"] = {"cached_tokens": tokens(system) if seen else 0}
        return usage

    def handle(self, record: dict) -> Reply:
        body = record["body"]
        messages = body.get("messages")
        if not isinstance(body.get("model"), str) or not body["model"]:
            return self.error_reply(400, "you must provide a model parameter")
        if not isinstance(messages, list) or not messages:
            return self.error_reply(400, "'messages' must contain at least one message")
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema" and not self.json_schema:
            return self.error_reply(400, "response_format of type 'json_schema' is not supported by this server")
        answer = self.responder(body)
        text = json.dumps(answer) if isinstance(answer, dict) else str(answer)
        completion = {
            "id": f"chatcmpl-fake{next(self._ids):06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "system_fingerprint": None,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": self._usage(messages, text),
        }
        return Reply(200, completion)
