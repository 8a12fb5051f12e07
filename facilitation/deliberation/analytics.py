"""Quality analytics of a discussion, from its room state and its facilitator decisions (pure).

- airtime share per speaker (of the words spoken) and the Gini coefficient of the shares
  (0: perfectly even, towards 1: one voice dominates);
- the objections the devil's advocate raised (its concerns and questions) and what became of them;
- the questions and concerns left open;
- the corrections the engine made to decisions and the fallbacks it used, counted by rule;
- the conclusion check: how many drafts the conclusion took and the items it still leaves out.
"""
from collections import Counter

from facilitation.deliberation.state import RoomState


def gini(values: list[float]) -> float:
    """The Gini coefficient of non-negative values (0 for none or all zero)."""
    xs = sorted(max(0.0, float(v)) for v in values)
    total = sum(xs)
    if not xs or total == 0:
        return 0.0
    n = len(xs)
    weighted = sum((i + 1) * x for i, x in enumerate(xs))
    return round((2 * weighted) / (n * total) - (n + 1) / n, 3)


def conclusion_check(synthesis: dict | None) -> dict | None:
    """From the synthesis record's data (``{"checks": [...], "gaps": [...]}``); None before the conclusion."""
    if synthesis is None:
        return None
    checks = synthesis.get("checks") or []
    return {"attempts": len(checks), "redone": max(0, len(checks) - 1), "gaps": list(synthesis.get("gaps") or [])}


def analytics(state: RoomState, decisions: list[dict], synthesis: dict | None = None) -> dict:
    speakers = state.speakers
    words = {s.id: state.words_of(s.id) for s in speakers}
    total = sum(words.values())
    airtime = [{"seatId": s.id, "name": s.name, "role": s.role, "turns": state.turns_of(s.id), "words": words[s.id],
                "share": round(words[s.id] / total, 3) if total else 0.0} for s in speakers]
    advocates = {s.id for s in state.seats if s.role == "devil_advocate"}
    objections = [i.as_dict() for i in state.items if i.seat_id in advocates and i.kind in ("concern", "question")]
    corrections = Counter(c.get("rule", "") for d in decisions for c in (d.get("corrections") or []))
    fallbacks = Counter(d.get("fallback") for d in decisions if d.get("fallback"))
    return {
        "airtime": airtime,
        "gini": gini(list(words.values())),
        "devilsAdvocateObjections": objections,
        "openQuestions": [i.as_dict() for i in state.open_questions],
        "openConcerns": [i.as_dict() for i in state.open_concerns],
        "standingRejects": [{"seatId": v.seat_id, "name": v.speaker, "text": v.text, "round": v.round} for v in state.standing_rejects],
        "corrections": dict(corrections),
        "fallbacks": dict(fallbacks),
        "conclusionCheck": conclusion_check(synthesis),
    }
