"""Small real HTTP servers on loopback that imitate model APIs, for tests.

``FakeServer`` holds what the concrete fakes share: a ``ThreadingHTTPServer`` on
127.0.0.1 with an ephemeral port, served from a daemon thread, a log of what
arrived (``requests``), a programmable ``responder`` and a queue of scripted
faults. Subclasses only say how to answer (``handle``) and how to spell an error.
"""
import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def last_user_text(messages: list) -> str:
    """The text of the most recent user message (string content or text blocks)."""
    for message in reversed(messages or []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
            return " ".join(p for p in parts if p)
    return ""


def echo_responder(body: dict) -> str:
    """Default reply: a short line echoing the last user message."""
    said = last_user_text(body.get("messages", []))
    return f"You said: {said[:200]}" if said else "Hello from the fake model."


class Reply:
    """What a handler sends back: status, JSON payload and extra headers."""

    def __init__(self, status: int, payload: dict, headers: dict | None = None):
        self.status = status
        self.payload = payload
        self.headers = headers or {}


class FakeServer:
    """Base class: start on construction, stop with ``stop()`` or by leaving a ``with`` block.

    ``requests`` lists every request received, as dicts with ``method``, ``path``,
    ``headers`` (lower-cased names) and ``body`` (parsed JSON, or None).
    """

    #: Paths (after the host) the fake answers POSTs on; anything else gets a 404.
    paths: tuple[str, ...] = ()

    def __init__(self, responder=None, *, api_key: str | None = None):
        self.responder = responder or echo_responder
        self.api_key = api_key  # when set, requests carrying another key are refused with 401
        self.requests: list[dict] = []
        self._faults: deque = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self.connections_made = 0  # TCP connections accepted so far (a client that keeps its connection makes one)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=type(self).__name__, daemon=True
        )
        self._thread.start()

    # -- public API -----------------------------------------------------------------

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail_next(self, status: int, times: int = 1, retry_after: float | str | None = None, message: str = "") -> None:
        """Answer the next ``times`` requests with an error of this HTTP status."""
        with self._lock:
            for _ in range(times):
                self._faults.append(("fail", status, retry_after, message))

    def hang_next(self, seconds: float, times: int = 1) -> None:
        """Hold the next ``times`` requests for ``seconds`` (the client should time out first), then answer normally."""
        with self._lock:
            for _ in range(times):
                self._faults.append(("hang", seconds))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def stop(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()  # wakes any hanging handler
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:  # drop kept-alive connections too, so pooled clients see the server gone
            for connection in list(self._connections):
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._thread.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- for subclasses -------------------------------------------------------------

    def handle(self, record: dict) -> Reply:  # pragma: no cover - interface
        raise NotImplementedError

    def error_reply(self, status: int, message: str = "", retry_after=None) -> Reply:  # pragma: no cover - interface
        raise NotImplementedError

    def presented_key(self, headers: dict) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError

    # -- plumbing ---------------------------------------------------------------------

    def _next_fault(self):
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _answer(self, record: dict) -> Reply:
        if record["path"] not in self.paths:
            return self.error_reply(404, f"No route for {record['path']}")
        fault = self._next_fault()
        if fault and fault[0] == "hang":
            if self._stopping.wait(fault[1]):
                return self.error_reply(500, "The fake server stopped.")  # keep the responder out of it
        elif fault and fault[0] == "fail":
            _, status, retry_after, message = fault
            return self.error_reply(status, message, retry_after)
        if self.api_key is not None and self.presented_key(record["headers"]) != self.api_key:
            return self.error_reply(401, "invalid x-api-key")
        if not isinstance(record["body"], dict):
            return self.error_reply(400, "The request body is not valid JSON.")
        return self.handle(record)

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no delayed-ACK stall on a kept connection

            def setup(self):
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)
                    server.connections_made += 1

            def finish(self):
                with server._lock:
                    server._connections.discard(self.connection)
                try:
                    super().finish()
                except OSError:
                    pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                record = {
                    "method": "POST",
                    "path": self.path.split("?", 1)[0],
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body,
                    "received_at": time.monotonic(),
                }
                with server._lock:
                    server.requests.append(record)
                reply = server._answer(record)
                data = json.dumps(reply.payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, str(value))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to tell it

            def log_message(self, *args):  # keep test output quiet
                pass

        return Handler
