"""The rehearsal model in a workspace: typed observations for an agent's round, and a round's narrative.

Like a real model it reads only the prompt text (``facilitation.workspace.prompts`` writes it):
the heading says which of the two is asked; the ``<data>`` sections list the topic, open questions
and blockers, this round's observations, the seat's tasks, the roster and the adaptation numbers.
It answers open questions and blockers it did not raise (replying to them by id), moves its own
tasks on, and otherwise raises a question, blocker, concern or analysis about the topic that fits
its place in the roster. Deterministic: every choice is seeded from a hash of the prompt.
"""
import hashlib
import json
import re

HEAD = re.compile(r"^# Workspace: .* - (?:round (?P<round>\d+)|narrative of round (?P<nround>\d+))\s*$", re.M)
SECTION = re.compile(r"^## (?P<title>[^\n]+)\n<data>\n(?P<body>.*?)\n</data>", re.M | re.S)
ITEM = re.compile(r"^#(?P<id>\d+) (?P<type>\w+) by (?P<author>.+?) \(round (?P<round>\d+)\)(?: re #(?P<re>\d+))?: (?P<text>.*)$")
TASK = re.compile(r"^task #(?P<id>\d+) \[(?P<status>\w+), priority (?P<priority>\d)(?:, (?P<who>[^\]]+))?\] (?P<title>.*)$")
ME = re.compile(r"^You are (?P<name>.+?)(?: \((?P<who>[^)]*)\))?, seat (?P<seat>\d+)\.$", re.M)
ROSTER = re.compile(r"^Agents in this room: (?P<list>.*)\.$", re.M)
THRESHOLD = re.compile(r"^(?P<name>\w+) (?P<value>[01]\.\d+):", re.M)

STOP = set("""a an the and or but of to in on for with without from by at as is are be was were it its this that these
those we our you your they their should would could can will into over under than then so if not no do does how what
which who why when where about between after before while move add use make keep new old all any each every more
most less least very just also only same other such own""".split())
OPENERS = ("question", "blocker", "concern", "analysis")


def _seed(*parts) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.") + "..."


def _sections(text: str) -> dict[str, str]:
    found = {}
    for m in SECTION.finditer(text):
        title = m.group("title").split(" (")[0].split(' "')[0].strip()
        found[title] = "" if m.group("body").strip() == "(none)" else m.group("body")
    return found


def _items(body: str) -> list[dict]:
    return [m.groupdict() for m in map(ITEM.match, (body or "").splitlines()) if m]


# A topic's words: an @mention whole, as ``facilitation.deliberation.markers`` reads one (an alias is a slug and may
# start with a digit, ``-`` or ``_``: ``@3d-architect``, never ``d-architect``), and words of letters, digits and
# dashes (``3d-pipeline``). Not the part after the ``@`` of an e-mail address.
WORD = re.compile(r"(?<![\w@.`/])@[A-Za-z0-9_-]*[A-Za-z0-9][A-Za-z0-9_-]*|[A-Za-z0-9][A-Za-z0-9-]*")


def keywords(topic: str, n: int = 3) -> list[str]:
    """The topic's telling words, longest first (ties in order of appearance); a mention keeps its ``@``."""
    words = [w for w in WORD.findall(topic)
             if any(c.isalpha() for c in w) and w.lower() not in STOP and len(w) > 2]
    seen = list(dict.fromkeys(w if w.startswith("@") else w.lower() for w in words))
    return sorted(seen, key=lambda w: -len(w))[:n] or ["the scope"]


def is_workspace_prompt(user: str) -> bool:
    return bool(HEAD.search(user or ""))


def answer(system: str, user: str) -> str:
    head = HEAD.search(user)
    if head.group("nround"):
        return json.dumps(narrative(user, int(head.group("nround"))), ensure_ascii=False)
    return json.dumps(observations(user, int(head.group("round"))), ensure_ascii=False)


# --- an agent's round -----------------------------------------------------------------------

def _me(user: str) -> tuple[str, str, int]:
    m = ME.search(user)
    return (m.group("name"), m.group("who") or "", int(m.group("seat"))) if m else ("An agent", "", 0)


def _position(user: str, seat: int) -> int:
    m = ROSTER.search(user)
    seats = [int(s) for s in re.findall(r"\(seat (\d+)\)", m.group("list"))] if m else []
    return seats.index(seat) if seat in seats else 0


def _thresholds(user: str) -> dict:
    block = user.split("## Your adaptation", 1)[-1]
    return {m.group("name"): float(m.group("value")) for m in THRESHOLD.finditer(block)}


def _opener(kind: str, kw: list[str], seed: int) -> str:
    a, b = kw[0], kw[1 % len(kw)]
    options = {
        "question": [f"What exactly must stay true about {a} while we change {b}?",
                     f"Who owns {a} once {b} is in place, and how do we know it worked?"],
        "blocker": [f"We cannot move on {a} until we know how {b} behaves under failure; nobody has tested it yet.",
                    f"There is no safe way to roll back {a} today, which blocks any change to {b}."],
        "concern": [f"Changing {a} and {b} in one step risks hiding which of the two caused a problem.",
                    f"The current plan for {a} leaves {b} without an owner during the switch."],
        "analysis": [f"{a.capitalize()} and {b} are coupled today; splitting them gives two smaller, reversible steps.",
                     f"Most of the risk sits in {a}: {b} can follow once {a} is measured."],
    }[kind]
    return options[seed % len(options)]


def _reply(kind: str, item: dict, kw: list[str], seed: int) -> str:
    gist = _short(item["text"], 70)
    a = kw[seed % len(kw)]
    if kind == "solution":
        return f"On \"{gist}\": introduce {a} behind a switch, run both paths for a week and compare before cutting over."
    if kind == "clarification":
        return f"To clarify \"{gist}\": the question is about {a} only; the rest of the scope stays as it is."
    return f"Agreed on \"{gist}\"; {a} is the right place to start."


def observations(user: str, number: int) -> dict:
    name, who, seat = _me(user)
    sections = _sections(user)
    topic = sections.get("Topic", "")
    kw = keywords(topic)
    seed = _seed(user, name)
    t = _thresholds(user)
    confidence = t.get("confidence", 0.6)
    position = _position(user, seat)
    this_round = _items(sections.get("This round so far", ""))
    answered = {i["re"] for i in this_round if i["re"]}
    mine = name
    out: list[dict] = []

    def conf(delta: float) -> float:
        return round(min(0.95, max(0.05, confidence + delta)), 2)

    # Answer what is open and not mine: a blocker first, then a question.
    for title, kind in (("Open blockers", "solution"), ("Open questions", "solution")):
        for item in _items(sections.get(title, "")):
            if item["author"] != mine and item["id"] not in answered and len(out) < 1:
                reply = "clarification" if kind == "solution" and t.get("narrativeTrust", 1.0) < 0.5 else kind
                out.append({"type": reply, "content": _reply(reply, item, kw, seed), "respondingToId": int(item["id"]),
                            "confidence": conf(0.1)})
                answered.add(item["id"])
    # Then what this seat brings to the topic, by its place in the roster.
    opener = OPENERS[(position + number - 1) % len(OPENERS)]
    out.append({"type": opener, "content": _opener(opener, kw, seed >> 3), "respondingToId": None, "confidence": conf(-0.1)})
    if len(out) < 2:
        out.append({"type": "solution", "content": f"Proposal for {kw[0]}: make the change in small, reversible steps "
                                                   f"and measure {kw[-1]} after each one.",
                    "respondingToId": None, "confidence": conf(0.05)})
    # Tasks: move my own on; claim an unassigned one when I hold none.
    actions = []
    tasks = [m.groupdict() for m in map(TASK.match, sections.get("Tasks you may work on", "").splitlines()) if m]
    for task in tasks:
        step = {("pending", "assigned to you"): "claim", ("claimed", "claimed by you"): "start",
                ("in_progress", "claimed by you"): "complete"}.get((task["status"], task["who"]))
        if step:
            actions.append({"id": int(task["id"]), "action": step})
    if not actions:
        free = [tk for tk in tasks if tk["status"] == "pending" and tk["who"] == "unassigned"]
        if free and position == (seed % max(1, len(tasks))) % 3:
            actions.append({"id": int(free[0]["id"]), "action": "claim"})
    return {"rehearsal": True, "observations": out, "tasks": actions}


# --- the round's narrative ------------------------------------------------------------------------

def narrative(user: str, number: int) -> dict:
    sections = _sections(user)
    items = _items(next((body for title, body in sections.items() if title.startswith("Observations of round")), ""))
    counts: dict[str, int] = {}
    for i in items:
        counts[i["type"]] = counts.get(i["type"], 0) + 1
    kw = keywords(sections.get("Topic", ""))
    if not items:
        summary = f"Round {number} brought no observations on {kw[0]}."
    else:
        tally = ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        people = sorted({i["author"] for i in items})
        summary = (f"Round {number}: {', '.join(people)} published {len(items)} observations on {kw[0]} ({tally}). "
                   + " ".join(f"{i['author']} ({i['type']}): {_short(i['text'], 110)}" for i in items[:6]))
    decisions = [_short(i["text"], 160) for i in items if i["type"] in ("decision", "agreement", "solution")][:5]
    open_blockers = [int(i["id"]) for i in _items(sections.get("Open blockers", ""))]
    steps = [f"Answer: {_short(i['text'], 120)}" for i in items if i["type"] == "question" and i["id"] not in
             {x["re"] for x in items if x["re"]}][:3]
    tasks = [m.groupdict() for m in map(TASK.match, sections.get("Tasks", "").splitlines()) if m]
    steps += [f"Move task #{t['id']} on: {_short(t['title'], 100)}" for t in tasks if t["status"] != "completed"][:3]
    return {"rehearsal": True, "summary": summary, "keyDecisions": decisions, "blockers": open_blockers,
            "nextSteps": steps or [f"Keep going on {kw[0]}."]}
