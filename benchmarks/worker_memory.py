"""Worker memory over 1,000 turns: the worker's resident memory (RSS) as the turns go by, through the
real worker path (bundled Redis, one Celery worker process with its threads pool, the scripted model
answering at once).

1,000 participant turns run as 50 discussions of 20 rounds, ``--parallel`` at a time (default 5). The
worker's RSS is read from ``/proc/<pid>/status`` (``VmRSS``) after every 100 turns. The first 100 turns
warm the process up (imports, caches, connection and thread pools); "flat" means the RSS after the
last turn is within ``--tolerance`` (default 10 %) of the RSS after turn 200.

    python benchmarks/worker_memory.py [--turns 1000] [--parallel 5] [--tolerance 0.10] [--json PATH]
"""
import sys
from pathlib import Path

import common as C


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=1000)
    p.add_argument("--parallel", type=int, default=5, help="discussions at once")
    p.add_argument("--tolerance", type=float, default=0.10, help="allowed growth after the warm-up, as a share")
    args = p.parse_args(argv)
    turns_wanted = 200 if args.quick else args.turns
    tmp = C.temp_dir("worker-memory")
    url = C.sqlite_url(tmp / "convene.sqlite3")
    C.setup_django(url, realtime="redis")
    from facilitation.actions.lifecycle import do_start_discussion
    from rooms.models import Observation, Room

    load_before = C.load_average()
    samples = []  # (turns, rss MB)
    with C.WorkerStack(url, C.script_rules(), tmp, concurrency=32) as stack:
        pid = stack.worker_pid()
        cast = C.Cast("mem")
        rooms = [cast.room(C.ROUNDS_PER_ROOM, name=f"memory {i}") for i in range(-(-turns_wanted // C.ROUNDS_PER_ROOM))]
        ids = [r.pk for r in rooms]
        next_sample = 100
        for start in range(0, len(rooms), args.parallel):
            batch = ids[start:start + args.parallel]
            for room_id in batch:
                do_start_discussion(room_id)
            C.wait_until(lambda: not Room.objects.filter(pk__in=batch).exclude(status__in=Room.TERMINAL).exists(),
                         timeout=300, interval=0.1, what="rooms concluded")
            done = Observation.objects.filter(room_id__in=ids, kind="contribution").count()
            while done >= next_sample:
                samples.append((done, rss_mb(pid)))
                next_sample += 100
        turns = Observation.objects.filter(room_id__in=ids, kind="contribution").count()
        if Observation.objects.filter(room_id__in=ids, kind="contribution").values("room_id", "round").distinct().count() != turns:
            raise SystemExit("a turn was committed twice")
    base = next((mb for n, mb in samples if n >= 200), samples[-1][1])
    last = samples[-1][1]
    growth = (last - base) / base if base else 0.0
    flat = growth <= args.tolerance
    print(C.table(["turns", "worker RSS MB"], [[n, f"{mb:.1f}"] for n, mb in samples],
                  title=f"Worker memory over {turns} turns (SQLite, 1 worker, instant scripted model; {C.machine()})"))
    print(f"\nAfter the warm-up (turn 200: {base:.1f} MB) to the last turn ({last:.1f} MB): {growth * 100:+.1f} %; "
          f"flat within {args.tolerance * 100:.0f} %: {'yes' if flat else 'NO'}. Before: {load_before}; after: {C.load_average()}")
    C.write_json(args.json, "worker_memory", {"samples": samples, "turns": turns, "growth": growth, "flat": flat, "target_met": flat})
    return 0


if __name__ == "__main__":
    sys.exit(main())
