"""Workspace search latency over 10,000 observations (SQLite FTS5 and PostgreSQL full-text).

    python benchmarks/workspace_search.py [--backend sqlite|postgres|both] [--observations 10000] [--queries 300]
    python benchmarks/workspace_search.py --database-url postgres://postgres@127.0.0.1:5432/some_db   # that database

SQLite runs on a file in a temporary directory; PostgreSQL on a fresh database created on
``BENCH_PG_URL`` (default ``postgres://postgres@127.0.0.1:5432/postgres``) and dropped afterwards.
Prints p50, p95 and max of ``search_room`` (lexical only) over queries of one to three words, and
whether p95 meets the target (50 ms).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as C  # noqa: E402
from throughput import pg_create, pg_drop, pg_reachable  # noqa: E402

TARGET_P95_MS = 50.0

WORDS = ("invoice queue outbox cron billing retry ledger refund schedule worker backlog latency customer export "
         "migration rollback payment reminder tax currency audit report alert dashboard deploy staging replay "
         "idempotent duplicate timeout webhook partner settlement").split()
TYPES = ("question", "blocker", "solution", "agreement", "disagreement", "observation", "decision", "analysis",
         "concern", "clarification")


def main(argv=None) -> int:
    p = C.parser("Workspace search latency")
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--database-url", default="", help="run on this database (no create/drop)")
    p.add_argument("--observations", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.backend == "both" and not args.database_url:
        # One process per database: Django is configured once per process.
        backends = ["sqlite"] + (["postgres"] if pg_reachable() else [])
        results = []
        for backend in backends:
            out = C.temp_dir(f"search-{backend}") / "result.json"
            cmd = [sys.executable, __file__, "--backend", backend, "--json", str(out), "--observations", str(args.observations),
                   "--queries", str(args.queries), "--child"] + (["--quick"] if args.quick else [])
            subprocess.run(cmd, check=True)
            results.append(json.loads(out.read_text())["result"])
        if len(backends) == 1:
            print("(the local PostgreSQL did not answer: SQLite only)")
        return report(results, args.json)
    pg_name = None
    if args.database_url:
        url = args.database_url
    elif args.backend == "postgres":
        pg_name = f"convene_bench_search_{os.getpid()}"
        url = pg_create(pg_name)
    else:
        url = C.sqlite_url(C.temp_dir("search") / "bench.sqlite3")
    try:
        result = run_one(url, args)
    finally:
        if pg_name:
            from django.db import connections

            connections.close_all()
            pg_drop(pg_name)
    if args.child:  # the parent prints the table of all backends
        C.write_json(args.json, "workspace_search", {"result": result})
        return 0
    return report([result], args.json)


def run_one(url: str, args) -> dict:
    C.setup_django(url, realtime="memory")

    from django.contrib.auth import get_user_model
    from django.db import connection

    from facilitation.workspace.search import search_room
    from rooms.models import Agent, Observation, Persona, Room, Seat

    rng = random.Random(7)
    user = get_user_model().objects.create_user(f"bench-{time.time_ns()}")
    persona = Persona.objects.create(key=f"bench-{time.time_ns()}", name="Bench", prompt="p")
    agent = Agent.objects.create(name="Bench agent", persona=persona)
    room = Room.objects.create(name="Search bench", topic="Billing migration", kind="workspace", owner=user, status="active", round=1)
    seat = Seat.objects.create(room=room, agent=agent, position=1)
    n = args.observations if not args.quick else 1000
    started = time.perf_counter()
    rows = [Observation(room=room, seq=i + 1, round=1 + i // 100, seat=seat, author_name="Bench agent",
                        event_type=TYPES[i % len(TYPES)],
                        content=" ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 40))) + ".")
            for i in range(n)]
    Observation.objects.bulk_create(rows, batch_size=1000)
    load_s = time.perf_counter() - started
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("ANALYZE rooms_observation")
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(args.queries)]
    for q in queries[:10]:  # warm caches
        search_room(room.pk, q)
    times, hits = [], 0
    for q in queries:
        t0 = time.perf_counter()
        result = search_room(room.pk, q, limit=20)
        times.append((time.perf_counter() - t0) * 1000)
        hits += len(result.data["observations"])
    return {"engine": result.engine, "observations": n, "queries": len(queries), "p50_ms": C.percentile(times, 50),
            "p95_ms": C.percentile(times, 95), "max_ms": max(times), "hits_per_query": hits / len(queries), "load_s": load_s,
            "load_average": C.load_average()}


def report(results: list[dict], json_path: str | None) -> int:
    print(C.table(["engine", "observations", "queries", "p50 ms", "p95 ms", "max ms", "hits/query", "load s"],
                  [[r["engine"], r["observations"], r["queries"], round(r["p50_ms"], 2), round(r["p95_ms"], 2),
                    round(r["max_ms"], 2), round(r["hits_per_query"], 1), round(r["load_s"], 1)] for r in results],
                  title=f"Workspace search ({C.machine()})"))
    met = {r["engine"]: r["p95_ms"] <= TARGET_P95_MS for r in results}
    for r in results:
        print(f"Target p95 <= {TARGET_P95_MS:g} ms on {r['engine']}: {'met' if met[r['engine']] else 'NOT met'} "
              f"({r['p95_ms']:.1f} ms); {r['load_average']} after the run")
    C.write_json(json_path, "workspace_search", {"results": results, "target_met": met})
    return 0


if __name__ == "__main__":
    sys.exit(main())
