"""Shared helpers for the engine benchmarks (not a test module; nothing here asserts timings).

Every benchmark is a script run as ``python benchmarks/<name>.py``. It points Django at a fresh
database of its own (a SQLite file under a temporary directory unless ``--database-url`` says
otherwise), migrates it with ``call_command("migrate")`` and prints its figures as a table.
``--json PATH`` also writes the figures as JSON (``run_all.py`` collects them).
"""
import argparse
import atexit
import json
import math
import os
import platform
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# One room holds at most this many participant turns (Room.max_rounds is capped at 20 by a
# CheckConstraint), so N turns are run as ceil(N / 20) rooms of up to 20 rounds.
ROUNDS_PER_ROOM = 20
PARTICIPANTS = 3

# A participant turn of realistic size (about 110 words, 2 markers): the same text is used for
# Convene, LangGraph and AutoGen, so stored bytes can be compared against it.
TURN_TEXT = (
    "I would cache the catalogue at the edge, but only the read path: prices and stock change "
    "too often to trust a long TTL, and a stale price is a support ticket we pay for twice. "
    "A five-minute TTL with explicit invalidation on publish gets most of the benefit. We should "
    "measure the hit rate for a week before we add a second layer, because the origin is not "
    "the bottleneck today; the search service is.\n"
    "CONCERN: invalidation on publish must not block the editor's save.\n"
    "Q: who owns the cache keys when two teams publish the same product?"
)
DECISION_QUESTION = "What would you change in the proposal so far, and why?"
# A conclusion that takes up the concern and the question every turn raises (C1, Q1), as the engine's check
# of a conclusion asks: a synthesis that left them out would be written again (twice), costing each room
# two more model calls than the one synthesis node of the other frameworks.
SYNTHESIS_TEXT = (
    "Summary: cache the read path with a short TTL and invalidate on publish; measure first.\n"
    "C1, unresolved: invalidation on publish must not block the editor's save.\n"
    "Q1, open: who owns the cache keys when two teams publish the same product?"
)


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    p.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    return p


def temp_dir(prefix: str) -> Path:
    """A temporary directory removed when the process exits (kept if BENCH_KEEP=1, e.g. to read worker.log)."""
    path = Path(tempfile.mkdtemp(prefix=f"convene-bench-{prefix}-"))
    if os.environ.get("BENCH_KEEP") != "1":
        atexit.register(shutil.rmtree, path, True)
    return path


def remove_sqlite(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


class MemoryPublisher:
    """Keeps what would have been pushed (``--realtime memory``)."""

    def __init__(self):
        self.sent = []

    def emit(self, event_type, payload, room):
        self.sent.append((event_type, payload, room))

    def publish_access(self, message, kind, room):
        self.sent.append((kind, message, room))

    def close(self):
        self.sent.clear()


def setup_django(database_url: str, realtime: str | None = None) -> None:
    """Configure Django for this process on ``database_url`` and migrate it. Call once, before any model import."""
    os.environ["DATABASE_URL"] = database_url
    # Off SQLite the settings want a key shared by every process (the workers inherit this one).
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-" + secrets.token_urlsafe(40))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings

    if realtime == "memory":  # events kept in a list that nobody reads
        from rooms import realtime as push

        push.use(MemoryPublisher())
    elif realtime:
        settings.REALTIME_BACKEND = realtime
    settings.CONVENE = {**settings.CONVENE, "FALLBACK_PROVIDERS": []}
    migrate()


def point_at_redis(url: str) -> None:
    """Send through the embedded Redis at ``url`` from now on. A benchmark process starts several in
    turn; Celery caches the pool it made for the first URL and has no public call to drop it."""
    from config.celery import app
    from config.runtime import send_through

    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None
    send_through(url)


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def checkpoint_wal(conn=None) -> None:
    """Copy the write-ahead log into the database file and empty it, before a timed run: the pages written
    while setting up (migrations, the cast, the rooms) would otherwise be checkpointed during the run.
    ``conn``: a sqlite3 connection; Django's default connection when None."""
    if conn is not None:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        cursor.fetchall()


def switch_sqlite(path: Path) -> None:
    """Point the default connection at another (new) SQLite file and migrate it."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = str(path)
    migrate()


def sqlite_synchronous(mode: str) -> None:
    """Set PRAGMA synchronous for this process's SQLite connections (the project uses NORMAL)."""
    from django.db import connection

    opts = connection.settings_dict.setdefault("OPTIONS", {})
    cmd = opts.get("init_command", "")
    parts = [p.strip() for p in cmd.split(";") if p.strip() and not p.strip().upper().startswith("PRAGMA SYNCHRONOUS")]
    parts.append(f"PRAGMA synchronous={mode}")
    opts["init_command"] = "; ".join(parts) + ";"
    connection.close()


def rooms_for(turns: int) -> list[int]:
    """Rounds of each room needed for ``turns`` participant turns (20 per room, the last one shorter)."""
    full, rest = divmod(turns, ROUNDS_PER_ROOM)
    return [ROUNDS_PER_ROOM] * full + ([rest] if rest else [])


class Cast:
    """One owner, one facilitator and a few participant agents, reused by every room."""

    def __init__(self, label: str = "bench", participants: int = PARTICIPANTS, provider: str = ""):
        from django.contrib.auth import get_user_model

        from rooms.models import Agent, Persona, Role

        self.owner, _ = get_user_model().objects.get_or_create(username=f"{label}-owner")
        persona = Persona.objects.create(key=f"{label}-chair", name="Chair", prompt="You are a fair facilitator.", is_facilitator=True)
        self.facilitator = Agent.objects.create(name=f"{label} Chair", persona=persona, is_facilitator=True, provider=provider,
                                                created_by=self.owner)
        self.participants = []
        for i in range(participants):
            p = Persona.objects.create(key=f"{label}-p{i}", name=f"Speaker {i}", prompt=f"You are speaker {i}, practical and brief.")
            role, _ = Role.objects.get_or_create(key=f"{label}-r{i}", defaults={"name": f"Role {i}", "base_prompt": f"Speak as expert {i}."})
            self.participants.append(Agent.objects.create(name=f"{label} Speaker {i}", persona=p, role=role, provider=provider,
                                                         created_by=self.owner))

    def room(self, rounds: int, name: str = "Benchmark discussion"):
        from rooms.actions.rooms import do_create_room

        return do_create_room(
            self.owner, name=name, topic="Should we cache the product catalogue at the edge?", format="deliberation",
            moderator_id=self.facilitator.pk, max_rounds=rounds,
            participants=[{"agent_id": a.pk, "role": "participant"} for a in self.participants],
        )


def instant_provider():
    """A model that answers at once: valid decisions (round-robin), TURN_TEXT for turns."""
    from facilitation.llm.base import LLMResponse, Provider, estimate_tokens

    class Instant(Provider):
        name = "scripted"
        offline = True
        inline = True  # answers at once, in process, like the rehearsal model without pace

        def complete(self, request):
            meta = request.meta
            if request.purpose in ("opening", "evaluation"):
                ids = [s["id"] for s in meta.get("speakers", [])]
                last = meta.get("lastSpeakerId")
                nxt = ids[(ids.index(last) + 1) % len(ids)] if last in ids else ids[0]
                decision = "synthesize" if meta.get("mustSynthesize") else "continue"
                text = json.dumps({"decision": decision, "nextParticipantId": nxt if decision == "continue" else None,
                                   "question": DECISION_QUESTION if decision == "continue" else "",
                                   "reasoning": "Hear the next voice."})
            elif request.purpose == "contribution":
                text = TURN_TEXT
            else:
                text = SYNTHESIS_TEXT
            return LLMResponse(text=text, provider="scripted", model="scripted", input_tokens=len(request.system) // 4 + 1,
                               output_tokens=estimate_tokens(text))

    return Instant()


def script_rules(delay: float = 0.0) -> list[dict]:
    """ScriptedProvider rules (for worker processes via CONVENE_SCRIPT_FILE) giving the same texts."""
    rules = [
        {"purpose": "opening", "text": '{"decision": "continue", "nextParticipantId": {nextId}, "question": "%s", "reasoning": "Start."}' % DECISION_QUESTION},
        {"purpose": "evaluation", "text": '{"decision": "continue", "nextParticipantId": {nextId}, "question": "%s", "reasoning": "Next voice."}' % DECISION_QUESTION},
        {"purpose": "contribution", "text": TURN_TEXT},
        {"purpose": "synthesis", "text": SYNTHESIS_TEXT},
    ]
    if delay:
        for r in rules:
            r["delay"] = delay
    return rules


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[k]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def table(headers: list[str], rows: list[list], title: str = "") -> str:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    if title:
        lines.append(title)
    lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths)) + " |")
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    return "\n".join(lines)


def _fmt(value) -> str:
    if isinstance(value, float):
        if value != value:
            return "n/a"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def write_json(path: str | None, name: str, data: dict) -> None:
    if not path:
        return
    data = {"benchmark": name, "machine": machine(), "at": time.strftime("%Y-%m-%d %H:%M:%S"), **data}
    Path(path).write_text(json.dumps(data, indent=2, default=str))


def sqlite_vacuumed_size(path: Path, connection=None) -> int:
    """The file size of a SQLite database after a WAL checkpoint and VACUUM (its real footprint)."""
    import sqlite3

    if connection is not None:
        connection.close()
    conn = sqlite3.connect(str(path))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return Path(path).stat().st_size


class WorkerStack:
    """Bundled Redis and one real Celery worker process (threads pool) on this process's database.

    ``Runtime(web=False, beat=False)`` as ``manage.py serve`` and the worker tests start it; the
    worker replays ``rules`` with the scripted provider (``CONVENE_SCRIPT_FILE``), and this process
    enqueues and emits through the same Redis. ``BENCH_WORKER_ENV`` (a JSON object) adds variables to
    the worker's environment, e.g. to try a settings module: ``{"DJANGO_SETTINGS_MODULE": "..."}``.
    """

    def __init__(self, database_url: str, rules: list[dict], workdir: Path, concurrency: int = 32, extra_env: dict | None = None,
                 workers: int = 1, web: bool = False):
        self.web = web  # also a daphne web process (Socket.IO clients connect to ``base_url``)
        self.database_url, self.rules, self.workdir = database_url, rules, Path(workdir)
        self.concurrency, self.extra_env, self.workers = concurrency, dict(extra_env or {}), workers
        self.runtime = None
        self.more: list = []  # further worker processes on the same Redis (``workers`` > 1)

    def __enter__(self):
        import io

        from django.conf import settings

        from config.embedded_redis import free_port
        from config.runtime import Runtime

        script = self.workdir / "script.json"
        script.write_text(json.dumps(self.rules))
        # The worker's command line takes its concurrency from this process's settings.
        settings.CONVENE = {**settings.CONVENE, "WORKER_CONCURRENCY": self.concurrency}
        env = {"DATABASE_URL": self.database_url, "LLM_PROVIDER": "scripted", "LLM_FALLBACK": "",
               "CONVENE_SCRIPT_FILE": str(script), "CONVENE_WORKER_CONCURRENCY": str(self.concurrency),
               **json.loads(os.environ.get("BENCH_WORKER_ENV") or "{}"), **self.extra_env}
        # Always a bundled Redis of its own: no other worker may consume this run's queue.
        saved = os.environ.pop("REDIS_URL", None)
        # The worker inherits this process's stdout/stderr: send its banner and logs to a file instead.
        self.log = self.workdir / "worker.log"
        log_fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        kept = os.dup(1), os.dup(2)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        try:
            port = free_port() if self.web else None
            self.runtime = Runtime(out=io.StringIO(), web=self.web, port=port, worker=True, beat=False, extra_env=env).start()
            for _ in range(self.workers - 1):
                more = {**env, "REDIS_URL": self.runtime.redis_url}
                self.more.append(Runtime(out=io.StringIO(), web=False, worker=True, beat=False, extra_env=more).start())
        finally:
            os.dup2(kept[0], 1)
            os.dup2(kept[1], 2)
            for fd in (*kept, log_fd):
                os.close(fd)
            if saved is not None:
                os.environ["REDIS_URL"] = saved
        point_at_redis(self.runtime.redis_url)
        settings.REALTIME_BACKEND = "redis"
        return self

    def __exit__(self, *exc):
        for runtime in self.more:
            runtime.stop()
        self.more = []
        if self.runtime is not None:
            self.runtime.stop()
            self.runtime = None

    @property
    def base_url(self) -> str:
        return f"http://{self.runtime.host}:{self.runtime.port}"

    def worker_pid(self) -> int:
        return self.runtime.procs["worker"].pid

    def worker_pids(self) -> list[int]:
        return [self.worker_pid()] + [r.procs["worker"].pid for r in self.more]


def wait_until(predicate, timeout: float, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise SystemExit(f"benchmark gave up: {what} not reached within {timeout:.0f} s")


def load_average() -> str:
    try:
        return "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "load average n/a"


def start_py_spy(pid: int, seconds: float, out: Path, idle: bool = False):
    """Sample a process with py-spy (if installed) into a collapsed-stack file; returns the Popen or None."""
    import shutil
    import subprocess

    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(exe).exists():
        print("(py-spy is not installed: pip install py-spy)")
        return None
    # --nonblocking: sampling must not pause the process (a paused worker is what would be measured).
    cmd = [exe, "record", "-p", str(pid), "-d", str(int(seconds)), "-r", "100", "-f", "raw", "-o", str(out), "-s", "--nonblocking"]
    if idle:
        cmd.append("--idle")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def summarize_collapsed(path: Path, top: int = 25, own_prefixes=("facilitation", "rooms")) -> str:
    """Inclusive share of samples per function of a py-spy raw (collapsed) file, the project's functions and the rest."""
    from collections import Counter

    inclusive, total = Counter(), 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        seen = set()
        for frame in stack.split(";"):
            name = frame.split(" (")[0].strip()
            where = frame.split(" (")[-1].rstrip(")") if " (" in frame else ""
            key = f"{name} ({where.split(':')[0].split('site-packages/')[-1]})"
            if key not in seen:
                seen.add(key)
                inclusive[key] += n
    lines = [f"{total} samples"]
    for key, n in inclusive.most_common(top):
        lines.append(f"  {100 * n / total:5.1f}%  {key}")
    return "\n".join(lines)


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its reaped children so far (Linux /proc), or nan."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks
    except (OSError, IndexError, ValueError):
        return float("nan")


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs so far (Linux /proc/stat); the difference of two readings gives utilisation."""
    try:
        parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
        return sum(parts) - idle, sum(parts)
    except (OSError, ValueError):
        return float("nan"), float("nan")
