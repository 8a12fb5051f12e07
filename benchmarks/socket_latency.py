"""Socket.IO fan-out latency: from a worker's emit to receipt by 1, 50 and 200 clients in one room.

What it runs, all on loopback and on its own (nothing of the project's data is touched):

- a temporary SQLite database (migrated here) with one user, its API token and one discussion;
- the bundled redis-server and daphne serving ``config.asgi`` (``config.runtime.Runtime``,
  web only: no Celery worker is needed, the emitter below plays the worker);
- N real ``socketio.AsyncClient`` connections over websockets, authenticated by the token and
  joined to the discussion with ``discussion:join`` (the same path browsers take), spread
  over a few client processes so one client event loop does not serialise every receipt;
- the emitter: a write-only ``socketio.RedisManager`` on the project's channel, exactly how
  workers push committed events (``rooms.realtime``), sending ``discussion:turn``-shaped
  payloads (~1 KB) stamped with ``time.monotonic()`` (one system-wide clock on Linux).

Latency = receipt time in a client - stamp taken just before ``emit``; p50/p99 over every
(message, client) receipt. Run::

    .venv/bin/python benchmarks/socket_latency.py            # 1, 50, 200 clients
    .venv/bin/python benchmarks/socket_latency.py --clients 1 50 200 --messages 200 --json

It prints its figures and is not part of the test suite.
"""
import argparse
import asyncio
import json
import math
import multiprocessing as mp
import shutil
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVENT = "discussion:turn"
CONTENT = ("A representative contribution of about a kilobyte, so the payload has the size of a real turn. " * 7)[:640]


# --- client processes ------------------------------------------------------------------

def _client_process(kind: str, base_url: str, token: str, room_id: int, count: int, ready, results) -> None:
    """Connect ``count`` clients, join the room, record latencies until the last message."""
    runner = _official_clients if kind == "official" else _protocol_clients
    asyncio.run(runner(base_url, token, room_id, count, ready, results))


async def _official_clients(base_url, token, room_id, count, ready, results):
    """python-socketio's AsyncClient: the full client stack (decoding and handlers) per receipt."""
    import socketio

    latencies: list[float] = []
    finished = [0]
    done = asyncio.Event()
    clients = []

    def make():
        client = socketio.AsyncClient(reconnection=False)

        @client.on(EVENT)
        async def on_turn(data):
            now = time.monotonic()
            if data.get("bench") == "measure":
                latencies.append(now - data["t0"])
            elif data.get("bench") == "last":
                finished[0] += 1
                if finished[0] == count:
                    done.set()
        return client

    for _ in range(count):
        client = make()
        await client.connect(base_url, auth={"token": token}, transports=["websocket"], wait_timeout=20)
        ack = await client.call("discussion:join", {"discussionId": room_id, "lastSeq": 10**12}, timeout=20)
        if not ack.get("ok"):
            raise SystemExit(f"join refused: {ack}")
        clients.append(client)
    ready.put(count)
    try:
        await asyncio.wait_for(done.wait(), timeout=180)
    except asyncio.TimeoutError:
        pass
    results.put({"latencies": latencies})
    for client in clients:
        await client.disconnect()


async def _protocol_clients(base_url, token, room_id, count, ready, results):
    """Minimal Socket.IO v5 / Engine.IO v4 clients over aiohttp websockets.

    They speak the same protocol as every other client (open, connect with ``auth``,
    ``discussion:join`` with an ack, ping/pong) but only timestamp each event frame on
    arrival and decode it after the run, so on a small machine the figures are the
    server's fan-out rather than the benchmark's own decoding.
    """
    import aiohttp

    url = base_url.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket"
    prefix = '42["' + EVENT + '"'
    frames: list[tuple[float, str]] = []
    closed: list[str] = []
    finished = [0]
    done = asyncio.Event()

    async def one(session, started):
        async with session.ws_connect(url, max_msg_size=0) as ws:  # autoping answers daphne's websocket pings
            opened = await ws.receive_str()
            assert opened.startswith("0"), opened
            await ws.send_str("40" + json.dumps({"token": token}))
            connected = await ws.receive_str()
            assert connected.startswith("40"), connected
            await ws.send_str('421["discussion:join",' + json.dumps({"discussionId": room_id, "lastSeq": 10**12}) + "]")
            while True:
                msg = await ws.receive_str()
                if msg.startswith("431"):
                    assert json.loads(msg[3:])[0]["ok"], msg
                    break
                if msg == "2":
                    await ws.send_str("3")
            started.set()
            async for msg in ws:
                now = time.monotonic()
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                text = msg.data
                if text.startswith(prefix):
                    if '"bench": "last"' in text or '"bench":"last"' in text:
                        finished[0] += 1
                        if finished[0] == count:
                            done.set()
                        return
                    frames.append((now, text))
                elif text == "2":
                    await ws.send_str("3")
            closed.append(f"closed {ws.close_code}")  # the server ended it before the last message

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        tasks = []
        for _ in range(count):
            started = asyncio.Event()
            tasks.append(asyncio.create_task(one(session, started)))
            await asyncio.wait_for(started.wait(), timeout=20)
        ready.put(count)
        try:
            await asyncio.wait_for(done.wait(), timeout=180)
        except asyncio.TimeoutError:
            pass
        for task in tasks:
            task.cancel()
    latencies = []
    for now, text in frames:
        data = json.loads(text[2:])[1]
        if data.get("bench") == "measure":
            latencies.append(now - data["t0"])
    results.put({"latencies": latencies, "closed": closed})


# --- the run ------------------------------------------------------------------------------

def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[rank - 1]


def setup_django(tmp: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LLM_PROVIDER", "rehearsal")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def make_room():
    from django.contrib.auth import get_user_model
    from rooms.actions.tokens import do_create_token
    from rooms.models import Room

    user = get_user_model().objects.create_user("bench", password="bench-password-1")
    token = do_create_token(user, name="benchmark")[1]
    room = Room.objects.create(name="Fan-out benchmark", topic="latency", owner=user)
    return token, room.pk


def run_size(base_url: str, redis_url: str, token: str, room_id: int, clients: int, messages: int,
             interval: float, processes: int, kind: str) -> dict:
    import socketio
    from django.conf import settings

    ctx = mp.get_context("spawn")
    ready, results = ctx.Queue(), ctx.Queue()
    procs = processes if clients >= processes else clients
    shares = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    workers = [ctx.Process(target=_client_process, args=(kind, base_url, token, room_id, n, ready, results))
               for n in shares]
    for w in workers:
        w.start()
    connected = 0
    t_connect = time.monotonic()
    while connected < clients:
        connected += ready.get(timeout=120)
    connect_s = time.monotonic() - t_connect

    emitter = socketio.RedisManager(redis_url, channel=settings.SOCKETIO_CHANNEL, write_only=True)
    room = f"discussion:{room_id}"

    def emit(kind: str, seq: int) -> None:
        payload = {"discussionId": room_id, "seq": seq, "ts": "", "bench": kind, "t0": time.monotonic(),
                   "turn": {"id": seq, "seq": seq, "round": 1, "content": CONTENT, "markers": [], "status": "ok",
                            "speaker": {"id": 1, "name": "Bench", "kind": "agent", "role": "participant"}}}
        emitter.emit(EVENT, payload, room=room)

    for i in range(5):  # warm-up, not measured
        emit("warmup", i)
        time.sleep(interval)
    time.sleep(0.5)
    for i in range(messages):
        emit("measure", 100 + i)
        time.sleep(interval)
    time.sleep(0.5)
    emit("last", 10**9)

    latencies = []
    for _ in workers:
        out = results.get(timeout=240)
        latencies += out["latencies"]
        if out.get("closed"):
            print("closed early:", len(out["closed"]), out["closed"][:3], file=sys.stderr)
    for w in workers:
        w.join(timeout=30)
    expected = clients * messages
    ms = [v * 1000 for v in latencies]
    return {
        "clients": clients, "client": kind, "clientProcesses": procs, "messages": messages, "intervalMs": interval * 1000,
        "receipts": len(ms), "expected": expected, "lost": expected - len(ms),
        "p50Ms": round(percentile(ms, 50), 2), "p99Ms": round(percentile(ms, 99), 2),
        "meanMs": round(statistics.fmean(ms), 2) if ms else None, "maxMs": round(max(ms), 2) if ms else None,
        "connectSeconds": round(connect_s, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 50, 200])
    parser.add_argument("--messages", type=int, default=200, help="measured emits per size")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between emits (0.1: 10 events/s in the room)")
    parser.add_argument("--processes", type=int, default=1, help="client processes the connections are spread over")
    parser.add_argument("--client", choices=["protocol", "official"], default="protocol",
                        help="protocol: minimal clients that timestamp frames on arrival; official: python-socketio AsyncClient")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="convene-bench-"))
    setup_django(tmp)
    import io

    from config.embedded_redis import free_port
    from config.runtime import Runtime

    token, room_id = make_room()
    port = free_port()
    runtime = Runtime(port=port, out=io.StringIO(), web=True, worker=False, beat=False,
                      extra_env={"DATABASE_URL": os.environ["DATABASE_URL"]})
    rows = []
    load_before = os.getloadavg()
    if not args.json:
        print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}", flush=True)
    try:
        # daphne logs every websocket connect to stdout; keep this script's stdout for the figures.
        sys.stdout.flush()
        saved = os.dup(1)
        with open(os.devnull, "w") as quiet:
            os.dup2(quiet.fileno(), 1)
            try:
                runtime.start()
            finally:
                os.dup2(saved, 1)
                os.close(saved)
        base_url = f"http://127.0.0.1:{port}"
        for n in args.clients:
            row = run_size(base_url, runtime.redis_url, token, room_id, n, args.messages, args.interval, args.processes,
                           args.client)
            rows.append(row)
            if not args.json:
                print(f"{n:>4} clients: p50 {row['p50Ms']:7.2f} ms   p99 {row['p99Ms']:7.2f} ms   "
                      f"max {row['maxMs']:7.2f} ms   receipts {row['receipts']}/{row['expected']}", flush=True)
    finally:
        runtime.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()
    if args.json:
        print(json.dumps({"cpuCount": os.cpu_count(), "intervalSeconds": args.interval, "loadBefore": load_before,
                          "loadAfter": load_after, "results": rows}, indent=2))
    else:
        print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    return 0 if all(r["lost"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
