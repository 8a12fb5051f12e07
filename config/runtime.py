"""The embedded runtime's processes (bundled Redis, daphne, Celery worker and beat), started, supervised
and stopped together by ``serve``, ``demo``, the tests and the benchmarks."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from django.conf import settings

from config import env as E
from config.embedded_redis import ensure_redis_url, port_open

BASE = Path(settings.BASE_DIR)


def send_through(url: str) -> None:
    """Make this process enqueue and emit through the Redis at ``url``: the settings, Celery's broker
    URL and the realtime publishers built from them. Call it before the process has sent anything:
    Celery keeps the broker connections it has opened."""
    from config.celery import app
    from rooms import realtime

    settings.REDIS_URL = settings.CELERY_BROKER_URL = app.conf.broker_url = url
    realtime.reset()


class Runtime:
    def __init__(self, host: str = "127.0.0.1", port: int | None = None, out=None, web: bool = True,
                 worker: bool = True, beat: bool = True, extra_env: dict | None = None, supervise: bool = True):
        self.host, self.port = host, port or E.PORT
        self.out = out or sys.stdout
        self.want = {"web": web, "worker": worker, "beat": beat}
        self.extra_env = extra_env or {}
        self.redis = None
        self.procs: dict[str, subprocess.Popen] = {}
        self._stop = threading.Event()
        self.supervise = supervise
        self.restarts: dict[str, int] = {}
        self._commands: dict[str, list[str]] = {}

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def env(self) -> dict:
        env = dict(os.environ)
        env.update(self.extra_env)
        env["REDIS_URL"] = self.redis_url
        env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        env["PYTHONUNBUFFERED"] = "1"
        env["CONVENE_EMBEDDED"] = "1"
        return env

    def start(self) -> "Runtime":
        for leftover in E.VAR_DIR.glob("celerybeat-*"):  # schedule files of older versions
            leftover.unlink(missing_ok=True)
        self.redis_url, self.redis = ensure_redis_url({**os.environ, **self.extra_env})
        self._say(f"Redis: {self.redis_url}{' (bundled)' if self.redis else ''}")
        py = sys.executable
        concurrency = str(settings.CONVENE["WORKER_CONCURRENCY"])
        def worker(index: int) -> list[str]:
            return [py, "-m", "celery", "--quiet", "-A", "config", "worker", "-P", "threads", "-c", concurrency,
                    "-Q", "turns,default,bridge", "--loglevel", "WARNING", "-n", f"convene-{os.getpid()}-{index}@%h",
                    "--without-gossip", "--without-mingle"]

        commands = {
            **{("worker" if i == 0 else f"worker{i + 1}"): worker(i) for i in range(max(1, settings.CONVENE["WORKER_PROCESSES"]))},
            # The schedule is kept in memory (CELERY_BEAT_SCHEDULER): no schedule file is written.
            "beat": [py, "-m", "celery", "--quiet", "-A", "config", "beat", "--loglevel", "WARNING"],
            "web": [py, "-m", "daphne", "-b", self.host, "-p", str(self.port), "config.asgi:application"],
        }
        self._commands = {name: cmd for name, cmd in commands.items() if self.want[name.rstrip("0123456789")]}
        for name in self._commands:
            self._spawn(name)
        if self.want["web"]:
            self._wait_for_port()
            self._say(f"Web: http://{self.host}:{self.port}/")
        if self.supervise:
            threading.Thread(target=self._supervise, name="runtime-supervisor", daemon=True).start()
        return self

    def _spawn(self, name: str) -> None:
        self.procs[name] = subprocess.Popen(self._commands[name], cwd=BASE, env=self.env(), start_new_session=True)

    def _supervise(self) -> None:
        """Restart a process that died (a crash after losing Redis, an out-of-memory kill...)."""
        while not self._stop.wait(0.5):
            for name, proc in list(self.procs.items()):
                if proc.poll() is None or self._stop.is_set():
                    continue
                count = self.restarts.get(name, 0) + 1
                self.restarts[name] = count
                delay = min(10.0, 0.5 * count)
                self._say(f"{name} exited with status {proc.returncode}; restarting in {delay:.1f} s (restart {count}).")
                if self._stop.wait(delay):
                    return
                self._spawn(name)

    def point_this_process_here(self) -> None:
        """Make this process enqueue and emit through the runtime's Redis (before it has sent anything)."""
        send_through(self.redis_url)

    def _wait_for_port(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if port_open(self.port, self.host):
                return
            proc = self.procs["web"]
            if proc.poll() is not None:
                raise RuntimeError(f"daphne exited with status {proc.returncode}")
            time.sleep(0.1)
        raise RuntimeError(f"daphne did not listen on {self.host}:{self.port}")

    def wait(self) -> None:
        """Block until Ctrl-C or SIGTERM (dead processes are restarted meanwhile when supervised)."""
        previous = signal.signal(signal.SIGTERM, lambda *_: self._stop.set())
        try:
            while not self._stop.is_set():
                if not self.supervise and any(p.poll() is not None for p in self.procs.values()):
                    self._say("A process exited; stopping.")
                    return
                self._stop.wait(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)

    def stop(self) -> None:
        self._stop.set()
        try:  # a second Ctrl-C must not cut the shutdown short (and leave processes behind)
            previous_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread
            previous_int = None
        try:
            self._stop_processes()
        finally:
            if previous_int is not None:
                signal.signal(signal.SIGINT, previous_int)

    def _stop_processes(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        self.procs.clear()
        if self.redis:
            self.redis.stop()
            self.redis = None
        self._say("Stopped.")

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()
