"""A fake Anthropic Messages API (``POST /v1/messages``) on loopback.

Point the real SDK at it with ``anthropic.Anthropic(base_url=server.url, api_key=...)``
(or ``ANTHROPIC_BASE_URL=server.url``). Replies use the real response and error
shapes. Prompt caching is imitated: the prefix up to the last block marked with
``cache_control`` is written to the cache the first time it is seen and read from
it afterwards, so usage reports ``cache_creation_input_tokens`` then
``cache_read_input_tokens``. Like API version 2026-10-21, it refuses
``temperature``, ``top_p`` and ``top_k`` with a 400 when that version is sent::

    with FakeAnthropicServer(responder=lambda body: "Agreed.") as server:
        server.fail_next(429, retry_after=3)
        ...
        server.requests[-1]["body"]["system"]
"""
import hashlib
import itertools

from tests.fakes import FakeServer, Reply

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "The requested resource could not be found.",
    429: "Number of request tokens has exceeded your per-minute rate limit.",
    500: "Internal server error.",
    529: "Overloaded",
}


# From API version 2026-10-21 (what SDK 2.x sends) sampling parameters are refused outright.
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")
SAMPLING_REFUSED_FROM = "2026-10-21"


def tokens(text: str) -> int:
    return len(text) // 4 + 1 if text else 0


def _blocks_in_order(body: dict):
    """(text, has_cache_control) for every text block of the prompt, system first."""
    system = body.get("system")
    if isinstance(system, str):
        yield system, False
    elif isinstance(system, list):
        for block in system:
            yield block.get("text", ""), bool(block.get("cache_control"))
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            yield content, False
        else:
            for block in content or []:
                yield block.get("text", ""), bool(block.get("cache_control"))


class FakeAnthropicServer(FakeServer):
    paths = ("/v1/messages",)

    def __init__(self, responder=None, *, api_key: str | None = None):
        self._ids = itertools.count(1)
        self._cached_prefixes: set[str] = set()
        super().__init__(responder, api_key=api_key)

    @property
    def url(self) -> str:
        """The base URL for the SDK (it appends ``/v1/messages`` itself)."""
        return self.root

    def presented_key(self, headers: dict) -> str | None:
        if "x-api-key" in headers:
            return headers["x-api-key"]
        auth = headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def error_reply(self, status: int, message: str = "", retry_after=None) -> Reply:
        kind = ERROR_TYPES.get(status, "api_error")
        request_id = f"req_fake{next(self._ids):06d}"
        payload = {
            "type": "error",
            "error": {"type": kind, "message": message or DEFAULT_MESSAGES.get(status, "Error.")},
            "request_id": request_id,
        }
        headers = {"request-id": request_id}
        if retry_after is not None:
            headers["retry-after"] = retry_after
        return Reply(status, payload, headers)

    def _invalid(self, body: dict, headers: dict) -> str:
        if headers.get("anthropic-version", "") >= SAMPLING_REFUSED_FROM:
            for name in SAMPLING_PARAMETERS:
                if name in body:
                    return f"{name}: Extra inputs are not permitted"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "model: Field required"
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: at least one message is required"
        if any(m.get("role") not in ("user", "assistant") for m in messages):
            return "messages: roles must be 'user' or 'assistant'"
        if isinstance(body.get("system"), list) and any(not b.get("text") for b in body["system"]):
            return "system: text content blocks must be non-empty"
        return ""

    def _usage(self, body: dict, text: str) -> dict:
        blocks = list(_blocks_in_order(body))
        total = sum(tokens(t) for t, _ in blocks)
        marks = [i for i, (_, cached) in enumerate(blocks) if cached]
        written = read = 0
        if marks:
            prefix = blocks[: marks[-1] + 1]
            size = sum(tokens(t) for t, _ in prefix)
            key = hashlib.sha256("\x00".join(t for t, _ in prefix).encode()).hexdigest()
            with self._lock:
                seen = key in self._cached_prefixes
                self._cached_prefixes.add(key)
            read, written = (size, 0) if seen else (0, size)
        return {
            "input_tokens": max(1, total - read - written),
            "output_tokens": tokens(text),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }

    def handle(self, record: dict) -> Reply:
        body = record["body"]
        problem = self._invalid(body, record["headers"])
        if problem:
            return self.error_reply(400, problem)
        text = str(self.responder(body))
        message = {
            "id": f"msg_fake{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": self._usage(body, text),
        }
        return Reply(200, message, {"request-id": f"req_fake{next(self._ids):06d}"})
