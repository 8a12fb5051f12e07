"""Chat bridge: inbound webhook -> room event latency, and outbound delivery throughput under the platform limits.

Runs a real Redis and Celery worker (the embedded runtime, queue ``bridge``) on a fresh SQLite
database, with the fake Telegram Bot API on loopback. Inbound: a message is POSTed to
/bridge/telegram/webhook (in this process, as the web server would run it) and the time until
its ``discussion:turn`` event is stored is measured, one message at a time. Outbound: messages
are queued to several groups at once and sent by the worker through the Redis token buckets
(about 1 message/s per chat, at most 20 per minute per group); the achieved rate and the worst
per-chat gap and per-group minute are reported. Nothing here asserts timings.
"""
import io
import json
import sys
import time

import common as C

SECRET = "bench-secret"
TOKEN = "123456:BENCH"


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=100, help="inbound messages (latency)")
    p.add_argument("--groups", type=int, default=6, help="groups sent to at once (throughput)")
    p.add_argument("--per-group", type=int, default=10, help="messages per group (throughput)")
    args = p.parse_args(argv)
    messages = 15 if args.quick else args.messages
    groups, per_group = (3, 6) if args.quick else (args.groups, args.per_group)
    tmp = C.temp_dir("bridges")
    url = C.sqlite_url(tmp / "convene.sqlite3")
    C.setup_django(url, realtime="redis")

    from django.conf import settings
    from django.test import Client

    from config.runtime import Runtime
    from rooms.actions.chat import ChatRef, see_chat
    from rooms.actions.deliveries import queue_post
    from rooms.models import ChatLink, Delivery, RoomEvent
    from tests.factories import make_discussion, make_user
    from tests.fakes import telegram_updates as tu
    from tests.fakes.telegram_server import FakeTelegram

    telegram = FakeTelegram(token=TOKEN)
    settings.BRIDGES = {**settings.BRIDGES, "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": SECRET,
                        "TELEGRAM_API_BASE": telegram.root}
    env = {"DATABASE_URL": url, "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": SECRET,
           "TELEGRAM_API_BASE": telegram.root, "LLM_PROVIDER": "rehearsal"}
    runtime = Runtime(out=io.StringIO(), web=False, worker=True, beat=False, extra_env=env)
    results = {}
    with runtime:
        C.point_at_redis(runtime.redis_url)
        owner = make_user("bench-owner")
        room = make_discussion(owner)
        group = tu.group(-7001, "Bench")
        chat = see_chat(ChatRef("telegram", "-7001", title="Bench"))
        ChatLink.objects.create(chat=chat, room=room)
        type(room).objects.filter(pk=room.pk).update(chat_linked=True)  # as the link action does
        client = Client()

        def post(update):
            return client.post("/bridge/telegram/webhook", data=json.dumps(update), content_type="application/json",
                               HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=SECRET)

        sender = tu.user(9001, "Bench person")
        post(tu.message(group, sender, "warm-up"))  # the worker starts, imports, asks getMe
        C.wait_until(lambda: RoomEvent.objects.filter(room=room, type="discussion:turn").exists(), 60, what="warm-up turn")
        latencies = []
        for i in range(messages):
            seen = RoomEvent.objects.filter(room=room, type="discussion:turn").count()
            started = time.monotonic()
            assert post(tu.message(group, sender, f"message {i}")).status_code == 200
            C.wait_until(lambda: RoomEvent.objects.filter(room=room, type="discussion:turn").count() > seen, 30, 0.002,
                         what=f"turn {i}")
            latencies.append(time.monotonic() - started)
        results["inbound"] = {"messages": messages, "p50_ms": C.median(latencies) * 1000,
                              "p99_ms": C.percentile(latencies, 99) * 1000, "max_ms": max(latencies) * 1000}

        chats = [see_chat(ChatRef("telegram", str(-8000 - g), title=f"Group {g}")) for g in range(groups)]
        before = len(telegram.messages)
        started = time.monotonic()
        ids = [queue_post(c, f"throughput {n}").pk for n in range(per_group) for c in chats]
        C.wait_until(lambda: Delivery.objects.filter(pk__in=ids, status="sent").count() == len(ids), 600, 0.05,
                     what="deliveries sent")
        elapsed = time.monotonic() - started
        sent = telegram.messages[before:]
        gaps, worst_minute = [], 0
        for c in chats:
            times = sorted(m["at"] for m in sent if m["chat_id"] == c.external_id)
            gaps += [b - a for a, b in zip(times, times[1:])]
            worst_minute = max(worst_minute, max(sum(1 for t in times if s <= t < s + 60) for s in times))
        burst, rate = settings.BRIDGES["RATE_LIMITS"]["telegram_group"]
        expected = groups * min(1.0, (burst + rate * max(0.0, elapsed)) / max(elapsed, 1e-9))
        results["outbound"] = {"groups": groups, "messages": len(ids), "elapsed_s": elapsed, "msgs_per_s": len(ids) / elapsed,
                               "min_gap_s": min(gaps) if gaps else None, "max_per_group_minute": worst_minute,
                               "limit_msgs_per_s": expected}
    telegram.stop()
    i, o = results["inbound"], results["outbound"]
    print(C.table(["inbound messages", "p50 ms", "p99 ms", "max ms"], [[i["messages"], i["p50_ms"], i["p99_ms"], i["max_ms"]]],
                  title=f"Telegram webhook -> discussion:turn stored (1 worker, SQLite; {C.machine()})"))
    print()
    print(C.table(["groups", "messages", "seconds", "msgs/s", "allowed msgs/s", "min gap in a chat s", "max in a group's minute"],
                  [[o["groups"], o["messages"], o["elapsed_s"], o["msgs_per_s"], o["limit_msgs_per_s"], o["min_gap_s"],
                    o["max_per_group_minute"]]],
                  title="Outbound deliveries through the Redis token buckets (1/s per chat, <= 20/min per group)"))
    C.write_json(args.json, "bridges", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
