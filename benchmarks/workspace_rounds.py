"""Workspace rounds per minute: one workspace with 10 agents on a model that takes 1 s per call,
through the real worker path (bundled Redis, one Celery worker process, scripted model).

    python benchmarks/workspace_rounds.py [--backend sqlite|postgres|both] [--agents 10] [--delay 1] [--window 60]

Each agent publishes one observation per round; the default turn policy (10 observations) ends the
round at the tenth, the moderator writes the narrative (one more model call) and the next round's
agents start. So a round needs two model calls in sequence: with a 1 s model the ideal is 30 rounds
per minute. Counted: rounds that ended inside the window (after a warm-up), the time from the previous
narrative (the agents' start) to the round's end (the agents' part) and from its end to its narrative (the narrative's part),
and duplicates (a seat publishing twice in a round, a round with two narratives), which must be 0.
PostgreSQL runs on a fresh database created on ``BENCH_PG_URL`` (default
``postgres://postgres@127.0.0.1:5432/postgres``) and dropped afterwards.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as C  # noqa: E402
from throughput import pg_create, pg_drop, pg_reachable, stack_failures  # noqa: E402

OBSERVATION = ('{"observations": [{"type": "analysis", "content": "{speaker} in round {round}: the invoice queue needs an '
               'outbox table before cron goes away.", "confidence": 0.7}]}')
NARRATIVE = ('{"summary": "Round {round}: the agents agree the outbox comes first.", "keyDecisions": ["outbox first"], '
             '"blockers": [], "nextSteps": ["draft the outbox schema"]}')


def rules(delay: float) -> list[dict]:
    return [{"purpose": "workspace.observations", "delay": delay, "text": OBSERVATION},
            {"purpose": "workspace.narrative", "delay": delay, "text": NARRATIVE},
            {"text": "{}"}]


def run_one(url: str, agents: int, delay: float, window: float, warmup: float, concurrency: int, tmp: Path) -> dict:
    C.setup_django(url, realtime="redis")
    from django.db.models import Count

    from facilitation.workspace.actions.lifecycle import do_archive_workspace, do_start_workspace
    from rooms.actions.rooms import do_create_room
    from rooms.models import Narrative, Observation, Turn

    load_before = C.load_average()
    with C.WorkerStack(url, rules(delay), tmp, concurrency=concurrency) as stack:
        cast = C.Cast("wsr", participants=agents)
        room = do_create_room(cast.owner, name="Rounds benchmark", topic="Move billing from cron to an event queue",
                              kind="workspace", moderator_id=cast.facilitator.pk,
                              participants=[{"agent_id": a.pk, "role": "participant"} for a in cast.participants])
        t0 = datetime.now(timezone.utc)
        do_start_workspace(room, cast.owner)
        C.wait_until(lambda: Narrative.objects.filter(room=room).exists(), timeout=120, what="the first narrative")
        w0 = max(datetime.now(timezone.utc), t0 + timedelta(seconds=warmup))
        w1 = w0 + timedelta(seconds=window)
        time.sleep(max(0.0, (w0 - datetime.now(timezone.utc)).total_seconds()))
        cpu0 = C.process_cpu_seconds(stack.worker_pid())
        time.sleep(max(0.0, (w1 - datetime.now(timezone.utc)).total_seconds()))
        cpu1 = C.process_cpu_seconds(stack.worker_pid())
        do_archive_workspace(room, cast.owner)
        turns = list(Turn.objects.filter(room=room).order_by("number").values_list("number", "started_at", "ended_at"))
        ended = [n for n, _, end in turns if end is not None and w0 <= end < w1]
        # Round n+1 opens when round n ends, but its agents start once round n's narrative is written.
        written = dict(Narrative.objects.filter(room=room).values_list("round", "created_at"))
        starts = {n: s for n, s, _ in turns}
        agents_part = [(end - written.get(n - 1, starts[n])).total_seconds() for n, _, end in turns
                       if end is not None and n in ended]
        narrative_part = [(written[n] - end).total_seconds() for n, _, end in turns
                          if end is not None and n in ended and n in written]
        typed = Observation.objects.filter(room=room).exclude(event_type="")
        dup_obs = typed.count() - typed.values("round", "seat_id").distinct().count()
        dup_narr = Narrative.objects.filter(room=room).values("round").annotate(n=Count("id")).filter(n__gt=1).count()
    return {
        "database": "PostgreSQL" if url.startswith("postgres") else "SQLite",
        "agents": agents, "delay_s": delay, "window_s": window, "rounds": len(ended),
        "rounds_per_min": len(ended) / window * 60, "ideal_rounds_per_min": 60 / (2 * delay),
        "agents_part_p50_s": C.median(agents_part), "agents_part_max_s": max(agents_part, default=0.0),
        "narrative_part_p50_s": C.median(narrative_part), "narrative_part_max_s": max(narrative_part, default=0.0),
        "worker_cpu_share": (cpu1 - cpu0) / window, "duplicated_observations": dup_obs, "duplicated_narratives": dup_narr,
        "failed_tasks": stack_failures(tmp), "load_before": load_before, "load_after": C.load_average(),
    }


def report(results: list[dict], json_path: str | None) -> int:
    rows = [[r["database"], r["agents"], f"{r['delay_s']:g} s", f"{r['window_s']:.0f} s", r["rounds"],
             round(r["rounds_per_min"], 1), round(r["ideal_rounds_per_min"], 1),
             f"{r['rounds_per_min'] / r['ideal_rounds_per_min'] * 100:.0f}%",
             round(r["agents_part_p50_s"], 2), round(r["narrative_part_p50_s"], 2),
             f"{r['worker_cpu_share'] * 100:.0f}%", r["duplicated_observations"] + r["duplicated_narratives"],
             r["failed_tasks"]] for r in results]
    print(C.table(["database", "agents", "model", "window", "rounds", "rounds/min", "ideal", "of ideal",
                   "agents' part p50 s", "narrative's part p50 s", "worker CPU", "duplicates", "failed tasks"],
                  rows, title=f"Workspace rounds per minute, one room, real worker path ({C.machine()})"))
    for r in results:
        print(f"{r['database']}: before {r['load_before']}; after {r['load_after']}")
    C.write_json(json_path, "workspace_rounds", {"results": results})
    return 0


def main(argv=None) -> int:
    p = C.parser("Workspace rounds per minute")
    p.add_argument("--agents", type=int, default=10)
    p.add_argument("--delay", type=float, default=1.0, help="seconds the model takes per call")
    p.add_argument("--window", type=float, default=60.0, help="seconds measured")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds after the start that are not measured")
    p.add_argument("--concurrency", type=int, default=32, help="threads of the worker process")
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.window = 20.0
    if args.backend == "both":
        # One process per database: Django is configured once per process.
        backends = ["sqlite"] + (["postgres"] if pg_reachable() else [])
        outputs = []
        for backend in backends:
            out = C.temp_dir(f"wsrounds-{backend}") / "result.json"
            subprocess.run([sys.executable, __file__, "--backend", backend, "--json", str(out), "--agents", str(args.agents),
                            "--delay", str(args.delay), "--window", str(args.window), "--warmup", str(args.warmup),
                            "--concurrency", str(args.concurrency), "--child"], check=True)
            outputs.append(json.loads(out.read_text())["result"])
        if len(backends) == 1:
            print("(the local PostgreSQL did not answer: SQLite only)")
        return report(outputs, args.json)
    tmp = C.temp_dir(f"wsrounds-{args.backend}")
    pg_name = None
    if args.backend == "postgres":
        pg_name = f"convene_bench_wsr_{os.getpid()}"
        url = pg_create(pg_name)
    else:
        url = C.sqlite_url(tmp / "convene.sqlite3")
    try:
        result = run_one(url, args.agents, args.delay, args.window, args.warmup, args.concurrency, tmp)
    finally:
        if pg_name:
            from django.db import connections

            connections.close_all()
            pg_drop(pg_name)
    if args.child:
        C.write_json(args.json, "workspace_rounds", {"result": result})
        return 0
    return report([result], args.json)


if __name__ == "__main__":
    sys.exit(main())
