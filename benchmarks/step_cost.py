"""Durable step cost in-process: Convene's engine against LangGraph (SQLite checkpointer, durability="sync")
and, for reference, AutoGen's RoundRobinGroupChat (in memory, not durable), doing the same turns.

What one Convene participant turn costs here: the facilitator's decision step that picks the
speaker, then the participant's turn step, driven as the in-process driver of ``run_discussion``
drives them (``scheduling.driving``). Each step is the real ``facilitation.runs.runner.run_step``:
take the lease (handed on by the commit of the step before, as in a worker carrying the room on; a
conditional UPDATE for a room's first step), load the room, build the prompt, call the model in the
helper thread (an instant model: ``facilitation.discussions.steps.provider_for`` is replaced by a provider
that answers at once), commit the observation, the invocation and the room event with the lease
check, and push the event on commit. A room holds at most 20 rounds, so N turns run as
ceil(N / 20) rooms one after another; every room also costs its start, its opening decision and
its synthesis, all counted (a 20-turn room is 42 steps: opening + 20 x (turn + evaluation) +
synthesis). "ms / turn" = total time / N participant turns; "ms / step" = total / steps.

The LangGraph graph has the same shape (facilitator node -> participant node, per turn, then a
synthesis node), keeps the transcript in ``messages`` (add_messages) and is run with
``durability="sync"``; it is run as one thread of N turns (how LangGraph keeps a conversation)
and, like-for-like with Convene's room cap, as threads of 20 turns, each shape with both SQLite settings below;
Convene is compared with the better shape at the same setting.

SQLite durability: Convene uses WAL with ``synchronous=NORMAL`` (config/settings.py: a commit
survives a crash of the process, the last commits may be lost on power loss). SqliteSaver uses
WAL with SQLite's default ``synchronous=FULL`` (fsync at every commit). Both are measured both ways.

The systems take turns: each repetition runs every one of them once, in an order that rotates, so a change
in the machine's speed weighs on all alike. The tables give each system's median run; the verdict takes,
for each size and durability, the ratio of Convene's run to LangGraph's best within each repetition, and
its median over the repetitions (<= 1.0 is met). One more Convene run at the largest N, outside the verdict, shows
how much of a turn goes to building the room context and the prompts, which the LangGraph nodes here do not do.

    python benchmarks/step_cost.py [--quick] [--json PATH] [--realtime memory|redis]
"""
import gc
import sys
import time

import common as C


def convene_run(cast, turns: int) -> dict:
    """Run ``turns`` participant turns through the engine, room after room. Setup (creating rooms) is not timed."""
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.runs.runner import run_step
    from facilitation.runs.leases import current
    from facilitation.runs.scheduling import driving

    rooms = [cast.room(r) for r in C.rooms_for(turns)]
    C.checkpoint_wal()  # what setup wrote is not the run's to copy into the database file
    steps = 0
    per_step = []
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    with driving():
        for room in rooms:
            room = do_start_discussion(room.pk)
            seq = current(room.pk).step_seq
            while True:
                t0 = time.perf_counter()
                result = run_step(room.pk, seq)
                per_step.append(time.perf_counter() - t0)
                if result.outcome != "committed":
                    raise RuntimeError(f"room {room.pk} step {seq}: {result.outcome}")
                steps += 1
                seq += 1
                if result.step == "synthesis":
                    break
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"seconds": elapsed, "cpu_seconds": cpu, "turns": turns, "steps": steps, "rooms": len(rooms),
            "step_p50_ms": C.median(per_step) * 1000, "step_p99_ms": C.percentile(per_step, 99) * 1000}


def convene_split(cast, turns: int) -> dict:
    """One more Convene run, not part of the verdict: the share of its time spent building each step's room
    context (``load_context``: seats, records, room state, summaries) and prompt (``for_step``), work the
    LangGraph graph's nodes here do not do (they append a fixed message). Timed by wrapping the two functions
    where the discussion steps call them; the wrappers add a little to the run's total."""
    from facilitation.discussions import steps

    spent = {"load_context": 0.0, "for_step": 0.0}

    def timed(name, fn):
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - started
        return run

    originals = {name: getattr(steps, name) for name in spent}
    for name, fn in originals.items():
        setattr(steps, name, timed(name, fn))
    try:
        run = convene_run(cast, turns)
    finally:
        for name, fn in originals.items():
            setattr(steps, name, fn)
    return {**run, "context_seconds": spent["load_context"], "prompt_seconds": spent["for_step"]}


def verify(turns_expected: int) -> None:
    from rooms.models import Invocation, Observation, RoomEvent

    got = Observation.objects.filter(kind="contribution").count()
    if got != turns_expected:
        raise SystemExit(f"expected {turns_expected} turns, found {got}")
    if Invocation.objects.count() == 0 or RoomEvent.objects.count() == 0:
        raise SystemExit("no invocations or events were written")


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--realtime", choices=["memory", "redis"], default="redis",
                   help="where committed events are pushed: the bundled Redis (default) or an in-memory list")
    p.add_argument("--repeat", type=int, default=3, help="runs per configuration; the median is reported")
    args = p.parse_args(argv)
    sizes = (20, 100) if args.quick else (20, 100, 400)
    repeat = 1 if args.quick else args.repeat
    tmp = C.temp_dir("step-cost")
    load_before = C.load_average()

    C.setup_django(C.sqlite_url(tmp / "convene-0.sqlite3"), realtime=args.realtime)
    from facilitation.discussions import steps as discussion_steps

    redis = None
    if args.realtime == "redis":
        from config.embedded_redis import EmbeddedRedis

        redis = EmbeddedRedis().start()
        C.point_at_redis(redis.url)
    provider = C.instant_provider()
    discussion_steps.provider_for = lambda name="": provider

    import frameworks as F

    results = {"convene": {}, "convene_full": {}, "lg_shape": {}, "lg_shape_normal": {}, "lg_rooms": {}, "lg_rooms_normal": {},
               "autogen": {}}
    db = 0

    def fresh(sync: str = "NORMAL"):
        nonlocal db
        db += 1
        C.sqlite_synchronous(sync)
        C.switch_sqlite(tmp / f"convene-{db}.sqlite3")
        C.remove_sqlite(tmp / f"convene-{db - 1}.sqlite3")
        return C.Cast(f"b{db}")

    def once(key: str, n: int, rep: int) -> dict:
        if key in ("convene", "convene_full"):
            run = convene_run(fresh("NORMAL" if key == "convene" else "FULL"), n)
            verify(n)
            return run
        if key == "autogen":
            return F.run_autogen(n)
        threads, sync = {"lg_shape": ([n], ""), "lg_shape_normal": ([n], "NORMAL"), "lg_rooms": (C.rooms_for(n), ""),
                         "lg_rooms_normal": (C.rooms_for(n), "NORMAL")}[key]
        return F.run_langgraph(tmp / f"lg-{key}-{n}-{rep}.sqlite", threads, sync)

    runs = {key: {n: [] for n in sizes} for key in results}
    try:
        # Warm-up: imports, prepared caches, the helper thread pool, the Redis connection.
        convene_run(fresh(), 4)
        for n in sizes:
            # Interleaved: each repetition runs every system once, in an order that rotates, so that a change in the
            # machine's speed during the run weighs on all of them alike; each repetition's figures form a pair.
            keys = list(results)
            for rep in range(repeat):
                for key in keys[rep % len(keys):] + keys[:rep % len(keys)]:
                    runs[key][n].append(once(key, n, rep))
            for key in results:
                results[key][n] = sorted(runs[key][n], key=lambda r: r["seconds"])[len(runs[key][n]) // 2]
        split = convene_split(fresh(), sizes[-1])
        verify(sizes[-1])
    finally:
        if redis:
            redis.stop()

    def ms_turn(r, n):
        return r["seconds"] / n * 1000

    def ms_step(r, steps_key):
        return r["seconds"] / r[steps_key] * 1000 if r.get(steps_key) else float("nan")

    labels = {
        "convene": f"Convene engine (SQLite WAL, synchronous=NORMAL, events -> {args.realtime})",
        "convene_full": f"Convene engine (SQLite WAL, synchronous=FULL, events -> {args.realtime})",
        "lg_shape": "LangGraph, one thread of N turns (SqliteSaver, default synchronous=FULL)",
        "lg_shape_normal": "LangGraph, one thread of N turns (SqliteSaver, synchronous=NORMAL)",
        "lg_rooms": "LangGraph, threads of 20 turns (SqliteSaver, default synchronous=FULL)",
        "lg_rooms_normal": "LangGraph, threads of 20 turns (SqliteSaver, synchronous=NORMAL)",
        "autogen": "AutoGen RoundRobinGroupChat + ReplayChatCompletionClient (in memory, not durable)",
    }
    headers = (["system"] + [f"ms/turn N={n}" for n in sizes]
               + [f"CPU ms/turn N={sizes[-1]}", f"ms/step N={sizes[-1]}", f"steps N={sizes[-1]}"])
    rows = []
    for key, label in labels.items():
        row = [label] + [ms_turn(results[key][n], n) for n in sizes]
        last = results[key][sizes[-1]]
        steps_key = "steps" if key.startswith("convene") else "checkpoints" if key.startswith("lg") else "turns"
        row += [last["cpu_seconds"] / sizes[-1] * 1000, ms_step(last, steps_key), last.get(steps_key, "")]
        rows.append(row)
    print(C.table(headers, rows, title=f"Durable step cost per participant turn (median of {repeat}; {C.machine()}; "
                                         f"{F.langgraph_version()}; {F.autogen_version()})"))
    conv = results["convene"]
    print()
    print(C.table(["N", "rooms", "steps", "step p50 ms", "step p99 ms"],
                  [[n, conv[n]["rooms"], conv[n]["steps"], conv[n]["step_p50_ms"], conv[n]["step_p99_ms"]] for n in sizes],
                  title="Convene (synchronous=NORMAL): per-step distribution"))
    # Like for like: the same SQLite durability on both sides.
    pairs = {"synchronous=NORMAL": ("convene", ("lg_shape_normal", "lg_rooms_normal")),
             "synchronous=FULL": ("convene_full", ("lg_shape", "lg_rooms"))}
    verdicts, paired = {}, {}
    for mode, (ours, theirs) in pairs.items():
        verdicts[mode] = {str(n): [ms_turn(results[ours][n], n), min(ms_turn(results[k][n], n) for k in theirs)] for n in sizes}
        # The ratio within each repetition (the runs next to each other), then its median over the repetitions.
        paired[mode] = {str(n): C.median([runs[ours][n][i]["seconds"] / min(runs[k][n][i]["seconds"] for k in theirs)
                                           for i in range(repeat)]) for n in sizes}
    met = all(r <= 1.0 for v in paired.values() for r in v.values())
    print()
    for mode, v in verdicts.items():
        print(f"{mode}: " + "; ".join(f"N={n}: Convene {a:.2f} vs LangGraph {b:.2f} ms/turn (x{a / b:.2f}; "
                                      f"paired x{paired[mode][n]:.2f})" for n, (a, b) in v.items()))
    n = sizes[-1]
    shares = {"turns": n, **{f"{part}ms_per_turn": split[f"{part}seconds"] / n * 1000 for part in ("", "context_", "prompt_")}}
    rest = shares["ms_per_turn"] - shares["context_ms_per_turn"] - shares["prompt_ms_per_turn"]
    print(f"Where Convene's time goes (one more run, synchronous=NORMAL, N={n}, not part of the verdict): "
          f"{shares['ms_per_turn']:.2f} ms/turn, of which the room context {shares['context_ms_per_turn']:.2f} "
          f"and the prompts {shares['prompt_ms_per_turn']:.2f} ({(1 - rest / shares['ms_per_turn']) * 100:.0f} %; LangGraph's "
          f"nodes here build neither); the rest (claim, call, commit, events) {rest:.2f} ms/turn against LangGraph's "
          f"{verdicts['synchronous=NORMAL'][str(n)][1]:.2f}.")
    print(f"Target: Convene ms/turn <= LangGraph's at the same durability (median of the paired ratios <= 1.0): "
          f"{'met' if met else 'NOT met'}. "
          f"Before: {load_before}; after: {C.load_average()}")
    C.write_json(args.json, "step_cost", {
        "realtime": args.realtime, "repeat": repeat, "sizes": list(sizes), "labels": labels,
        "results": {k: {str(n): v for n, v in r.items()} for k, r in results.items()},
        "ms_per_turn": {k: {str(n): ms_turn(results[k][n], n) for n in sizes} for k in results},
        "like_for_like": verdicts, "paired_ratio": paired, "target_met": met, "split": shares,
        "load_before": load_before, "load_after": C.load_average(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
