"""Engine overhead per step through the real worker path: Celery over the bundled Redis, one real worker
process (``Runtime(web=False, beat=False)``, threads pool), the scripted model answering at once.

Definition: a step's overhead is the time from the moment it became ready (the previous step of the
same room committed, or the room was started) to the moment it committed, with a model that takes
no time: so it is everything the engine and the worker path add to a model call. It is read from
the database after the run: consecutive commit timestamps of one room's steps (each step commits
exactly one Observation; ``created_at`` is taken inside its commit transaction; the first step's
"ready" is the room's ``started_at``). It includes: the on-commit enqueue to Redis, the worker
fetching and dispatching the task, the lease claim, loading the room, building the prompt, the model
call in the helper thread, the commit transaction (observation, invocation, event, room state), the
push of the event to Redis and the enqueue of the next step. While the worker has threads to spare, a
step whose commit makes the room's next step ready at once is followed by that step in the same task
(``facilitation.runs.carry``): such a step goes through no message, so its overhead has no enqueue,
fetch or acknowledgement in it.

Rooms run one at a time (``--parallel 1``, the uncontended overhead) and then ``--parallel`` rooms at
once (default 8) to show the overhead under some load. Each room has 20 rounds (42 steps).

    python benchmarks/worker_overhead.py [--quick] [--json PATH] [--rooms 10] [--parallel 8] [--database-url URL]
"""
import sys
import time

import common as C


def step_intervals(room_ids: list[int]) -> tuple[list[float], list[float]]:
    """All steps' overheads, and the participant turns' alone (seconds)."""
    from rooms.models import Observation, Room

    all_steps, turns = [], []
    for room in Room.objects.filter(pk__in=room_ids):
        prev = room.started_at
        for created, kind in Observation.objects.filter(room=room).order_by("seq").values_list("created_at", "kind"):
            gap = (created - prev).total_seconds()
            all_steps.append(gap)
            if kind == "contribution":
                turns.append(gap)
            prev = created
    return all_steps, turns


def run_batch(cast, rooms: int, parallel: int, rounds: int) -> tuple[list[int], float]:
    from facilitation.actions.lifecycle import do_start_discussion
    from rooms.models import Room

    done_ids = []
    started = time.perf_counter()
    pending = [cast.room(rounds, name=f"overhead {i}") for i in range(rooms)]
    while pending:
        batch, pending = pending[:parallel], pending[parallel:]
        for room in batch:
            do_start_discussion(room.pk)
        ids = [r.pk for r in batch]
        C.wait_until(lambda: not Room.objects.filter(pk__in=ids).exclude(status__in=Room.TERMINAL).exists(),
                     timeout=120, interval=0.05, what="rooms concluded")
        bad = Room.objects.filter(pk__in=ids).exclude(status="concluded").count()
        if bad:
            raise SystemExit(f"{bad} rooms did not conclude")
        done_ids += ids
    return done_ids, time.perf_counter() - started


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--rooms", type=int, default=10, help="rooms per configuration (42 steps each)")
    p.add_argument("--parallel", type=int, default=8, help="rooms at once in the loaded configuration")
    p.add_argument("--database-url", default="", help="default: a fresh SQLite file in a temporary directory")
    args = p.parse_args(argv)
    rooms = 3 if args.quick else args.rooms
    tmp = C.temp_dir("worker-overhead")
    url = args.database_url or C.sqlite_url(tmp / "convene.sqlite3")
    C.setup_django(url, realtime="redis")
    from rooms.models import Observation

    load_before = C.load_average()
    results = {}
    with C.WorkerStack(url, C.script_rules(), tmp, concurrency=32):
        cast = C.Cast("wo")
        # Warm-up: the worker starts, connects, imports; one short room end to end.
        run_batch(cast, 1, 1, 2)
        for label, parallel in (("1 room at a time", 1), (f"{args.parallel} rooms at once", args.parallel)):
            ids, elapsed = run_batch(cast, rooms, parallel, C.ROUNDS_PER_ROOM)
            steps, turns = step_intervals(ids)
            results[label] = {
                "rooms": len(ids), "steps": len(steps), "elapsed_s": elapsed,
                "p50_ms": C.median(steps) * 1000, "p90_ms": C.percentile(steps, 90) * 1000,
                "p99_ms": C.percentile(steps, 99) * 1000, "max_ms": max(steps) * 1000,
                "turn_p50_ms": C.median(turns) * 1000, "turn_p99_ms": C.percentile(turns, 99) * 1000,
                "steps_per_s": len(steps) / elapsed,
            }
        if Observation.objects.filter(kind="contribution").values("room_id", "round").distinct().count() != \
                Observation.objects.filter(kind="contribution").count():
            raise SystemExit("a turn was committed twice")
    headers = ["configuration", "steps", "p50 ms", "p90 ms", "p99 ms", "max ms", "turn-step p50 ms", "turn-step p99 ms", "steps/s"]
    rows = [[k, v["steps"], v["p50_ms"], v["p90_ms"], v["p99_ms"], v["max_ms"], v["turn_p50_ms"], v["turn_p99_ms"], v["steps_per_s"]]
            for k, v in results.items()]
    db = "PostgreSQL" if url.startswith("postgres") else "SQLite"
    print(C.table(headers, rows, title=f"Engine overhead per step through Celery + Redis + 1 worker (instant scripted model; {db}; {C.machine()})"))
    first = results["1 room at a time"]
    met = first["p50_ms"] <= 10 and first["p99_ms"] <= 50
    print(f"\nTarget (1 room at a time): p50 <= 10 ms, p99 <= 50 ms: {'met' if met else 'NOT met'} "
          f"(p50 {first['p50_ms']:.1f} ms, p99 {first['p99_ms']:.1f} ms). Before: {load_before}; after: {C.load_average()}")
    C.write_json(args.json, "worker_overhead", {"database": db, "results": results, "target_met": met,
                                                 "load_before": load_before, "load_after": C.load_average()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
