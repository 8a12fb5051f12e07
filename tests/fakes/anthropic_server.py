"""A fake Anthropic Messages API (``POST /v1/messages``) on loopback.

Point the real SDK at it with ``anthropic.Anthropic(base_url=server.url, api_key=...)``
(or ``ANTHROPIC_BASE_URL=server.url``). Replies use the real response and error
shapes. Like API version 2026-10-21, it refuses ``temperature``, ``top_p`` and
``top_k`` with a 400 when that version is sent.

Prompt caching follows Anthropic's rules. The prompt is a sequence of blocks in the
API's order: the tool definitions, the system blocks, then every message block. A
block with ``cache_control`` is a breakpoint (at most four, else a 400). The prefix up
to a breakpoint is cached only when it holds at least ``min_cacheable`` tokens (1,024,
as for Sonnet and Opus). A request reads the longest cached prefix that is identical
to one of its own prefixes ending at a block boundary at most 20 blocks before one of
its breakpoints; it writes every breakpoint prefix beyond that. ``usage`` reports
``cache_read_input_tokens``, ``cache_creation_input_tokens`` and the rest as
``input_tokens``. Tokens are counted as characters / 4.

Tools: when ``tool_choice`` forces a tool, a responder's dict (or a string holding a
JSON object) comes back as that tool's ``tool_use`` input; other strings as text::

    with FakeAnthropicServer(responder=lambda body: "Agreed.") as server:
        server.fail_next(429, retry_after=3)
        ...
        server.requests[-1]["body"]["system"]
"""
import hashlib
import itertools
import json

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


MIN_CACHEABLE = 1024
LOOKBACK_BLOCKS = 20
MAX_BREAKPOINTS = 4


def _blocks_in_order(body: dict):
    """(text, has_cache_control) for every block of the prompt: tools, system, messages."""
    if body.get("tools"):
        yield json.dumps(body["tools"], sort_keys=True), False
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
                text = block.get("text") if block.get("type", "text") == "text" else json.dumps(block, sort_keys=True)
                yield text or "", bool(block.get("cache_control"))


class FakeAnthropicServer(FakeServer):
    paths = ("/v1/messages",)

    def __init__(self, responder=None, *, api_key: str | None = None, min_cacheable: int = MIN_CACHEABLE):
        self._ids = itertools.count(1)
        self._cached_prefixes: set[str] = set()
        self.min_cacheable = min_cacheable
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
        marks = sum(1 for _, cached in _blocks_in_order(body) if cached)
        if marks > MAX_BREAKPOINTS:
            return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {marks}."
        choice = body.get("tool_choice")
        if choice and choice.get("type") == "tool" and choice.get("name") not in {t.get("name") for t in body.get("tools") or []}:
            return f"tool_choice: tool {choice.get('name')!r} is not among the tools"
        return ""

    def _usage(self, body: dict, text: str) -> dict:
        blocks = list(_blocks_in_order(body))
        sizes = [tokens(t) for t, _ in blocks]
        ends = list(itertools.accumulate(sizes))  # ends[i]: tokens up to and including block i
        keys, digest = [], hashlib.sha256()
        for block_text, _ in blocks:
            digest.update(block_text.encode() + b"\x00")
            keys.append(digest.copy().hexdigest())
        marks = [i for i, (_, cached) in enumerate(blocks) if cached]
        with self._lock:
            hit = -1
            for mark in marks:
                for i in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                    if keys[i] in self._cached_prefixes:
                        hit = max(hit, i)
                        break
            written = [m for m in marks if m > hit and ends[m] >= self.min_cacheable]
            for mark in written:
                self._cached_prefixes.add(keys[mark])
        read = ends[hit] if hit >= 0 else 0
        creation = ends[written[-1]] - read if written else 0
        total = ends[-1] if ends else 0
        return {
            "input_tokens": max(1, total - read - creation),
            "output_tokens": tokens(text),
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
        }

    def handle(self, record: dict) -> Reply:
        body = record["body"]
        problem = self._invalid(body, record["headers"])
        if problem:
            return self.error_reply(400, problem)
        answer = self.responder(body)
        choice = body.get("tool_choice") or {}
        forced = choice.get("name") if choice.get("type") == "tool" else None
        tool_input = answer if isinstance(answer, dict) else None
        if forced and tool_input is None:
            try:
                parsed = json.loads(str(answer))
                tool_input = parsed if isinstance(parsed, dict) else None
            except ValueError:
                tool_input = None
        if forced and tool_input is not None:
            text = json.dumps(tool_input)
            content = [{"type": "tool_use", "id": f"toolu_fake{next(self._ids):06d}", "name": forced, "input": tool_input}]
            stop = "tool_use"
        else:
            text = json.dumps(answer) if isinstance(answer, dict) else str(answer)
            content, stop = [{"type": "text", "text": text}], "end_turn"
        message = {
            "id": f"msg_fake{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self._usage(body, text),
        }
        return Reply(200, message, {"request-id": f"req_fake{next(self._ids):06d}"})
