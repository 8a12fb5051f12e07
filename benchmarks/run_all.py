"""Runs every engine benchmark, one process each, and prints their tables (``make bench``).

    python benchmarks/run_all.py [--quick] [--only step_cost,storage,...] [--out DIR]

Each benchmark is also runnable alone (``python benchmarks/<name>.py --help``). The whole run is
bounded: about 5 minutes on a 2-core machine (``--quick``: about 2 minutes). ``socket_latency.py``
(Socket.IO fan-out, written separately) is run too when present. The figures are
also written as JSON to ``--out`` (default: a temporary directory), one file per benchmark.
Timings depend on what else the machine is doing: each benchmark prints the load average before
and after it ran.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common as C  # noqa: E402

# name -> (script, seconds allowed)
BENCHMARKS = {
    "step_cost": ("step_cost.py", 480),
    "storage": ("storage.py", 180),
    "worker_overhead": ("worker_overhead.py", 180),
    "worker_memory": ("worker_memory.py", 240),
    "throughput": ("throughput.py", 300),
    "workspace_search": ("workspace_search.py", 180),
    "workspace_rounds": ("workspace_rounds.py", 240),
    # Prompt economics on the Anthropic wire format (token counts, no timing).
    "economics": ("economics.py", 120),
    # A model call through the SDK providers: a client built per call against the shared one.
    "provider_calls": ("provider_calls.py", 120),
    # Faults: a killed worker and a Redis restart while discussions are mid-turn.
    "chaos": ("chaos.py", 420),
    # Socket.IO fan-out (its own script and options; it prints its own table, no JSON file here).
    "socket_latency": ("socket_latency.py", 240),
}
FOREIGN = {"socket_latency": {"full": [], "quick": ["--clients", "1", "50", "--messages", "50"]}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes and shorter windows (a smoke run)")
    p.add_argument("--only", default="", help="comma-separated subset of: " + ", ".join(BENCHMARKS))
    p.add_argument("--out", default="", help="directory for the JSON results")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or [n for n, (script, _) in BENCHMARKS.items()
                                                                      if (HERE / script).exists()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        p.error(f"unknown benchmark(s): {', '.join(unknown)}")
    out = Path(args.out) if args.out else C.temp_dir("results")
    out.mkdir(parents=True, exist_ok=True)
    print(f"Convene engine benchmarks on {C.machine()}; {C.load_average()}; results in {out}\n", flush=True)
    started = time.monotonic()
    status = {}
    for name in names:
        script, limit = BENCHMARKS[name]
        if name in FOREIGN:
            cmd = [sys.executable, str(HERE / script)] + FOREIGN[name]["quick" if args.quick else "full"]
        else:
            cmd = [sys.executable, str(HERE / script), "--json", str(out / f"{name}.json")] + (["--quick"] if args.quick else [])
        print(f"== {name}: {' '.join(['python', 'benchmarks/' + script] + cmd[2:])}", flush=True)
        t0 = time.monotonic()
        rc = _run(cmd, limit, quiet_access_log=name in FOREIGN)
        status[name] = (rc, time.monotonic() - t0)
        print(f"-- {name}: {'ok' if rc == 0 else f'failed ({rc})'} in {time.monotonic() - t0:.0f} s\n", flush=True)

    rows = []
    for name in names:
        path = out / f"{name}.json"
        if name in FOREIGN:
            rows.append([name, "see its table above", "ok" if status[name][0] == 0 else f"failed ({status[name][0]})", status[name][1]])
            continue
        if not path.exists():
            rows.append([name, "no result", "", status[name][1]])
            continue
        data = json.loads(path.read_text())
        rows.append([name, _headline(name, data), _met(data["target_met"]) if "target_met" in data else "no target",
                     status[name][1]])
    note = "; --quick: smaller sizes, so the verdicts do not apply to the targets" if args.quick else ""
    print(C.table(["benchmark", "headline", "target", "seconds"], rows,
                  title=f"Summary ({time.monotonic() - started:.0f} s in all{note})"))
    return 0 if all(rc == 0 for rc, _ in status.values()) else 1


ACCESS_LOG = re.compile(r"^\d{1,3}(\.\d{1,3}){3}:\d+ - - \[")  # daphne's access log lines


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc), e.g. the Redis, worker and daphne a benchmark started."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _run(cmd: list[str], limit: float, quiet_access_log: bool = False):
    """Run one benchmark; past ``limit`` seconds interrupt it (Ctrl-C, so it stops what it started), then kill what is left."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def pump():
        for line in proc.stdout:
            if not (quiet_access_log and ACCESS_LOG.match(line)):
                print(line, end="", flush=True)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        return proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        started = [(pid, _cmdline(pid)) for pid in [proc.pid] + _descendants(proc.pid)]
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        for pid, cmdline in started:  # what it started and did not stop (the same process: same command line)
            if cmdline and _cmdline(pid) == cmdline:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        proc.wait()
        return "timeout"
    finally:
        reader.join(timeout=5)


def _met(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in value.items())
    return "met" if value else "NOT met"


def _headline(name: str, data: dict) -> str:
    if name == "step_cost":
        n = str(data["sizes"][-1])
        ms = data["ms_per_turn"]
        normal, full = data["like_for_like"]["synchronous=NORMAL"][n], data["like_for_like"]["synchronous=FULL"][n]
        paired = data.get("paired_ratio", {})
        ratios = "; ".join(f"{mode.split('=')[1]} paired x" + "/".join(f"{r:.2f}" for r in by_n.values())
                           for mode, by_n in paired.items())
        return (f"N={n}: Convene {normal[0]:.2f} vs LangGraph {normal[1]:.2f} ms/turn (NORMAL), "
                f"{full[0]:.2f} vs {full[1]:.2f} (FULL); {ratios}; AutoGen {ms['autogen'][n]:.2f} ms/turn")
    if name == "storage":
        n = str(data["sizes"][-1])
        c, lg = data["convene"][n]["per_turn"], data["langgraph_one_thread"][n]["per_turn"]
        return f"N={n}: Convene {c:,.0f} B/turn (x{c / data['turn_text_bytes']:.1f} text), LangGraph one thread {lg:,.0f} B/turn"
    if name == "worker_overhead":
        r = data["results"]["1 room at a time"]
        return f"{data['database']}: p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms per step"
    if name == "throughput":
        return "; ".join(f"{r['database']}: {r['steps_per_s']:.1f} steps/s = {r['efficiency'] * 100:.0f}% of {r['ideal_steps_per_s']:.0f}"
                         for r in data["results"])
    if name == "workspace_search":
        return "; ".join(f"{r['engine']}: p95 {r['p95_ms']:.1f} ms over {r['observations']:,}" for r in data["results"])
    if name == "workspace_rounds":
        return "; ".join(f"{r['database']}: {r['rounds_per_min']:.1f} rounds/min of {r['ideal_rounds_per_min']:.0f}"
                         for r in data["results"])
    if name == "economics":
        f = data["runs"][0]["figures"]
        return (f"{data['runs'][0]['preset']}: cost {f['cost_ratio']:.3f} of a replay, {f['cache_read_share'] * 100:.1f}% read "
                f"from the cache, late / early prompt {f['late_early_ratio']:.3f}")
    if name == "provider_calls":
        return "; ".join(f"{p}: {r['new_client_per_call']['cpu_ms']:.1f} -> {r['shared_client']['cpu_ms']:.1f} ms CPU per call"
                         for p, r in data["results"].items())
    if name == "worker_memory":
        return f"worker RSS {data['growth'] * 100:+.1f} % from turn 200 to turn {data['turns']} (flat: {'yes' if data['flat'] else 'no'})"
    if name == "chaos":
        return "; ".join(f"{r['scenario']}: {r['concluded']}/{r['rooms']} concluded, {r['duplicated']} duplicated, "
                         f"{r['missing']} missing, <= {r['repeated_calls_max']} repeated call(s) per room, first progress "
                         f"{r['first_progress_s']:.1f} s" for r in data["results"])
    return ""


if __name__ == "__main__":
    sys.exit(main())
