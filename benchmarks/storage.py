"""Storage per turn: bytes the engine adds to the database per participant turn, against the turn's own text,
at N = 20, 100 and 400 turns, compared with LangGraph's SQLite checkpoints for the same turns.

Measured as the SQLite file size after a WAL checkpoint and VACUUM, after the turns minus before them
(rooms, seats and agents are created before the "before" size is taken). Everything the engine writes
for a turn is included: the facilitator decision that picked the speaker, the contribution
(Observation), both calls' Invocation rows (invocation logging: input summary and the model's full
output), the room events kept for replay (RoomEvent), the Turn row and the indexes; each room's
opening decision and synthesis are spread over its turns. A room holds at most 20 rounds, so N turns
are ceil(N / 20) rooms of 20. A second table breaks the bytes down by table (SQLite's dbstat:
pages used by each table and index), and a third shows the rows' payload by the turn's position in
its room (round 1..20), which is what "flat in N" means inside one discussion.

    python benchmarks/storage.py [--quick] [--json PATH]
"""
import sqlite3
import sys

import common as C


def page_bytes_by_table(path) -> dict:
    """Bytes of the pages used by each table, its indexes included (SQLite's dbstat)."""
    conn = sqlite3.connect(str(path))
    try:
        owner = dict(conn.execute("SELECT name, tbl_name FROM sqlite_master").fetchall())
        out: dict = {}
        for name, size in conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall():
            table = owner.get(name, name)
            out[table] = out.get(table, 0) + size
        return out
    finally:
        conn.close()


def make_rooms(cast, turns: int) -> list:
    return [cast.room(r) for r in C.rooms_for(turns)]


def drive(rooms) -> None:
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.runs.runner import run_step
    from facilitation.runs.leases import current
    from facilitation.runs.scheduling import driving

    with driving():
        for room in rooms:
            room = do_start_discussion(room.pk)
            seq = current(room.pk).step_seq
            while True:
                result = run_step(room.pk, seq)
                if result.outcome != "committed":
                    raise RuntimeError(f"room {room.pk} step {seq}: {result.outcome}")
                seq += 1
                if result.step == "synthesis":
                    break


def _row_bytes(conn, table: str, where: str, args: tuple) -> int:
    cur = conn.execute(f"SELECT * FROM {table} WHERE {where}", args)
    total = 0
    for row in cur:
        for v in row:
            if v is None:
                continue
            total += len(v) if isinstance(v, bytes) else len(str(v).encode())
    return total


def payload_by_round(path, room_id: int) -> dict[int, int]:
    """Payload bytes (sum of column values) of the rows written for each round's turn and the decision after it."""
    conn = sqlite3.connect(str(path))
    try:
        out = {}
        obs = conn.execute("SELECT seq, round, kind FROM rooms_observation WHERE room_id=? ORDER BY seq", (room_id,)).fetchall()
        for i, (seq, rnd, kind) in enumerate(obs):
            if kind != "contribution":
                continue
            seqs = [seq] + ([obs[i + 1][0]] if i + 1 < len(obs) else [])
            marks = ",".join("?" * len(seqs))
            size = _row_bytes(conn, "rooms_observation", f"room_id=? AND seq IN ({marks})", (room_id, *seqs))
            # Events: the turn's, the status event after it (seq+1) and the decision's.
            ev_seqs = seqs + [seq + 1]
            size += _row_bytes(conn, "rooms_roomevent", f"room_id=? AND seq IN ({','.join('?' * len(ev_seqs))})", (room_id, *ev_seqs))
            # Invocations for the two calls, by correlation id "room:step_seq:attempt" order (the i-th and i+1-th call).
            inv = conn.execute("SELECT id FROM rooms_invocation WHERE room_id=? ORDER BY id", (room_id,)).fetchall()
            ids = [inv[i][0]] + ([inv[i + 1][0]] if i + 1 < len(inv) else [])
            size += _row_bytes(conn, "rooms_invocation", f"id IN ({','.join('?' * len(ids))})", tuple(ids))
            out[rnd] = size
        return out
    finally:
        conn.close()


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    args = p.parse_args(argv)
    sizes = (20, 100) if args.quick else (20, 100, 400)
    tmp = C.temp_dir("storage")
    C.setup_django(C.sqlite_url(tmp / "convene-0.sqlite3"), realtime="off")
    from django.db import connection

    from facilitation.discussions import steps as discussion_steps

    provider = C.instant_provider()
    discussion_steps.provider_for = lambda name="": provider
    import frameworks as F

    text_bytes = len(C.TURN_TEXT.encode())
    results = {}
    breakdown = {}
    by_round = {}
    for n in sizes:
        path = tmp / f"convene-{n}.sqlite3"
        C.switch_sqlite(path)
        cast = C.Cast(f"s{n}")
        rooms = make_rooms(cast, n)
        before = C.sqlite_vacuumed_size(path)
        before_tables = page_bytes_by_table(path)
        drive(rooms)
        connection.close()
        after = C.sqlite_vacuumed_size(path)
        after_tables = page_bytes_by_table(path)
        results[n] = {"bytes": after - before, "per_turn": (after - before) / n}
        breakdown[n] = {t: (after_tables.get(t, 0) - before_tables.get(t, 0)) / n for t in after_tables
                        if after_tables.get(t, 0) != before_tables.get(t, 0)}
        if n == sizes[0]:
            by_round = payload_by_round(path, rooms[0].pk)

    lg_one, lg_rooms = {}, {}
    for n in sizes:
        r = F.run_langgraph(tmp / f"lg-one-{n}.sqlite", [n])
        lg_one[n] = {"bytes": r["bytes"], "per_turn": r["bytes"] / n}
        r = F.run_langgraph(tmp / f"lg-rooms-{n}.sqlite", C.rooms_for(n))
        lg_rooms[n] = {"bytes": r["bytes"], "per_turn": r["bytes"] / n}

    headers = ["system"] + [f"bytes/turn N={n}" for n in sizes] + [f"x turn text N={n}" for n in sizes]
    rows = []
    for label, res in (("Convene engine (observations, decisions, invocations, events, indexes)", results),
                       ("LangGraph SqliteSaver, one thread of N turns", lg_one),
                       ("LangGraph SqliteSaver, threads of 20 turns", lg_rooms)):
        rows.append([label] + [res[n]["per_turn"] for n in sizes] + [res[n]["per_turn"] / text_bytes for n in sizes])
    print(C.table(headers, rows, title=f"Storage per participant turn (turn text = {text_bytes} bytes; SQLite file after VACUUM; {F.langgraph_version()})"))
    tables = sorted({t for n in sizes for t in breakdown[n]}, key=lambda t: -breakdown[sizes[-1]].get(t, 0))
    print()
    print(C.table(["table (with its indexes)"] + [f"bytes/turn N={n}" for n in sizes],
                  [[t] + [breakdown[n].get(t, 0.0) for n in sizes] for t in tables],
                  title="Convene: where the bytes go (SQLite pages per table, after minus before, per turn; whole 4 KB pages, so small N is coarse)"))
    print()
    picks = [r for r in sorted(by_round) if r in (1, 2, 5, 10, 15, 19, 20)]
    print(C.table(["round in the room"] + [str(r) for r in picks], [["row payload bytes"] + [by_round[r] for r in picks]],
                  title="Convene: payload of the rows written for one turn (its decision, contribution, 2 invocations, 3 events) by position in a 20-round room"))
    growth = results[sizes[-1]]["per_turn"] / results[sizes[0]]["per_turn"]
    flat = growth <= 1.10
    print(f"\nTarget: flat in N (N={sizes[-1]} vs N={sizes[0]}: x{growth:.2f}): {'met' if flat else 'NOT met'}; "
          f"multiple of the turn text at N={sizes[-1]}: x{results[sizes[-1]]['per_turn'] / text_bytes:.1f}")
    C.write_json(args.json, "storage", {
        "sizes": list(sizes), "turn_text_bytes": text_bytes,
        "convene": {str(n): v for n, v in results.items()}, "langgraph_one_thread": {str(n): v for n, v in lg_one.items()},
        "langgraph_threads_of_20": {str(n): v for n, v in lg_rooms.items()},
        "breakdown": {str(n): v for n, v in breakdown.items()}, "payload_by_round": by_round,
        "growth": growth, "target_met": flat,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
