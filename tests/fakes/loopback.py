"""A small routed HTTP server on loopback for the chat platform fakes (any method, any body).

Handlers are registered as (method, regex) -> function(request) returning (status, payload,
headers). ``request`` has ``method``, ``path``, ``match``, ``headers`` (lower-cased),
``query`` (dict), ``json`` (parsed JSON or None), ``form`` (urlencoded or multipart fields)
and ``files`` (multipart file parts: name -> (filename, bytes)).
"""
import json
import re
import socket
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Request:
    def __init__(self, method, path, query, headers, body: bytes):
        self.method, self.path, self.query, self.headers, self.raw = method, path, query, headers, body
        self.match = None
        self.json = None
        self.form: dict = {}
        self.files: dict = {}
        self.received_at = time.monotonic()
        ctype = headers.get("content-type", "")
        if body and ctype.startswith("application/json"):
            try:
                self.json = json.loads(body)
            except ValueError:
                self.json = None
        elif body and ctype.startswith("application/x-www-form-urlencoded"):
            self.form = {k: v[-1] for k, v in parse_qs(body.decode(), keep_blank_values=True).items()}
        elif body and ctype.startswith("multipart/form-data"):
            message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                filename = part.get_filename()
                data = part.get_payload(decode=True) or b""
                if filename:
                    self.files[name] = (filename, data)
                else:
                    self.form[name] = data.decode()


class LoopbackServer:
    def __init__(self):
        self.routes: list[tuple[str, re.Pattern, object]] = []
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._connections: set = set()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=type(self).__name__, daemon=True)
        self._thread.start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def route(self, method: str, pattern: str, handler) -> None:
        self.routes.append((method, re.compile(pattern + "$"), handler))

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
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

    def dispatch(self, request: Request):
        for method, pattern, handler in self.routes:
            match = pattern.match(request.path)
            if match and method == request.method:
                request.match = match
                return handler(request)
        return 404, {"error": f"no route for {request.method} {request.path}"}, {}

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no delayed-ACK stall on a kept connection

            def setup(self):
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self):
                with server._lock:
                    server._connections.discard(self.connection)
                try:
                    super().finish()
                except OSError:
                    pass

            def _serve(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                request = Request(self.command, parts.path, query, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.requests.append(request)
                status, payload, headers = server.dispatch(request)
                data = b"" if payload is None else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, str(value))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = _serve

            def log_message(self, *args):
                pass

        return Handler
