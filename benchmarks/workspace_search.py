"""Workspace search latency over 10,000 observations (SQLite FTS5 or PostgreSQL full-text).

    python benchmarks/workspace_search.py                       # SQLite file in a temporary directory
    python benchmarks/workspace_search.py --database-url postgres://postgres@127.0.0.1:5432/convene_bench_search

The PostgreSQL database is created (and dropped afterwards) when it does not exist. Prints p50,
p95 and max of ``search_room`` over queries of one to three words, lexical only.
"""
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as C  # noqa: E402

WORDS = ("invoice queue outbox cron billing retry ledger refund schedule worker backlog latency customer export "
         "migration rollback payment reminder tax currency audit report alert dashboard deploy staging replay "
         "idempotent duplicate timeout webhook partner settlement").split()
TYPES = ("question", "blocker", "solution", "agreement", "disagreement", "observation", "decision", "analysis",
         "concern", "clarification")


def _pg_database(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(base + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def main():
    p = C.parser("Workspace search latency")
    p.add_argument("--database-url", default="")
    p.add_argument("--observations", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=300)
    args = p.parse_args()
    url = args.database_url or C.sqlite_url(C.temp_dir("search") / "bench.sqlite3")
    if url.startswith("postgres"):
        _pg_database(url)
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
    engine = result.engine
    print(C.table(["engine", "observations", "queries", "p50 ms", "p95 ms", "max ms", "hits/query", "load s"],
                  [[engine, n, len(queries), round(C.percentile(times, 50), 2), round(C.percentile(times, 95), 2),
                    round(max(times), 2), round(hits / len(queries), 1), round(load_s, 1)]],
                  title=f"Workspace search ({C.machine()})"))
    C.write_json(args.json, "workspace_search", {"engine": engine, "observations": n, "p50_ms": C.percentile(times, 50),
                                                 "p95_ms": C.percentile(times, 95), "max_ms": max(times)})


if __name__ == "__main__":
    main()
