"""Conclusions: the facilitator-shaped synthesis and the short extractive summary for other purposes.

What the room said (a turn's first sentence, a marker's text, the topic, anyone's name) is quoted, never
written as the facilitator's own Markdown: ``said``, ``who`` and ``words`` escape it (``escape_inline``),
so a person's ``**bold**``, ``<img ...>``, ``[link](...)`` or "# heading" shows on the page and in the
exports exactly as they typed it, and a sentence taken from a turn stands in quotation marks.
"""
import re

from facilitation.deliberation.literal import escape_inline
from facilitation.llm.rehearsal.decisions import facilitator_style
from facilitation.llm.rehearsal.room import Room
from facilitation.llm.rehearsal.text import LABEL, VOTES, gist_of, ideas_in, short, tidy
from facilitation.wording import counted

_HIGH = re.compile(r"secur|sensitive|authori[sz]ation|another user|breach|leak|data loss|attack|privacy|outage|unauthori|crash|corrupt", re.IGNORECASE)
_LOW = re.compile(r"naming|style|polish|cosmetic|wording|docs?\b|document", re.IGNORECASE)


def said(text, limit: int = 200) -> str:
    """Someone's text (a marker's, a REJECT's reason) on one line, shortened, shown as written."""
    return escape_inline(short(text, limit))


def words(text, limit: int = 140) -> str:
    """A sentence someone said, as a quotation: in double quotes (theirs become single), shown as written."""
    return '"' + escape_inline(short(str(text or "").replace('"', "'"), limit)) + '"'


def who(name, unknown: str = "unattributed") -> str:
    """A name (of a seat, a person, an owner) shown as written."""
    return escape_inline(name) or unknown


def _dedupe(points: list[dict], limit: int = 8) -> list[dict]:
    seen, out = set(), []
    for p in points:
        key = " ".join(str(p.get("text", "")).lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(p)
    return out[-limit:]


def _bullets(points: list[dict], empty: str, limit: int = 8) -> list[str]:
    items = _dedupe(points, limit)
    if not items:
        return [f"- {empty}"]
    return [f"- {(p['id'] + ': ') if p.get('id') else ''}{said(p.get('text'))} ({who(p.get('speaker'))})" for p in items]


def _severity(point: dict, votes: dict) -> str:
    text = str(point.get("text", ""))
    vote = votes.get(point.get("speaker"))
    if _HIGH.search(text) or vote == "REJECT":
        return "critical"
    if _LOW.search(text):
        return "minor"
    return "major" if vote in ("CHANGES", None) else "minor"


def _perspectives(room: Room) -> list[tuple[str, str]]:
    """(speaker, gist) per speaker, from their latest recent turn or their points."""
    names = [s.get("name") for s in room.speakers]
    for r in room.recent:
        if r.get("speaker") not in names:
            names.append(r.get("speaker"))
    out = []
    for name in names:
        turns = [r for r in room.recent if r.get("speaker") == name and r.get("content")]
        gist = gist_of(turns[-1]["content"]) if turns else ""
        if not gist:
            earlier = [x["gist"] for x in room.reading.summaries if x["speaker"] == name]
            gist = re.sub(r" \((?:raised|voted) [^)]*\)$", "", earlier[-1]) if earlier else ""
        if not gist:
            own = [p for p in room.points if p.get("speaker") == name and p.get("type") in ("decision", "concern", "question", "todo")]
            gist = short(own[-1]["text"], 140) if own else ""
        if gist:
            out.append((name, gist))
    return out


def synthesis(room: Room) -> str:
    style = facilitator_style(room.persona)
    votes = room.latest_votes()
    decisions = [p for p in room.of_type("decision") if p.get("id")] or room.of_type("decision")
    concerns = room.open_concerns()
    questions = room.open_questions()
    todos = [p for p in room.of_type("todo") if p.get("id")]
    views = _perspectives(room)
    tally = {v: sorted(who(n) for n, x in votes.items() if x == v) for v in VOTES}
    reason = f"It ends because {room.reading.reason}." if room.reading.reason else ""

    out = [LABEL, "", f"# Synthesis: {escape_inline(room.subject)}", ""]
    intro = f"{who(room.persona.get('name'), 'The facilitator')} closes this {room.format} after {counted(room.round, 'turn')}."
    out += [" ".join(x for x in (intro, reason) if x), ""]

    # persona-shaped lead
    if style == "examiner":
        verdict = ("Not ready" if tally["REJECT"] else "Ready with changes" if tally["CHANGES"] or concerns else "Ready")
        out += ["## Verdict", "", f"**{verdict}.**" + (" Votes: " + ", ".join(f"{v} {len(n)}" for v, n in tally.items() if n) + "." if votes else ""), ""]
        ranked = sorted(_dedupe(room.of_type("concern"), 12), key=lambda p: ("critical", "major", "minor").index(_severity(p, votes)))
        out += ["## Findings by severity", ""]
        out += [f"- **{_severity(p, votes)}**: {said(p.get('text'), 150)} ({who(p.get('speaker'))})" for p in ranked] or ["- No findings were raised."]
        out.append("")
    elif style == "closer":
        lead = decisions[-1] if decisions else None
        line = f"**{said(lead.get('text'), 160)}** (proposed by {who(lead.get('speaker'))})" if lead else \
            f"**Proceed with the simplest option discussed for \"{escape_inline(room.subject)}\", and review it at the first checkpoint.**"
        out += ["## Decision", "", line, ""]
    elif style == "bridge-builder":
        ready = tally["READY"]
        common = (f"{', '.join(ready)} can already support the direction." if ready else "Everyone who spoke wants a result that holds up in practice.")
        out += ["## Common ground", "", common, ""]
    elif style == "spark":
        out += ["## Idea clusters", ""]
        for name, content in ((r.get("speaker"), r.get("content", "")) for r in room.recent):
            ideas = ideas_in(content)
            if ideas:
                out.append(f"- **{who(name)}**: " + "; ".join(words(i, 70) for i in ideas[:3]))
        if out[-1] == "":
            out.append("- The ideas are gathered in the key points below.")
        out.append("")
    elif style == "contrarian":
        out += ["## Objections the conclusion must survive", ""] + _bullets(concerns, "No objection was raised; treat the conclusion as untested.") + [""]

    out += ["## Key points", ""]
    out += [f"- **{who(n)}**: {words(g)}" for n, g in views] or ["- Too little was said to extract key points."]
    out.append("")

    out += ["## Agreements", ""]
    agreed = [f"- {', '.join(names)} voted {v}." for v, names in tally.items() if len(names) >= 2]
    if decisions:
        agreed.append(f"- {counted(len(_dedupe(decisions, 100)), 'proposed decision')} met no rejection." if not tally["REJECT"] else
                      "- Decisions were proposed, but at least one participant rejects the current direction.")
    out += agreed or ["- No explicit agreement was recorded."]
    out.append("")

    split = [f"- {', '.join(names)}: {v}" for v, names in tally.items() if names] if len({*votes.values()}) > 1 else []
    if split:
        out += ["## Where views differ", ""] + split + [""]

    out += ["## Decisions", ""] + _bullets(decisions, "No decision was recorded.", 100) + [""]
    unresolved = [f"- {p['id']} (concern, raised by {who(p.get('speaker'))}): {said(p.get('text'))}" for p in concerns]
    unresolved += [f"- {p['id']} (question, asked by {who(p.get('speaker'))}): {said(p.get('text'))}" for p in questions]
    unresolved += [f"- {who(r['speaker'])} still votes REJECT: {said(r.get('text'), 160)}" for r in room.rejects]
    out += ["## Unresolved", ""] + (unresolved or ["- Nothing is left open."]) + [""]

    out += ["## Recommendations", ""]
    recs = [f"- {said(p.get('text'), 150)} (owner: {who(p.get('owner') or p.get('speaker'))})" for p in _dedupe(todos, 6)]
    if style == "impartial-chair":
        recs = recs or ["- The room made no proposals of its own."]
    else:
        if style == "socratic" and questions:
            recs.append(f"- Answer the open question first: {words(questions[-1].get('text'), 100)}")
        if style == "examiner" and concerns:
            critical = any(_severity(p, votes) == "critical" for p in concerns)
            recs.append("- Fix the critical findings before release, then re-review the major ones." if critical
                        else "- Address the major findings, then confirm them in a short re-review.")
        if style == "closer":
            if not todos:
                recs += [f"- Carry out: {said(p.get('text'), 140)} (owner: {who(p.get('speaker'))})" for p in _dedupe(decisions, 3)]
            recs.append("- Review trigger: reopen the decision if a critical concern materialises in the first iteration.")
        if style == "contrarian":
            recs.append("- Revisit the conclusion if any listed objection turns out to hold.")
        if not recs:
            recs.append(f"- Turn the strongest point above into a concrete next step for \"{escape_inline(room.subject)}\".")
    out += recs + [""]

    if style == "equalizer":
        out += ["## Every voice", ""]
        for seat in room.speakers:
            name = seat.get("name")
            gist = dict(views).get(name)
            turns = room.airtime(seat)
            out.append(f"- **{who(name)}** ({counted(turns, 'turn')}): " + (f"contributed {words(gist, 100)}." if gist else "had little airtime; hear them first next time."))
        out.append("")
    return tidy("\n".join(out).rstrip() + "\n")


def generic(room: Room) -> str:
    """A short extractive summary of whatever the prompt shows (narratives, minutes ...)."""
    views = _perspectives(room)
    out = [LABEL, "", f"Summary of \"{escape_inline(room.subject)}\", round {room.round}:", ""]
    out += [f"- {who(n)}: {words(g)}" for n, g in views] or ["- Nothing has been said yet."]
    for kind, title in (("decision", "Decisions"), ("question", "Open questions"), ("todo", "Actions")):
        pts = _dedupe(room.of_type(kind), 5)
        if pts:
            out += ["", f"{title}:"] + [f"- {said(p.get('text'), 140)} ({who(p.get('speaker'))})" for p in pts]
    return tidy("\n".join(out) + "\n")
