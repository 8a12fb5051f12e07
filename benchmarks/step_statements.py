"""SQL statements per engine step, by step kind: what a durable step asks of the database.

One discussion of ``--rounds`` rounds runs in-process through the real ``facilitation.runs.runner.run_step``
with a model that answers at once (``facilitation.discussions.steps.provider_for`` is replaced), on a fresh
SQLite file. Every statement a step sends is counted (Django's ``CaptureQueriesContext``: claim,
context, commit, usage; BEGIN/COMMIT are not statements here), and the counts are printed per step
kind (median over the room's steps of that kind), with the pages each step wrote to SQLite's WAL (read off
the WAL file's size, checkpoints held off while the room runs: one B-tree page per table or index a step's
statements touch, plus the database header). A participant turn is a turn step plus the evaluation that
picked its speaker.

    python benchmarks/step_statements.py [--rounds 5] [--json PATH]
"""
import statistics
from pathlib import Path

import common as C


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("-v", "--verbose", action="store_true", help="also print the statements of one step of each kind")
    args = p.parse_args(argv)
    tmp = C.temp_dir("statements")
    C.setup_django(C.sqlite_url(tmp / "convene.sqlite3"), realtime="off")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from facilitation.discussions import steps as discussion_steps
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.runs.runner import run_step
    from facilitation.runs.leases import current
    from facilitation.runs.scheduling import driving

    provider = C.instant_provider()
    discussion_steps.provider_for = lambda name="": provider
    cast = C.Cast("stmts")
    room = cast.room(args.rounds)
    counts: dict[str, list[int]] = {}
    pages: dict[str, list[int]] = {}
    samples: dict[str, list[str]] = {}
    wal = Path(connection.settings_dict["NAME"] + "-wal")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_autocheckpoint=0")  # held off: the WAL only grows while the room runs
        page_size = cursor.execute("PRAGMA page_size").fetchone()[0]
    with driving():
        do_start_discussion(room.pk)
        while True:
            seq = current(room.pk).step_seq
            size = wal.stat().st_size if wal.exists() else 0
            with CaptureQueriesContext(connection) as queries:
                result = run_step(room.pk, seq)
            if result.outcome != "committed":
                raise SystemExit(f"step {seq}: {result.outcome}")
            statements = [q["sql"] for q in queries.captured_queries if q["sql"].split()[0].upper() not in ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE")]
            counts.setdefault(result.step, []).append(len(statements))
            pages.setdefault(result.step, []).append((wal.stat().st_size - size) // (page_size + 24))  # a frame: header + page
            samples.setdefault(result.step, statements)
            if result.step == "synthesis":
                break
    rows = [[kind, len(v), statistics.median(v), min(v), max(v), statistics.median(pages[kind]), min(pages[kind]), max(pages[kind])]
            for kind, v in sorted(counts.items())]
    print(C.table(["step kind", "steps", "statements (median)", "min", "max", "WAL pages (median)", "min", "max"], rows,
                  title=f"SQL statements and WAL pages per engine step ({args.rounds} rounds, SQLite; {C.machine()})"))
    turn = statistics.median(counts["turn"]) + statistics.median(counts["evaluation"])
    turn_pages = statistics.median(pages["turn"]) + statistics.median(pages["evaluation"])
    print(f"\nPer participant turn (turn + evaluation): {turn:g} statements, {turn_pages:g} WAL pages")
    if args.verbose:
        for kind, statements in samples.items():
            print(f"\n{kind}:")
            for sql in statements:
                print("  " + sql[:160])
    C.write_json(args.json, "step_statements", {"rounds": args.rounds, "per_kind": counts, "per_turn": turn,
                                                "wal_pages_per_kind": pages, "wal_pages_per_turn": turn_pages})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
