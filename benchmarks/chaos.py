"""Chaos: kill the worker (SIGKILL) while discussions are mid-turn, and restart Redis mid-run.

20 discussions (``--rooms``) run on a slow scripted model (every call takes ``--delay`` s) through the
real worker path: the bundled Redis, one Celery worker process and beat (the sweeper), supervised as
``manage.py serve`` supervises them. Scenario ``worker``: once every room holds a lease on a step in
flight, the worker's process group is killed with SIGKILL; the supervisor starts a new worker, and
heartbeat leases let the sweeper hand the abandoned steps out again. Scenario ``redis``: the bundled
Redis is stopped with everything queued in it and started again 2 s later. Scenario ``postgres`` (run on a
fresh database of the local PostgreSQL, which it creates and drops): the PostgreSQL server is stopped,
dropping every connection, and started again 2 s later (``pg_ctlcluster``; needs the right to do so).

Figures against the goals: discussions concluded (20/20), duplicated and missing turns (0),
repeated model calls per discussion (at most 1; counted from the scripted model's call log, which
also sees the calls a killed worker never finished), and seconds from the fault to the first
committed step (at most 15 s).

    python benchmarks/chaos.py [--rooms 20] [--rounds 4] [--delay 3] [--scenario worker,redis] [--json PATH]
    python benchmarks/chaos.py --scenario postgres
"""
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import common as C

sys.path.insert(0, str(Path(__file__).parent))
from throughput import pg_create, pg_drop, pg_reachable  # noqa: E402

GOALS = {"concluded": "all", "duplicated": 0, "missing": 0, "repeated_calls_max": 1, "first_progress_s": 15.0}


def _env(tmp: Path, delay: float) -> dict:
    script = tmp / "script.json"
    script.write_text(json.dumps(C.script_rules(delay=delay)))
    return {"LLM_PROVIDER": "scripted", "LLM_FALLBACK": "", "CONVENE_SCRIPT_FILE": str(script),
            "CONVENE_SCRIPT_CALLS_LOG": str(tmp / "calls.jsonl"), "CONVENE_PARTICIPANT_TIMEOUT": str(delay * 4),
            "CONVENE_FACILITATOR_TIMEOUT": str(delay * 4)}


def _calls(tmp: Path) -> list[dict]:
    path = tmp / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _pg_cluster(action: str) -> None:
    """Stop or start the local PostgreSQL cluster (Debian's ``pg_ctlcluster``)."""
    version = sorted(os.listdir("/etc/postgresql"))[-1]
    subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _answers(predicate):
    """``predicate`` for ``wait_until``, counting a database that is down as "not yet"."""
    from django.db import Error, connection

    def check():
        try:
            return predicate()
        except Error:
            connection.close()
            return False

    return check


def run(scenario: str, url: str, rooms: int, rounds: int, delay: float, tmp: Path) -> dict:
    from django.conf import settings

    from config.runtime import Runtime
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.runs import leases
    from rooms.models import Observation, Room, Seat

    env = {"DATABASE_URL": url, **_env(tmp, delay)}
    log = open(tmp / "runtime.log", "a")
    runtime = Runtime(out=log, web=False, worker=True, beat=True, extra_env=env, supervise=True).start()
    C.point_at_redis(runtime.redis_url)
    settings.REALTIME_BACKEND = "redis"
    try:
        cast = C.Cast(f"chaos-{scenario}")
        created = [cast.room(rounds, name=f"chaos {scenario} {i}") for i in range(rooms)]
        ids = [r.pk for r in created]
        for room_id in ids:
            do_start_discussion(room_id)

        def mid_turn() -> int:
            return sum(1 for r in Room.objects.filter(pk__in=ids)
                       if r.round >= 1 and (r.engine_state or {}).get("phase") == "turn" and leases.held(r.pk))

        C.wait_until(lambda: mid_turn() >= rooms, timeout=120 + rounds * delay * 4, what=f"{rooms} rooms mid-turn")
        time.sleep(delay / 3)  # the model calls are under way
        in_flight = mid_turn()
        before = Observation.objects.filter(room_id__in=ids).count()
        fault_at = datetime.now(timezone.utc)
        t0 = time.monotonic()
        if scenario == "worker":
            os.killpg(runtime.procs["worker"].pid, signal.SIGKILL)
        elif scenario == "postgres":
            from django.db import connection

            connection.close()
            _pg_cluster("stop")
            try:
                time.sleep(2.0)
            finally:
                _pg_cluster("start")
        else:
            runtime.redis.stop()
            time.sleep(2.0)
            runtime.redis.start()
        C.wait_until(_answers(lambda: Observation.objects.filter(room_id__in=ids, created_at__gt=fault_at).exists()),
                     timeout=300, interval=0.1, what="first progress after the fault")
        first_progress = time.monotonic() - t0
        C.wait_until(_answers(lambda: Room.objects.filter(pk__in=ids, status__in=Room.TERMINAL).count() == rooms),
                     timeout=300 + rounds * delay * 8, interval=0.5, what="every room ended")
        recovered = time.monotonic() - t0
        concluded = Room.objects.filter(pk__in=ids, status=Room.Status.CONCLUDED).count()
        turns = list(Observation.objects.filter(room_id__in=ids, kind="contribution").values_list("room_id", "round"))
        per_round = Counter(turns)
        duplicated = sum(n - 1 for n in per_round.values() if n > 1)
        missing = sum(1 for room_id in ids for rnd in range(1, rounds + 1) if (room_id, rnd) not in per_round)
        seats = dict(Seat.objects.filter(room_id__in=ids).values_list("pk", "room_id"))
        calls = Counter((seats.get(c["seat"]), c["round"]) for c in _calls(tmp)
                        if c["purpose"] == "contribution" and c["seat"] in seats)
        repeated = Counter()
        for (room_id, _), n in calls.items():
            repeated[room_id] += max(0, n - 1)
        return {
            "scenario": scenario, "database": "PostgreSQL" if url.startswith("postgres") else "SQLite", "rooms": rooms,
            "rounds": rounds, "delay_s": delay, "in_flight_at_fault": in_flight, "steps_before_fault": before,
            "concluded": concluded, "duplicated": duplicated, "missing": missing,
            "repeated_calls_max": max(repeated.values(), default=0), "repeated_calls_total": sum(repeated.values()),
            "first_progress_s": round(first_progress, 2), "all_ended_s": round(recovered, 1),
            "worker_restarts": runtime.restarts.get("worker", 0), "load": C.load_average(),
        }
    finally:
        runtime.stop()
        log.close()


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--rooms", type=int, default=20)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--delay", type=float, default=3.0, help="seconds every model call takes")
    p.add_argument("--scenario", default="worker,redis", help="comma-separated: worker, redis")
    args = p.parse_args(argv)
    if args.quick:
        args.rooms, args.rounds = 5, 3
    scenarios = [s.strip() for s in args.scenario.split(",") if s.strip()]
    unknown = set(scenarios) - {"worker", "redis", "postgres"}
    if unknown:
        p.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    tmp = C.temp_dir("chaos")
    pg_name = None
    if "postgres" in scenarios:  # the whole run on a fresh PostgreSQL database
        if not pg_reachable():
            p.error("the postgres scenario needs the local PostgreSQL (BENCH_PG_URL)")
        pg_name = f"convene_chaos_{os.getpid()}"
        url = pg_create(pg_name)
    else:
        url = C.sqlite_url(tmp / "convene.sqlite3")
    C.setup_django(url, realtime="redis")
    results = []
    try:
        for scenario in scenarios:
            work = tmp / scenario
            work.mkdir()
            results.append(run(scenario, url, args.rooms, args.rounds, args.delay, work))
    finally:
        if pg_name:
            from django.db import connections

            connections.close_all()
            pg_drop(pg_name)
    rows = []
    for r in results:
        met = (r["concluded"] == r["rooms"] and r["duplicated"] == 0 and r["missing"] == 0
               and r["repeated_calls_max"] <= GOALS["repeated_calls_max"] and r["first_progress_s"] <= GOALS["first_progress_s"])
        rows.append([r["scenario"], f"{r['in_flight_at_fault']}/{r['rooms']}", f"{r['concluded']}/{r['rooms']}", r["duplicated"],
                     r["missing"], r["repeated_calls_max"], r["repeated_calls_total"], r["first_progress_s"], r["all_ended_s"],
                     "yes" if met else "no"])
    print(C.table(["fault", "mid-turn at fault", "concluded", "duplicated turns", "missing turns",
                   "repeated calls (max/room)", "repeated calls (all)", "first progress s", "all ended s", "goals met"], rows,
                  title=f"Chaos on {results[0]['database'] if results else 'SQLite'}, {args.rooms} discussions x {args.rounds} rounds, model {args.delay:g} s per call "
                        f"(goals: all concluded, 0 duplicated/missing, <= 1 repeated call per discussion, first progress <= 15 s)"))
    print(f"load average after: {C.load_average()}")
    C.write_json(args.json, "chaos", {"results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
