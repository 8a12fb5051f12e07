"""Prompt economics on the Anthropic wire format: what a long discussion's prompts cost with prompt caching.

A 20-round discussion (a round is one speaker's turn) with four participants (architect, security
specialist, delivery pragmatist as devil's advocate, UX designer) and a built-in facilitator preset
runs through the real engine in-process (``facilitation.runs.runner.run_step``: load the room, build
the prompt, call the model, commit), every agent on the ``anthropic`` provider, i.e. the official SDK
pointed at the loopback fake of the Messages API in ``tests/fakes/anthropic_server.py``. The fake
counts tokens (characters / 4) and applies Anthropic's prompt-caching rules: the prompt is tools,
system, then message blocks; a block with ``cache_control`` is a breakpoint; the prefix up to a
breakpoint is written to the cache only from 1,024 tokens, read only when identical (checked at block
boundaries up to 20 blocks before a breakpoint), and ``usage`` reports ``cache_read_input_tokens``,
``cache_creation_input_tokens`` and the rest as ``input_tokens``.

The model's answers are scripted but realistic: the facilitator (a forced ``facilitator_decision``
tool call) gives the floor to a seat asked for with ``@``, else to the least-heard seat the room
state allows, and asks a question that builds on an open item; participants answer in about 1,200
characters with the markers people use (``Q:``, ``CONCERN:``, ``DECISION:``, ``TODO:``, ``VOTE:``)
and ask for the least-heard other seat with ``@alias``; the conclusion accounts for every item.

Three figures, each against the target of the tracker issue "A facilitator that steers with what it
sees" (before the cache-friendly layout: 0.55, 0 % and 1.26):

* **input cost / full-transcript replay**: the discussion's input tokens priced as Anthropic prices
  them (uncached 1x, cache writes 1.25x, cache reads 0.1x), divided by the same calls sent as a
  full-transcript replay without caching: for every call, the same tools, system prompt and closing
  room state and task, with every turn so far verbatim in place of the summaries and latest turns.
  Target <= 0.35.
* **share of input tokens read from the cache**: cache reads / (uncached + cache writes + cache
  reads) over every call. Target >= 50 %.
* **late / early participant prompt**: the mean size (all input tokens) of a participant's prompt in
  the last quarter of the rounds (16-20) over the mean in the second quarter (6-10); the largest
  late prompt over the smallest second-quarter one is printed too. Target <= 1.25.

    python benchmarks/economics.py [--preset impartial-chair | --preset all] [--rounds 20] [-v] [--json PATH]
"""
import json
import re
import sys

TARGETS = {"cost_ratio": 0.35, "cache_read_share": 0.50, "late_early_ratio": 1.25}
BEFORE = {"cost_ratio": 0.55, "cache_read_share": 0.0, "late_early_ratio": 1.26}
PEOPLE = (("architect", "participant"), ("security", "participant"), ("pragmatist", "devil_advocate"), ("designer", "participant"))
TOPIC = "Should we cache the product catalogue at the edge, and what would we have to give up for it?"
TURN_CHARS = 1200

# Material for the participants' turns, written for this benchmark: each turn opens with a sentence
# answering the question, adds two arguments from the speaker's angle, and closes with markers.
OPENERS = (
    "To answer the question directly: I would start with the read path only and keep every write going to the origin.",
    "My short answer is yes, but only with a time limit we can defend in front of the people who set prices.",
    "I disagree with where the room is heading, because the numbers we have do not show the origin is the bottleneck.",
    "From where I sit the question is less about speed and more about what a customer sees when the cache is wrong.",
    "I can take that one: the risk is real, but it is bounded if we keep the cache keys narrow and well owned.",
    "Building on what was just said, I think we can settle the scope now and leave the tuning to a measured trial.",
)
ARGUMENTS = {
    "architect": (
        "A five-minute time to live with explicit invalidation on publish gives us most of the benefit, and the origin keeps "
        "the truth. The edge only ever holds what the catalogue service already published, so a failed purge costs us minutes, "
        "not correctness, and we can replay purges from the publish log.",
        "The hard part is not the cache but the key space: product pages vary by locale, currency and customer group. If we "
        "key on all three we get a poor hit rate; if we key on fewer we serve the wrong price. I would vary on locale and "
        "currency only and render customer-group prices in a small uncached fragment.",
        "Capacity-wise the origin handles today's peak at about sixty percent of its limit. Caching buys headroom for the "
        "seasonal peak, and it lets us retire one of the three read replicas, which pays for the edge contract within a year.",
    ),
    "security": (
        "Anything cached at the edge must be the same for every visitor, or we leak one tenant's prices to another. That "
        "rules out caching responses that depend on the session, and it means the cache key must be built by us, not taken "
        "from headers the client controls, or a crafted request can poison the entry for everyone.",
        "Purge requests are a new attack surface: whoever can purge can take the origin down by emptying the cache during a "
        "peak. Purges should come only from the publish pipeline, signed, rate limited and logged, never from an operator's laptop.",
        "We also need to decide how long personal data may live at the edge. Product data is public, but reviews carry names, "
        "and a deletion request must reach the cache within the time our policy promises, which today is twenty-four hours.",
    ),
    "pragmatist": (
        "Let me push back: we have no measurement that the catalogue is slow for customers. The slow part in the traces is "
        "search, and a cache in front of the catalogue will not touch it. We could spend a quarter on invalidation bugs and "
        "ship nothing a customer notices.",
        "If we do this, the team that owns publishing also owns every stale-price ticket, and they are already the most "
        "loaded team we have. I would want a named owner for purges and a way to switch the cache off in one step before we start.",
        "A cheaper first step is to set proper cache headers on the static parts of the page and measure for two weeks. If "
        "the origin load does not move, the full edge cache will not either, and we will have saved the contract fee.",
    ),
    "designer": (
        "For the person shopping, a stale stock level is worse than a slow page: they add the item, reach the basket and "
        "learn it is gone. Whatever we cache, the stock badge and the price in the basket must come from the origin, and the "
        "page should say so quietly when it cannot confirm them.",
        "Speed matters most on the first product page a visitor lands on from search or an advert. If the cache makes that "
        "page appear in under a second, we will see it in the bounce rate, which is where I would measure success.",
        "Editors will also feel this: today they publish and see the change at once. With a cache they need a clear signal "
        "that the change is live everywhere, or they will publish twice and file bugs that are not bugs.",
    ),
}
QUESTIONS = ("Q: Who owns the cache keys when two teams publish the same product?",
             "Q: How quickly must a price change reach every visitor?",
             "Q: What do we measure to know the cache paid off?",
             "Q: Can we switch the cache off in one step during an incident?")
CONCERNS = ("CONCERN: Invalidation on publish must not block the editor's save.",
            "CONCERN: A poisoned cache entry would serve the wrong page to everyone.",
            "CONCERN: Stale stock levels will send customers to an empty basket.",
            "CONCERN: The publishing team cannot absorb the extra on-call load.")
DECISIONS = ("DECISION: Cache only the read path of public product pages.",
             "DECISION: Purges come only from the signed publish pipeline.",
             "DECISION: Prices and stock in the basket always come from the origin.")
TODOS = ("TODO: Measure origin load and page latency for two weeks before and after.",
         "TODO: Write the runbook for switching the cache off.")


class Script:
    """The model's side of the discussion: answers chosen from what the request shows."""

    def __init__(self):
        self.turns = 0
        self.contributions: list[int] = []  # for each request, how many turns had been answered before it

    def __call__(self, body: dict):
        self.contributions.append(self.turns)
        user = body["messages"][-1]["content"][-1]["text"]
        if body.get("tool_choice"):
            return self.decision(user)
        system = "\n".join(b["text"] for b in body.get("system") or [])
        if "## Your conclusion" in system:
            return self.conclusion(user)
        self.turns += 1
        return self.turn(system, user)

    @staticmethod
    def decision(user: str) -> dict:
        if 'you must decide "synthesize"' in user:
            return {"decision": "synthesize", "nextParticipantId": None, "question": "", "reasoning": "No rounds remain.",
                    "progress": {"coverage": 1.0, "openQuestions": 0}}
        allowed = re.search(r"^May speak next: (.*)$", user, re.M)
        ids = [int(i) for i in re.findall(r"\[(\d+)\]", allowed.group(1))] if allowed else []
        names = dict(re.findall(r"\[(\d+)\] (\"[^\"]*\")", allowed.group(1))) if allowed else {}
        turns = {int(i): int(n) for i, n in re.findall(r"^- \[(\d+)\] \"[^\"]*\": (\d+) turns?,", user, re.M)}
        asked = re.search(r"^Asked for the floor with @, not heard since: (.*)$", user, re.M)
        wanted = [int(i) for i in re.findall(r"\[(\d+)\]", asked.group(1))] if asked else []
        # Whoever a turn asked for with @ (the rules give them the floor), else the least heard seat the rules allow.
        pick = next((i for i in wanted if i in ids), None) or min(ids, key=lambda i: (turns.get(i, 0), ids.index(i)))
        open_item = re.search(r"^- ((?:Q|C)\d+) by (\"[^\"]*\") \(round \d+\): (\".*\")$", user, re.M)
        about = (f"take up {open_item.group(1)}, raised by {json.loads(open_item.group(2))}: {json.loads(open_item.group(3))}"
                 if open_item else "say what the room is still missing")
        who = json.loads(names.get(str(pick), '"you"'))
        return {"decision": "continue", "nextParticipantId": pick,
                "question": f"{who}, building on the last turn, please {about}. What would you do, and what evidence would change your mind?",
                "reasoning": "This seat's angle has not answered the open item yet.", "progress": {"coverage": 0.5, "openQuestions": 2}}

    def turn(self, system: str, user: str) -> str:
        me = re.search(r"^You are: \[\d+\] \"([^\"]*)\" \(@([\w-]+)\)", system, re.M)
        alias = me.group(2) if me else "architect"
        n = self.turns
        args = ARGUMENTS.get(alias, ARGUMENTS["architect"])
        body = [OPENERS[n % len(OPENERS)], args[n % len(args)], args[(n + 1) % len(args)]]
        body.append(f"@{self.least_heard_other(system, user, alias)}, I would like to hear how this lands from your side.")
        text = "\n\n".join(body)
        markers = [QUESTIONS[n % len(QUESTIONS)] if n % 2 else CONCERNS[n % len(CONCERNS)]]
        if n % 5 == 3:
            markers.append(DECISIONS[(n // 5) % len(DECISIONS)])
        if n % 7 == 4:
            markers.append(TODOS[(n // 7) % len(TODOS)])
        markers.append("VOTE: " + ("REJECT" if alias == "pragmatist" and n < 8 else "CHANGES" if n % 3 else "READY"))
        tail = "\n".join(markers)
        room = TURN_CHARS - len(tail) - 2
        if len(text) > room:
            text = text[:room].rsplit(" ", 1)[0].rstrip(",;:") + "."
        return text + "\n\n" + tail

    @staticmethod
    def least_heard_other(system: str, user: str, alias: str) -> str:
        """The alias of the other speaking seat heard least so far (the room state shows everyone's turns)."""
        aliases = dict(re.findall(r"^- \[(\d+)\] \"[^\"]*\" \(@([\w-]+)\)", system, re.M))
        turns = [(int(n), seat) for seat, n in re.findall(r"^- \[(\d+)\] \"[^\"]*\": (\d+) turns?,", user, re.M)]
        others = [(n, position, aliases[seat]) for position, (n, seat) in enumerate(turns) if aliases.get(seat, alias) != alias]
        return min(others)[2] if others else alias

    @staticmethod
    def conclusion(user: str) -> str:
        items = [line[2:] for line in user.splitlines() if re.match(r"^- (Q|C|D|T)\d+ by ", line)]
        rejects = re.search(r"^Standing REJECT votes, unanswered: (.*)$", user, re.M)
        lines = ["## Summary", "The room weighed an edge cache for the product catalogue against its operational cost.", "",
                 "## Decisions"]
        lines += [f"- Decided: {i}" for i in items if i.startswith("D")] or ["- None."]
        lines += ["", "## Unresolved"]
        lines += [f"- Open: {i}" for i in items if not i.startswith("D")]
        if rejects and rejects.group(1) != "none":
            lines.append(f"- Standing REJECT vote: {rejects.group(1)}")
        return "\n".join(lines)


class CountingAnthropic:
    """The loopback fake, keeping the usage it reported for every request."""

    def __init__(self, script: Script):
        from tests.fakes.anthropic_server import FakeAnthropicServer

        usages = self.usages = []

        class Counting(FakeAnthropicServer):
            def handle(self, record):
                reply = super().handle(record)
                usages.append(reply.payload.get("usage") if reply.status == 200 else None)
                return reply

        self.server = Counting(responder=script, api_key="bench-key")

    def __enter__(self):
        return self.server

    def __exit__(self, *exc):
        self.server.stop()


def replay_tokens(body: dict, turns_before: list[str]) -> int:
    """The request as a full-transcript replay: same tools, system and closing block, every turn so far verbatim."""
    from tests.fakes.anthropic_server import tokens

    total = tokens(json.dumps(body["tools"], sort_keys=True)) if body.get("tools") else 0
    total += sum(tokens(b["text"]) for b in body.get("system") or [])
    total += sum(tokens(t) for t in turns_before)
    return total + tokens(body["messages"][-1]["content"][-1]["text"])


def run_room(preset: str, rounds: int, owner) -> dict:
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.prompts.builder import turn_block_text
    from facilitation.management.inline import drive_inline
    from facilitation.runs.scheduling import inline
    from django.conf import settings
    from rooms.actions.rooms import do_create_room
    from rooms.models import Agent, Invocation, Observation

    script = Script()
    counting = CountingAnthropic(script)
    saved = settings.LLM
    with counting as fake:
        settings.LLM = {**saved, "ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": fake.url}
        try:
            fac = Agent.objects.get(alias=preset, is_builtin=True)
            participants = [{"agent_id": Agent.objects.get(alias=a, is_builtin=True).pk, "role": r} for a, r in PEOPLE]
            room = do_create_room(owner, name=f"Economics ({preset})", topic=TOPIC, format="deliberation", moderator_id=fac.pk,
                                  max_rounds=rounds, participants=participants)
            with inline():
                do_start_discussion(room.pk)
            room = drive_inline(room.pk, provider="anthropic")
            if room.status != room.Status.CONCLUDED:
                raise RuntimeError(f"the room ended {room.status}, not concluded")
        finally:
            settings.LLM = saved
        bodies = [r["body"] for r in fake.requests]
        usages = list(counting.usages)

    turns = list(Observation.objects.filter(room=room, kind="contribution").order_by("seq")
                 .values("round", "seat_id", "author_name", "content", "status", "seat__role"))
    if len(turns) != rounds:
        raise RuntimeError(f"expected {rounds} turns, found {len(turns)}")
    blocks = [turn_block_text({"round": t["round"], "seatId": t["seat_id"], "speaker": t["author_name"], "role": t["seat__role"],
                               "content": t["content"], "status": t["status"]}) for t in turns]
    calls = []
    for body, usage, before in zip(bodies, usages, script.contributions):
        if usage is None:
            continue
        kind = "decision" if body.get("tool_choice") else "synthesis" if "## Your conclusion" in body["system"][0]["text"] else "turn"
        uncached, write, read = usage["input_tokens"], usage["cache_creation_input_tokens"], usage["cache_read_input_tokens"]
        calls.append({"kind": kind, "round": before + (1 if kind == "turn" else 0), "uncached": uncached, "write": write,
                      "read": read, "prompt": uncached + write + read, "replay": replay_tokens(body, blocks[:before])})
    recorded = Invocation.objects.filter(room=room, success=True).values_list("cache_read_tokens", "cache_write_tokens")
    return {"preset": preset, "calls": calls, "figures": figures(calls, rounds),
            "recorded": {"cache_read": sum(r for r, _ in recorded), "cache_write": sum(w for _, w in recorded)}}


def figures(calls: list[dict], rounds: int) -> dict:
    uncached = sum(c["uncached"] for c in calls)
    write = sum(c["write"] for c in calls)
    read = sum(c["read"] for c in calls)
    cost = uncached + 1.25 * write + 0.1 * read
    replay = sum(c["replay"] for c in calls)
    quarter = rounds / 4
    turns = [c for c in calls if c["kind"] == "turn"]
    early = [c["prompt"] for c in turns if quarter < c["round"] <= 2 * quarter]
    late = [c["prompt"] for c in turns if c["round"] > 3 * quarter]
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return {
        "calls": len(calls), "input_tokens": uncached + write + read, "uncached": uncached, "cache_write": write, "cache_read": read,
        "cost_units": cost, "replay_units": replay, "cost_ratio": cost / replay,
        "cache_read_share": read / (uncached + write + read),
        "late_early_ratio": mean(late) / mean(early), "late_max_over_early_min": max(late) / min(early),
        "early_mean": mean(early), "late_mean": mean(late),
    }


def verdicts(f: dict) -> dict:
    return {"cost_ratio": f["cost_ratio"] <= TARGETS["cost_ratio"], "cache_read_share": f["cache_read_share"] >= TARGETS["cache_read_share"],
            "late_early_ratio": f["late_early_ratio"] <= TARGETS["late_early_ratio"]}


def main(argv=None) -> int:
    import common as C

    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--preset", default="impartial-chair", help="a facilitator preset's key, or 'all' for the eight presets")
    p.add_argument("--rounds", type=int, default=20, help="rounds of the discussion (at most 20)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every call's tokens")
    args = p.parse_args(argv)
    tmp = C.temp_dir("economics")
    C.setup_django(C.sqlite_url(tmp / "convene.sqlite3"), realtime="memory")
    from django.contrib.auth import get_user_model

    from facilitation.presets import FACILITATOR_PRESETS
    from facilitation.presets.seed import seed_presets

    seed_presets()
    owner = get_user_model().objects.create(username="economics-owner")
    presets = [x["key"] for x in FACILITATOR_PRESETS] if args.preset == "all" else [args.preset]
    runs = [run_room(key, args.rounds, owner) for key in presets]

    for run in runs:
        if args.verbose:
            print(C.table(["#", "call", "round", "uncached", "cache write", "cache read", "prompt", "replay"],
                          [[n, c["kind"], c["round"], c["uncached"], c["write"], c["read"], c["prompt"], c["replay"]]
                           for n, c in enumerate(run["calls"], 1)], title=f"Calls of the {run['preset']} room"))
            print()
    rows = []
    for run in runs:
        f = run["figures"]
        ok = verdicts(f)
        rows.append([run["preset"], f["calls"], f["input_tokens"], f"{f['cost_ratio']:.3f}" + ("" if ok["cost_ratio"] else " (missed)"),
                     f"{100 * f['cache_read_share']:.1f} %" + ("" if ok["cache_read_share"] else " (missed)"),
                     f"{f['late_early_ratio']:.3f}" + ("" if ok["late_early_ratio"] else " (missed)"), f"{f['late_max_over_early_min']:.3f}"])
    print(C.table(["preset", "calls", "input tokens", "cost / replay", "read from cache", "late / early prompt", "late max / early min"],
                  rows, title=f"Prompt economics, Anthropic wire format, loopback fake: {args.rounds} rounds, 4 participants, "
                              f"turns of about {TURN_CHARS:,} characters"))
    print(f"Targets: cost / replay <= {TARGETS['cost_ratio']} (before: {BEFORE['cost_ratio']}); read from cache >= "
          f"{TARGETS['cache_read_share']:.0%} (before: 0 %); late / early prompt <= {TARGETS['late_early_ratio']} (before: "
          f"{BEFORE['late_early_ratio']}).")
    met = all(all(verdicts(r["figures"]).values()) for r in runs)
    for run in runs:
        rec, f = run["recorded"], run["figures"]
        if (rec["cache_read"], rec["cache_write"]) != (f["cache_read"], f["cache_write"]):
            print(f"{run['preset']}: the room's invocations record {rec} cache tokens, the fake reported "
                  f"{f['cache_read']} read and {f['cache_write']} written")
            met = False
    print("All targets met." if met else "A target is NOT met.")
    target_met = {k: all(verdicts(r["figures"])[k] for r in runs) for k in TARGETS}
    C.write_json(args.json, "economics", {"rounds": args.rounds, "targets": TARGETS, "before": BEFORE, "target_met": target_met,
                                          "runs": [{k: v for k, v in r.items()} for r in runs]})
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
