"""Throughput: 100 concurrent discussions, a model that takes 1 s per call, through the real worker path
(Celery over the bundled Redis, one worker process with a threads pool of 128).

Every engine step is one model call (the opening and evaluation decisions, each participant turn, the
synthesis), and the scripted model sleeps 1 s on every call (``delay: 1``). So one room can commit at
most one step per second, and 100 rooms at most 100 steps/s: the ideal. The figure is the number of
steps committed (Observations, by their commit timestamps) inside a steady-state window (from
``--warmup`` s after the rooms were started, for ``--window`` s), per second, against that ideal.
Participant turns are every other step, so turns/s is about half of steps/s by construction (ideal
50 turns/s); both are printed. After the window every room is stopped.

By default it runs on a fresh SQLite file and then, if the local PostgreSQL answers, on a fresh
PostgreSQL database that it creates and drops (``--backend sqlite|postgres|both``).

    python benchmarks/throughput.py [--quick] [--json PATH] [--rooms 100] [--window 30] [--backend both]
"""
import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import common as C

PG_ADMIN_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def pg_reachable() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN_URL, connect_timeout=2):
            return True
    except Exception:
        return False


def pg_create(name: str) -> str:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name


def pg_drop(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def stack_failures(tmp) -> int:
    """Tasks that raised (they are not retried: their room waits for the beat sweeper, which this benchmark does not run)."""
    log = Path(tmp) / "worker.log"
    return log.read_text(errors="replace").count("raised unexpected") if log.exists() else 0


WATCHED_EVENTS = ("discussion:turn", "discussion:moderator")


def _watch_process(base_url: str, token: str, rooms: list[tuple[int, int]], ready, stop, results) -> None:
    """Socket.IO clients (python-socketio's AsyncClient, as a script would use it), one per room in ``rooms``
    (``(room_id, last_seq)``), each recording every turn and decision it receives: (wall time of receipt,
    seconds since the event's ``ts``, stamped inside the commit)."""
    import asyncio

    async def main():
        import socketio

        received: list[tuple[float, float]] = []
        clients = []

        def make():
            client = socketio.AsyncClient(reconnection=False)

            async def on_event(data):
                now = time.time()
                try:
                    received.append((now, now - datetime.fromisoformat(data["ts"]).timestamp()))
                except (KeyError, TypeError, ValueError):
                    pass
            for name in WATCHED_EVENTS:
                client.on(name, on_event)
            return client

        for room_id, last_seq in rooms:
            client = make()
            await client.connect(base_url, auth={"token": token}, transports=["websocket"], wait_timeout=30)
            ack = await client.call("discussion:join", {"discussionId": room_id, "lastSeq": last_seq}, timeout=30)
            if not (ack or {}).get("ok"):
                raise SystemExit(f"join refused: {ack}")
            clients.append(client)
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.2)
        results.put(received)
        for client in clients:
            await client.disconnect()

    asyncio.run(main())


def run_one(url: str, rooms: int, window: float, warmup: float, concurrency: int, delay: float, tmp, py_spy: str = "",
            workers: int = 1, participants: int = C.PARTICIPANTS, watchers: int = 0) -> dict:
    C.setup_django(url, realtime="redis")
    from django.db.models import Count

    from facilitation.actions.lifecycle import do_start_discussion, do_stop_discussion
    from rooms.models import Observation, Room

    load_before = C.load_average()
    spy = None
    watch = None
    with C.WorkerStack(url, C.script_rules(delay=delay), tmp, concurrency=concurrency, workers=workers,
                       web=watchers > 0) as stack:
        cast = C.Cast("tp", participants=participants)
        # Warm-up: one short room end to end (the worker is up and has imported everything).
        warm = cast.room(1, name="warm-up")
        do_start_discussion(warm.pk)
        C.wait_until(lambda: Room.objects.get(pk=warm.pk).is_terminal, timeout=60, what="warm-up room concluded")
        created = [cast.room(C.ROUNDS_PER_ROOM, name=f"throughput {i}") for i in range(rooms)]
        if watchers:  # Socket.IO clients watching the rooms while they run (one per room, round robin)
            import multiprocessing as mp

            from rooms.actions.tokens import do_create_token

            token = do_create_token(cast.owner, name="throughput watchers")[1]
            ctx = mp.get_context("spawn")
            ready, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
            watched = [(r.pk, r.seq) for r in (created[i % len(created)] for i in range(watchers))]
            watch = ctx.Process(target=_watch_process, args=(stack.base_url, token, watched, ready, stop, out))
            watch.start()
            if not ready.wait(180):
                raise SystemExit("the Socket.IO watchers did not connect")
        t0 = datetime.now(timezone.utc)
        for room in created:
            do_start_discussion(room.pk)
        started_all = datetime.now(timezone.utc)
        w0, w1 = t0 + timedelta(seconds=warmup), t0 + timedelta(seconds=warmup + window)
        time.sleep(max(0.0, (w0 - datetime.now(timezone.utc)).total_seconds()))
        cpu0, busy0 = sum(C.process_cpu_seconds(p) for p in stack.worker_pids()), C.machine_busy()
        if py_spy:
            spy = C.start_py_spy(stack.worker_pid(), window, Path(py_spy))
        time.sleep(max(0.0, (w1 - datetime.now(timezone.utc)).total_seconds()))
        cpu1, busy1 = sum(C.process_cpu_seconds(p) for p in stack.worker_pids()), C.machine_busy()
        time.sleep(0.5)
        fanout = []
        if watch is not None:
            stop.set()
            received = out.get(timeout=120)
            watch.join(30)
            lo, hi = w0.timestamp(), w1.timestamp()
            fanout = [lat * 1000 for at, lat in received if lo <= at < hi]
        ids = [r.pk for r in created]
        for room_id in ids:
            try:
                do_stop_discussion(room_id)
            except Exception:
                pass  # concluded already
        in_window = Observation.objects.filter(room_id__in=ids, created_at__gte=w0, created_at__lt=w1)
        steps = in_window.count()
        turns = in_window.filter(kind="contribution").count()
        per_room = list(in_window.values("room_id").order_by().annotate(n=Count("id")).values_list("n", flat=True))
        dup = Observation.objects.filter(room_id__in=ids, kind="contribution").count() - \
            Observation.objects.filter(room_id__in=ids, kind="contribution").values("room_id", "round").distinct().count()
        lagging = rooms - len(per_room)
        gaps = []
        for room_id in ids:
            times = list(Observation.objects.filter(room_id=room_id, created_at__gte=w0, created_at__lt=w1)
                         .order_by("seq").values_list("created_at", flat=True))
            gaps += [(b - a).total_seconds() for a, b in zip(times, times[1:])]
    failed = stack_failures(tmp)
    if spy is not None:
        spy.wait()
        print(f"py-spy profile of the worker during the window ({py_spy}):")
        print(C.summarize_collapsed(Path(py_spy)))
    return {
        "database": "PostgreSQL" if url.startswith("postgres") else "SQLite",
        "rooms": rooms, "participants": participants, "workers": workers, "window_s": window, "warmup_s": warmup, "concurrency": concurrency, "delay_s": delay,
        "start_all_s": (started_all - t0).total_seconds(),
        "steps": steps, "turns": turns, "steps_per_s": steps / window, "turns_per_s": turns / window,
        "ideal_steps_per_s": rooms / delay, "efficiency": steps / window / (rooms / delay),
        "min_steps_per_room": min(per_room) if per_room else 0, "max_steps_per_room": max(per_room) if per_room else 0,
        "rooms_without_steps": lagging, "failed_tasks": failed,
        "worker_cpu_share": (cpu1 - cpu0) / window,
        "worker_cpu_ms_per_step": (cpu1 - cpu0) / max(1, steps) * 1000,
        "machine_cpu_busy": (busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]),
        "step_interval_p50_s": C.median(gaps), "step_interval_p99_s": C.percentile(gaps, 99), "duplicated_turns": dup,
        "load_before": load_before, "load_after": C.load_average(),
        "watchers": watchers, "fanout_receipts": len(fanout),
        "fanout_p50_ms": C.median(fanout) if fanout else None, "fanout_p99_ms": C.percentile(fanout, 99) if fanout else None,
    }


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--rooms", type=int, default=100)
    p.add_argument("--window", type=float, default=30.0, help="seconds of steady state measured")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds after the start that are not measured")
    p.add_argument("--concurrency", type=int, default=128, help="threads per worker process (CONVENE_WORKER_CONCURRENCY)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (the runtime starts 1)")
    p.add_argument("--delay", type=float, default=1.0, help="seconds the model takes per call")
    p.add_argument("--watchers", type=int, default=0,
                   help="Socket.IO clients watching the rooms (a web process is started): fan-out latency under the load")
    p.add_argument("--participants", type=int, default=C.PARTICIPANTS, help="participant seats per room (besides the facilitator)")
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--database-url", default="", help="run on this database (no create/drop)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--py-spy", default="", metavar="PATH", help="sample the worker with py-spy during the window (one backend only)")
    args = p.parse_args(argv)
    if args.quick:
        args.window, args.rooms = 10.0, 20

    if args.backend == "both" and not args.database_url:
        # One process per database: Django is configured once per process.
        outputs = []
        backends = ["sqlite"] + (["postgres"] if pg_reachable() else [])
        for backend in backends:
            tmp = C.temp_dir(f"throughput-{backend}")
            out = tmp / "result.json"
            cmd = [sys.executable, __file__, "--backend", backend, "--json", str(out), "--rooms", str(args.rooms),
                   "--window", str(args.window), "--warmup", str(args.warmup), "--concurrency", str(args.concurrency),
                   "--delay", str(args.delay), "--workers", str(args.workers),
                   "--participants", str(args.participants), "--watchers", str(args.watchers), "--child"]
            subprocess.run(cmd, check=True)
            outputs.append(json.loads(out.read_text())["result"])
        if len(backends) == 1:
            print("(the local PostgreSQL did not answer: SQLite only)")
        return report(outputs, args.json)

    tmp = C.temp_dir(f"throughput-{args.backend}")
    pg_name = None
    if args.database_url:
        url = args.database_url
    elif args.backend == "postgres":
        pg_name = f"convene_bench_{os.getpid()}"
        url = pg_create(pg_name)
    else:
        url = C.sqlite_url(tmp / "convene.sqlite3")
    try:
        result = run_one(url, args.rooms, args.window, args.warmup, args.concurrency, args.delay, tmp, args.py_spy, args.workers,
                         args.participants, args.watchers)
    finally:
        if pg_name:
            from django.db import connections

            connections.close_all()
            pg_drop(pg_name)
    if args.child:  # the parent prints the table of all backends
        C.write_json(args.json, "throughput", {"result": result})
        return 0
    return report([result], args.json)


def report(results: list[dict], json_path: str | None) -> int:
    rows = [[r["database"], r["rooms"], f"{r['window_s']:.0f} s", r["steps_per_s"], r["ideal_steps_per_s"],
             f"{r['efficiency'] * 100:.0f}%", r["turns_per_s"], f"{r['min_steps_per_room']}-{r['max_steps_per_room']}",
             r["step_interval_p50_s"] * 1000, r["step_interval_p99_s"] * 1000, f"{r['worker_cpu_share'] * 100:.0f}%", r["worker_cpu_ms_per_step"],
             f"{r['machine_cpu_busy'] * 100:.0f}%", r["failed_tasks"], r["duplicated_turns"]] for r in results]
    print(C.table(["database", "rooms", "window", "steps/s", "ideal steps/s", "of ideal", "turns/s", "steps per room in window",
                   "step interval p50 ms", "p99 ms", "worker CPU (1 core = 100%)", "worker CPU ms/step", "machine CPU busy", "failed tasks", "duplicated turns"],
                  rows, title=f"Throughput: concurrent discussions, model takes {results[0]['delay_s']:.0f} s per call, "
                              f"{results[0]['workers']} worker process(es) x {results[0]['concurrency']} threads ({C.machine()})"))
    for r in results:
        if r.get("watchers"):
            print(f"Socket.IO fan-out under this load ({r['database']}, {r['watchers']} clients, one per room, "
                  f"{r['participants']} participants per room): {r['fanout_receipts']} turns and decisions received in the "
                  f"window; from the commit to the client p50 {r['fanout_p50_ms'] or 0:.1f} ms, p99 {r['fanout_p99_ms'] or 0:.1f} ms")
    met = {r["database"]: r["efficiency"] >= 0.8 for r in results}
    for r in results:
        print(f"Target >= 80% of ideal on {r['database']}: {'met' if met[r['database']] else 'NOT met'} "
              f"({r['efficiency'] * 100:.0f}%). Before: {r['load_before']}; after: {r['load_after']}")
    C.write_json(json_path, "throughput", {"results": results, "result": results[0], "target_met": met})
    return 0


if __name__ == "__main__":
    sys.exit(main())
