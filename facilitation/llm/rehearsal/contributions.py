"""Participant turns: persona voices, contributions, devil's-advocate challenges and observer notes."""
import re

from facilitation.deliberation.state import takes_up
from facilitation.llm.rehearsal.room import Room
from facilitation.llm.rehearsal.text import LABEL, gist_of, ideas_in, lower_first, quote, seeded_pick, short, slug, tidy
from facilitation.wording import counted

_VOICES = {
    "architect": {
        "lens": "systems architecture",
        "openers": ["Looking at \"{subject}\" as a system, the first thing I check is where the boundaries fall and who owns what.",
                    "From an architecture point of view, \"{subject}\" is mostly a question of coupling and of how it will grow.",
                    "My lens on \"{subject}\" is the next few years: what stays easy to change, and what sets in concrete."],
        "body": ["Keep the core small and put the variable parts behind one clear interface, so later changes stay local.",
                 "Prefer the boring, proven option here; novelty should pay for itself in a measurable way."],
        "concerns": ["Two parts of this design would have to change together, which is coupling we will regret.",
                     "It is not clear which component owns the data, and shared ownership ages badly."],
        "questions": ["What happens at ten times today's load?", "Which part of this would be hardest to reverse?"],
        "todos": ["Sketch the component boundaries and data ownership before building.", "Write a short decision record for the chosen structure."],
        "decisions": ["Keep a single owner for each piece of data and expose it through one interface.", "Start with the simplest structure that keeps the boundaries clean."],
        "ideas": ["A plug-in boundary so variations do not touch the core", "An event log as the single source of truth", "A thin facade now, with room to split it later"],
    },
    "security": {
        "lens": "security",
        "openers": ["Reading \"{subject}\" as an attacker would, I start with what is worth stealing and how one would get in.",
                    "On \"{subject}\", my question is always the same: who could misuse this, and what would it cost us?",
                    "Security-wise, \"{subject}\" widens the attack surface, so I want the controls decided before the features."],
        "body": ["Every input should be treated as untrusted and every permission granted as narrowly as possible.",
                 "The cheapest control is the one designed in now; retrofitting access checks is slow and error-prone."],
        "concerns": ["Authorisation checks are not specified, so one user might reach another user's data.",
                     "Sensitive data could end up in logs or exports without anyone noticing."],
        "questions": ["Who can reach this, and with which rights?", "Which data here is sensitive, and where does it flow?"],
        "todos": ["Write a one-page threat model for the main flows.", "Review secrets handling and log redaction before release."],
        "decisions": ["Deny by default and grant each role only what it needs.", "Validate every external input at the boundary."],
        "ideas": ["A threat-modelling game as part of the kickoff", "Abuse cases written next to every user story", "A red-team afternoon before launch"],
    },
    "pragmatist": {
        "lens": "delivery",
        "openers": ["On \"{subject}\", what is the smallest version we could ship and learn from this week?",
                    "I would cut \"{subject}\" down to the part users actually need first and leave the rest for later.",
                    "We risk over-building \"{subject}\"; let us find the simplest thing that works."],
        "body": ["Ship a thin slice, watch how it is used, and let real feedback decide the next step.",
                 "Accept some deliberate, written-down debt if it gets value out sooner."],
        "concerns": ["Scope is growing faster than our understanding of what users need.",
                     "We are designing for cases nobody has asked for yet."],
        "questions": ["Which part of this could wait for a second iteration?", "What would we lose by shipping the simple version first?"],
        "todos": ["Define the first slice and its acceptance check in one paragraph.", "List what we are explicitly deferring."],
        "decisions": ["Ship the minimal version first and revisit after real usage.", "Time-box the first iteration to two weeks."],
        "ideas": ["A one-week prototype with real users", "A manual version behind the scenes before automating", "Drop the least-used half of the scope"],
    },
    "perfectionist": {
        "lens": "quality",
        "openers": ["Before we call \"{subject}\" done, I want to know exactly how we will prove it works.",
                    "For \"{subject}\", the edge cases and the error paths are where I would look first.",
                    "Quality on \"{subject}\" is cheapest now, while the behaviour is still being defined."],
        "body": ["Each behaviour should be written down precisely enough that someone else could test it.",
                 "Consistent naming and documented decisions will save the next person hours."],
        "concerns": ["The failure paths are unspecified, so errors may pass silently.",
                     "There are no acceptance criteria yet, so done means different things to different people."],
        "questions": ["What exactly should happen when this fails halfway?", "How will we know this keeps working after the next change?"],
        "todos": ["Write acceptance tests for the main path and the two likeliest failures.", "Document the decision and its edge cases."],
        "decisions": ["Nothing is done until it has tests for its error paths.", "Agree on acceptance criteria before implementation starts."],
        "ideas": ["A checklist of edge cases built by the whole team", "Tests written first as the living specification", "A style guide so similar things look alike"],
    },
    "designer": {
        "lens": "user experience",
        "openers": ["For \"{subject}\", I keep picturing the person who has to use it on a busy day.",
                    "From the user's side, \"{subject}\" should feel obvious the first time, without a manual.",
                    "My worry with \"{subject}\" is that we are designing for ourselves rather than for its users."],
        "body": ["Every extra step or unfamiliar term is a cost the user pays; each should earn its place.",
                 "Accessibility has to be part of the first version: keyboard, contrast and plain language."],
        "concerns": ["The flow assumes expert users and will confuse newcomers.",
                     "There is no clear feedback after an action, so users will not know whether it worked."],
        "questions": ["Who exactly is the user, and what are they trying to get done?", "What does the user see when something goes wrong?"],
        "todos": ["Run a five-user hallway test on the main flow.", "Write the error and empty states before the happy path is polished."],
        "decisions": ["Design the main flow for a first-time user and keep expert shortcuts optional.", "Meet basic accessibility checks in the first release."],
        "ideas": ["A guided first run", "Plain-language labels tested with real users", "An undo instead of confirmation dialogs"],
    },
    "researcher": {
        "lens": "evidence",
        "openers": ["On \"{subject}\", let me separate what we know from what we are assuming.",
                    "There is prior art for \"{subject}\"; others have tried similar things, with mixed results.",
                    "Before deciding on \"{subject}\", it is worth checking which claims have actual evidence behind them."],
        "body": ["Several statements in this discussion are plausible but unchecked; a little measurement would settle them.",
                 "Documented experience from comparable projects points to the same trade-offs we are circling."],
        "concerns": ["Part of the reasoning rests on a single anecdote rather than data.",
                     "Some of the figures mentioned may be out of date."],
        "questions": ["What data do we have on current usage?", "Has anyone compared the options on a realistic workload?"],
        "todos": ["Collect two or three comparable cases and their outcomes.", "Measure the current baseline before changing anything."],
        "decisions": ["Treat the unverified assumptions as risks until measured."],
        "ideas": ["A quick survey of how others handled it", "A small benchmark to replace guesses with numbers", "A reading list of the best prior work"],
    },
    "visualizer": {
        "lens": "structure",
        "openers": ["Let me draw the part of \"{subject}\" we keep talking about; pictures expose gaps quickly.",
                    "A small diagram of \"{subject}\" shows where the arrows have no owner.",
                    "Sketching \"{subject}\" helps: one box per responsibility, one arrow per dependency."],
        "body": ["Drawn this way, one step has no clear owner and the error path is missing.",
                 "The picture shows the flow is simpler than the discussion suggests, except for one loop."],
        "concerns": ["The diagram has an arrow nobody could explain: who calls whom here?",
                     "There is no path back when a step fails."],
        "questions": ["Which component owns the middle step?", "Are two of us using the same word for different things?"],
        "todos": ["Keep this diagram next to the code and update it with each change.", "Draw the failure path as a second diagram."],
        "decisions": ["Use this diagram as the shared picture for the next discussion."],
        "ideas": ["A living diagram generated from the code", "A one-page map of all the moving parts", "A sequence diagram for the riskiest flow"],
        "diagram": True,
    },
    "generic": {
        "lens": "practical judgement",
        "openers": ["On \"{subject}\", my view is that we should be clear about the goal before choosing the means.",
                    "Thinking about \"{subject}\", I see a reasonable path, with a couple of risks to manage.",
                    "For \"{subject}\", the key trade-off is between speed and confidence."],
        "body": ["The strongest option is the one that keeps later choices open while delivering something useful now.",
                 "We should name the main risk explicitly and agree on how we would notice it early."],
        "concerns": ["We have not agreed on what success looks like.", "The main risk has no owner yet."],
        "questions": ["What would success look like in three months?", "What is the main risk, and who watches it?"],
        "todos": ["Write down the success criteria in two sentences.", "Name an owner for the main risk."],
        "decisions": ["Go ahead with the simplest option that meets the stated goal."],
        "ideas": ["A small pilot", "A shared list of assumptions to test", "A checkpoint after the first month"],
    },
}


def _voice_key(room: Room) -> str:
    key = str(room.speaker.get("alias") or "").lower()
    if key in _VOICES:
        return key
    names = " ".join(str(x or "").lower() for x in (room.speaker.get("alias"), room.speaker.get("name")))
    for voice in _VOICES:
        if voice != "generic" and voice in names:
            return voice
    return "generic"


def _vote(voice: str, room: Room) -> str:
    decisions = room.of_type("decision")
    concerns = room.of_type("concern")
    late = room.rounds_left <= 1
    if voice == "security":
        if len(concerns) >= 3 and not decisions:
            return "REJECT"
        return "READY" if decisions and late else "CHANGES"
    if voice == "pragmatist":
        return "CHANGES" if (room.round >= 3 and not decisions) else "READY"
    if voice == "perfectionist":
        return "READY" if (decisions and room.of_type("todo") and late) else "CHANGES"
    if voice == "architect":
        return "READY" if room.last_index("decision") > room.last_index("concern") else "CHANGES"
    if voice == "researcher":
        return "READY" if not room.open_questions() else "CHANGES"
    if voice in ("designer", "visualizer"):
        return "READY" if decisions else "CHANGES"
    return "READY" if decisions else seeded_pick(["READY", "CHANGES"], room.seed, 5)


def _mention_for(room: Room, prefer: str | None) -> dict | None:
    me = room.speaker.get("name")
    others = [s for s in room.speakers if s.get("name") != me and str(s.get("id")) != str(room.speaker.get("id"))]
    if prefer and prefer in room.by_name and prefer != me:
        return room.by_name[prefer]
    return seeded_pick(others, room.seed, 3) if others else None


def _handle(seat: dict) -> str:
    return "@" + (seat.get("alias") or slug(seat.get("name")))


def _diagram(room: Room) -> list[str]:
    names = [s.get("name") for s in room.speakers][:3] or ["Client", "Service", "Store"]
    a, b = slug(names[0]).replace("-", "_"), slug(names[-1]).replace("-", "_")
    return ["```plantuml", "@startuml", f"[{a}] --> [core] : asks", f"[core] --> [{b}] : delegates", "@enduml", "```"]


def _asked_point(room: Room, me: str) -> dict | None:
    """The open item (or decision) the facilitator's question takes up, if any."""
    if not room.question:
        return None
    for point in reversed(room.points):
        if point.get("type") in ("question", "concern", "decision", "todo") and point.get("speaker") != me and point.get("text") \
                and takes_up(room.question, point["text"], 0.5):
            return point
    return None


def _own_open(room: Room, me: str, kind: str) -> bool:
    return any(p.get("type") == kind and p.get("open") and p.get("speaker") == me for p in room.points)


def contribution(room: Room) -> str:
    voice_key = _voice_key(room)
    voice = _VOICES[voice_key]
    role = str(room.speaker.get("role") or "participant")
    me = room.speaker.get("name") or "Participant"
    s = room.seed
    fill = {"subject": room.subject}
    target = _asked_point(room, me) or room.preferred_point(me, ("concern", "decision"), ("question", "todo"))
    turn = room.latest_turn_not_by(me)
    lines = [LABEL, ""]

    if role == "observer":
        return tidy("\n".join(lines + _observer_lines(room)))

    if role == "background":  # asked only for a vote: the vote and one sentence
        vote = _vote(voice_key, room)
        why = "the proposal holds up from where I sit" if vote == "READY" else "it needs more work before I can back it"
        return tidy("\n".join(lines + [f"From the background: {why}.", "", f"VOTE: {vote}"]))

    if role == "devil_advocate":
        return tidy("\n".join(lines + _challenge_lines(room, voice, _asked_point(room, me) or room.preferred_point(me, ("decision", "concern")), turn, me)))

    if room.format == "brainstorm":
        ideas = [i.format(**fill) for i in voice["ideas"]]
        start = s % len(ideas)
        ideas = ideas[start:] + ideas[:start]
        other_ideas = ideas_in(turn.get("content", "")) if turn else []
        lines.append(seeded_pick(voice["openers"], s).format(**fill) + " Some ideas, judgement deferred:")
        lines.append("")
        lines.append(f"- **{ideas[0]}**: it opens the most doors from the {voice['lens']} angle.")
        lines.append(f"- {ideas[1]}.")
        if other_ideas:
            lines.append(f"- Riffing on {turn.get('speaker')}'s '{quote(other_ideas[0], 60)}': pair it with {lower_first(ideas[2])}.")
        else:
            lines.append(f"- {ideas[2]}.")
        if target and target.get("type") in ("question", "concern"):
            lines += ["", _reaction(target, voice, s)]
        mention = _mention_for(room, turn.get("speaker") if turn else None)
        lines.append("")
        if mention:
            lines.append(f"{_handle(mention)}, how would you push the first idea further from your side?")
        lines.append("")
        if not _own_open(room, me, "question"):
            lines.append("Q: " + seeded_pick(voice["questions"], s, 2))
        lines.append("TODO: " + seeded_pick(voice["todos"], s, 4))
        return tidy("\n".join(lines))

    # review / deliberation
    pick = s % len(voice["body"])
    claim, answer = voice["body"][pick], voice["body"][(pick + 1) % len(voice["body"])]
    lines.append(f"{claim} {seeded_pick(voice['openers'], s).format(**fill)}")
    asked = _asked(room.question, me)
    if asked:
        lines += ["", f"You asked: \"{asked}\" From the {voice['lens']} side, my answer is {lower_first(answer)}"]
    reaction = _reaction(target, voice, s)
    if reaction:
        lines += ["", reaction]
    elif turn and gist_of(turn.get("content", "")):
        lines += ["", f"Building on {turn.get('speaker')} ('{quote(gist_of(turn.get('content', '')), 90)}'), my {voice['lens']} view adds one condition."]
    if not asked and not reaction:
        lines += ["", f"Since nothing has been put to me directly, here is the test I would apply to any option for \"{room.subject}\": "
                      f"{lower_first(seeded_pick(voice['questions'], s, 8))} If we cannot answer that, we are not ready to choose."]
    mention = _mention_for(room, None)
    if mention and s % 3 == 0:
        lines += ["", f"{_handle(mention)}, I would like your view on this from your side."]
    if voice.get("diagram"):
        lines.append("")
        lines.extend(_diagram(room))
    lines.append("")
    vote = _vote(voice_key, room)
    if vote != "READY" and not _own_open(room, me, "concern") and room.rounds_left > 1:
        lines.append("CONCERN: " + seeded_pick(voice["concerns"], s, 2))
    if not _own_open(room, me, "question") and room.rounds_left > 2:
        lines.append("Q: " + seeded_pick(voice["questions"], s, 3))
    if vote == "READY" or room.rounds_left <= 1 or _DECISION_ASKED.search(room.question):
        lines.append("DECISION: " + seeded_pick(voice["decisions"], s, 4))
    else:
        lines.append("TODO: " + seeded_pick(voice["todos"], s, 4))
    lines.append("")
    lines.append(f"VOTE: {vote}")
    return tidy("\n".join(lines))


_DECISION_ASKED = re.compile(r"\b(decid|decision|commit|position|recommend|propose\b|answer it directly)", re.IGNORECASE)


def _asked(question: str, me: str) -> str:
    """The facilitator's question without the leading "Name," address, shortened."""
    text = " ".join(str(question or "").split())
    if me and text.lower().startswith(str(me).lower()):
        text = text[len(me):].lstrip(" ,:;-")
    text = text.replace('"', "'")
    return short(text[:1].upper() + text[1:], 100) if text else ""


def _reaction(point: dict | None, voice: dict, s: int) -> str:
    if not point:
        return ""
    who, text, lens = point.get("speaker") or "someone", quote(point.get("text"), 160), voice["lens"]
    kind = point.get("type")
    if kind == "concern":
        return seeded_pick([f"{who} is right to worry that \"{text}\" From the {lens} side, I would treat it as a condition, not a footnote.",
                      f"On {who}'s concern (\"{text}\"): I share it in part, but the {lens} risk I see is a different one."], s, 6)
    if kind == "decision":
        return seeded_pick([f"I can support {who}'s proposal (\"{text}\") provided the {lens} condition below is met.",
                      f"{who} proposes \"{text}\" That works for me only with the {lens} caveat below."], s, 6)
    if kind == "question":
        return f"To {who}'s question (\"{text}\"): from the {lens} side, it depends on the condition below, so let us settle that first."
    return f"{who} suggested \"{text}\" I agree, and I would do it early."


_ASSUMPTIONS = (
    ("that today's conditions will hold", "If the load, the team or the budget shifts, the argument loses its footing."),
    ("that people will behave the way we expect", "We have no evidence of that yet, only our own intuition."),
    ("that the cost is what we think it is", "The hidden costs (maintenance, training, migration) are not on the table."),
)


def _challenge_lines(room: Room, voice: dict, target: dict | None, turn: dict | None, me: str) -> list[str]:
    s = room.seed
    if target:
        claim, owner = quote(target.get("text"), 90), target.get("speaker") or "the room"
    elif turn and gist_of(turn.get("content", "")):
        claim, owner = quote(gist_of(turn.get("content", "")), 90), turn.get("speaker") or "the room"
    else:
        claim, owner = f"pursuing '{room.subject}' at all", "the room"
    assumption, consequence = seeded_pick(_ASSUMPTIONS, s, 1)
    out = [
        f"We should not accept {owner}'s point yet: it assumes {assumption}. {consequence}",
        "",
        f"The point under test is \"{claim}\" It sounds reasonable, which is exactly why it needs pushing before we build on it; "
        f"from the {voice['lens']} angle the opposite case deserves a hearing.",
    ]
    if room.format == "brainstorm":
        mention = _mention_for(room, owner)
        out += ["", "Flip it around:", "",
                "- Do the exact opposite of the current favourite and see what survives.",
                f"- Treat '{room.subject}' as the wrong problem and look one step earlier.",
                "- Ask what a competitor would do to make this idea fail.", ""]
        if mention:
            out.append(f"{_handle(mention)}, which of these flips worries you most?")
        out += ["", "Q: What evidence would convince us the original idea is still the best one?"]
        return out
    votes = room.latest_votes()
    d, c = room.last_index("decision"), room.last_index("concern")
    vote = "REJECT" if d >= 0 and c < d and not room.rejects else "CHANGES"
    out += [""]
    if not _own_open(room, me, "concern"):
        out.append(f"CONCERN: {owner}'s point assumes {assumption}, and nobody has tested that.")
    if not _own_open(room, me, "question"):
        out.append("Q: " + seeded_pick(["What is the strongest evidence that this holds outside the best case?",
                                        "Under which conditions would we regret this choice?",
                                        "Who loses if we turn out to be wrong, and did we ask them?"], s, 2))
    out += [
        "TODO: " + seeded_pick(["Write down the top three assumptions and how each would be checked.",
                          "Ask one person outside this room to argue the opposite case."], s, 3),
        "",
        f"VOTE: {vote}",
    ]
    if votes and all(v == "READY" for v in votes.values()):
        out.insert(-2, "Unanimity this early is a warning sign, not a result.")
    return out


def _observer_lines(room: Room) -> list[str]:
    heard = [(s.get("name"), room.airtime(s)) for s in room.speakers]
    busiest = max(heard, key=lambda x: x[1])[0] if heard else "nobody"
    concerns = room.of_type("concern")
    return [
        f"An observation on the discussion of \"{room.subject}\", without taking a side: so far {busiest} has had the most airtime, "
        f"and {counted(len(concerns), 'concern')} and {counted(len(room.of_type('question')), 'question')} have been raised.",
        "",
        "The arguments cluster around feasibility and risk; the user's perspective has had less attention." if concerns
        else "The discussion has stayed on possibilities; risks have barely been named yet.",
        "",
        "Q: Which of the raised questions does the group consider blocking?",
    ]
