"""Facilitator decisions: the facilitator's style, who speaks next, when to stop, and the question to ask."""
from facilitation.deliberation.state import significant_words
from facilitation.llm.rehearsal.room import Room
from facilitation.llm.rehearsal.text import quote, seeded_pick, tidy
from facilitation.wording import counted

FACILITATOR_STYLES = ("socratic", "contrarian", "bridge-builder", "spark", "examiner", "impartial-chair", "closer", "equalizer")
_STYLE_HINTS = {"bridge": "bridge-builder", "impartial": "impartial-chair", "chair": "impartial-chair", "equaliz": "equalizer", "equalis": "equalizer"}


def facilitator_style(persona: dict) -> str:
    key = str(persona.get("key") or "").lower()
    name = str(persona.get("name") or "").lower()
    for style in FACILITATOR_STYLES:
        if style in key or style.replace("-", " ") in name:
            return style
    for hint, style in _STYLE_HINTS.items():
        if hint in key or hint in name:
            return style
    return "generic"


def _least_airtime(room: Room, seats: list[dict]) -> dict:
    return min(seats, key=lambda s: (room.airtime(s), room.last_round(s), room.rr_rank(s)))


def _least_words(room: Room, seats: list[dict]) -> dict:
    return min(seats, key=lambda s: (room.words(s), room.airtime(s), room.last_round(s), room.rr_rank(s)))


def _best_qualified(room: Room, seats: list[dict], text: str) -> dict:
    """The seat whose function and expertise share the most words with ``text`` (then the least heard)."""
    wanted = significant_words(text)
    return max(seats, key=lambda s: (len(wanted & significant_words(s.get("details", ""))), -room.airtime(s), -room.rr_rank(s)))


def _addressed(room: Room, cands: list[dict]) -> dict | None:
    """The seat the latest turn addressed with @, when it may speak now."""
    return next((s for s in room.mentioned if s in cands), None)


def _choose(style: str, room: Room, opening: bool) -> tuple[dict, str, dict | None]:
    """(next seat, why, the point the question should pick up)."""
    cands = room.candidates()
    if opening:
        if style == "contrarian":
            firsts = [s for s in cands if s.get("role") != "devil_advocate"] or cands
            return firsts[0], "a position has to be on the table before it can be tested", None
        if style == "spark":
            return seeded_pick(cands, room.seed), "any voice can strike the first spark", None
        if style == "equalizer":
            return cands[0], "everyone starts with equal airtime; we go in seat order", None
        if style == "bridge-builder":
            return cands[-1], "the last seat in the list often sees the problem from furthest away", None
        return cands[0], "the first speaking seat opens", None

    unheard = [s for s in cands if not room.heard(s)]
    last_name = room.last.get("name") if room.last else None
    addressed = _addressed(room, cands)

    if style == "equalizer":
        seat = _least_words(room, cands)
        return seat, f"{seat['name']} has had the least airtime ({counted(room.words(seat), 'word')} in {counted(room.airtime(seat), 'turn')})", \
            room.preferred_point(seat["name"], ("decision", "concern"), ("question", "todo"))

    if style == "impartial-chair":
        in_order = room.round_robin_after(room.last)
        if addressed is not None and addressed is not in_order and room.airtime(addressed) <= room.airtime(in_order):
            return addressed, f"{addressed['name']} was addressed directly and gets a right of reply", room.preferred_point(addressed["name"], ("question", "concern"))
        seat = room.round_robin_after(room.last)
        while seat not in cands and len(room.speakers) > 1:
            seat = room.round_robin_after(seat)
        return seat, "next in seat order; every seat gets the same floor", room.preferred_point(seat["name"], ("decision", "concern", "question"))

    if style == "closer":
        if unheard:
            return unheard[0], f"{unheard[0]['name']} has not been heard yet; everyone speaks once before anyone speaks twice", None
        votes = room.latest_votes()
        blockers = [s for s in cands if votes.get(s["name"]) in ("REJECT", "CHANGES")]
        if blockers:
            seat = min(blockers, key=lambda s: (votes[s["name"]] != "REJECT", room.rr_rank(s)))
            return seat, f"{seat['name']} still holds a blocking view ({votes[seat['name']]})", room.preferred_point(None, ("concern",), ("decision",))
        seat = _least_airtime(room, cands)
        return seat, f"{seat['name']} can still change the decision", room.latest_point_not_by(None, ("decision",))

    if style == "socratic":
        questions = room.open_questions()
        if questions:
            q = questions[-1]
            pool = [s for s in cands if s.get("name") != q.get("speaker")] or cands
            low = min(room.airtime(s) for s in pool)
            seat = _addressed(room, pool) or _best_qualified(room, [s for s in pool if room.airtime(s) == low], q.get("text", ""))
            return seat, f"{q.get('speaker')}'s open question goes to a different voice to test it", q
        seat = addressed or (unheard[0] if unheard else _least_airtime(room, cands))
        return seat, f"{last_name or 'the last speaker'} made a claim worth probing from another angle", room.preferred_point(seat["name"], ("decision", "concern"), ("todo",))

    if style == "contrarian":
        advocates = [s for s in cands if s.get("role") == "devil_advocate"]
        if room.last is not None and room.last.get("role") == "devil_advocate":
            decisions = room.of_type("decision")
            proposer = room.by_name.get(decisions[-1].get("speaker")) if decisions else None
            if proposer is None or proposer not in cands:
                defender = room.latest_turn_not_by(last_name)
                proposer = room.by_name.get(defender.get("speaker")) if defender else None
            if proposer is not None and proposer in cands:
                objection = room.preferred_point(proposer["name"], ("concern",), ("question",))
                return proposer, f"{proposer['name']} must answer the objection {last_name} just raised", ({**objection, "mode": "answer"} if objection else None)
        quiet = [s for s in unheard if s.get("role") != "devil_advocate"]
        if quiet and (not advocates or any(room.heard(s) for s in room.speakers if s.get("role") == "devil_advocate")):
            return quiet[0], f"{quiet[0]['name']} has not spoken yet; a silent dissenter must not stay silent", room.preferred_point(quiet[0]["name"], ("decision",), ("concern",))
        if advocates:
            seat = _least_airtime(room, advocates)
            return seat, f"the room is building a position; {seat['name']} (devil's advocate) tests it", room.preferred_point(seat["name"], ("decision",), ("todo",), ("concern",))
        votes = room.latest_votes()
        dissent = [s for s in cands if votes.get(s["name"]) in ("REJECT", "CHANGES")]
        if dissent:
            seat = min(dissent, key=lambda s: (votes[s["name"]] != "REJECT", room.airtime(s), room.rr_rank(s)))
            return seat, f"{seat['name']} voted against the trend; dissent gets the floor", room.preferred_point(seat["name"], ("decision",), ("todo",))
        seat = unheard[0] if unheard else _least_airtime(room, cands)
        return seat, f"{seat['name']} has not yet attacked the leading view", room.preferred_point(seat["name"], ("decision",), ("todo",))

    if style == "bridge-builder":
        votes = room.latest_votes()
        rank = {"READY": 0, "CHANGES": 1, "REJECT": 2}
        anchor = rank.get(votes.get(last_name), 1)
        floor = min(room.airtime(c) for c in cands)
        pool = [c for c in cands if room.airtime(c) <= floor]
        if addressed in pool:
            return addressed, f"{addressed['name']} was addressed by {last_name}; let them answer before we move on", room.preferred_point(addressed["name"], ("decision", "concern"), ("todo",))
        seat = max(pool, key=lambda s: (abs(rank.get(votes.get(s["name"]), 1) - anchor), -room.words(s), -room.rr_rank(s)))
        return seat, f"{seat['name']} stands furthest from {last_name or 'the last view'}; look for the overlap", room.preferred_point(seat["name"], ("decision", "concern"), ("todo",))

    if style == "spark":
        if unheard:
            seat = seeded_pick(unheard, room.seed)
            return seat, f"{seat['name']} has not added ideas yet", None
        low = min(room.airtime(s) for s in cands)
        pool = [s for s in cands if room.airtime(s) == low]
        if addressed in pool:
            return addressed, f"cross-pollinate: {addressed['name']} was handed the last idea", None
        last_role = room.last.get("role") if room.last else None
        varied = [s for s in pool if s.get("role") != last_role] or pool
        seat = seeded_pick(varied, room.seed)
        return seat, f"cross-pollinate: {seat['name']} brings a different angle to the last idea", None

    if style == "examiner":
        concern = room.unanswered_concern()
        votes = room.latest_votes()
        unvoted = [s for s in cands if s["name"] not in votes]
        if concern:
            pool = [s for s in cands if s.get("name") != concern.get("speaker")] or cands
            ordered = [s for s in pool if s in unvoted] or pool
            seat = _best_qualified(room, ordered, concern.get("text", ""))
            return seat, f"{concern.get('speaker')}'s concern needs verification by another reviewer", concern
        if unvoted:
            seat = min(unvoted, key=lambda s: (room.airtime(s), room.rr_rank(s)))
            return seat, f"{seat['name']} has not put a verdict on record", room.preferred_point(seat["name"], ("concern",), ("decision",))
        seat = _least_words(room, cands)
        return seat, f"{seat['name']} reviews the area with the least scrutiny so far", room.preferred_point(seat["name"], ("concern",), ("decision",))

    seat = addressed or _least_airtime(room, cands)
    return seat, f"{seat['name']} has spoken least so far", room.preferred_point(seat["name"], ("decision", "concern"), ("question", "todo"))


def _should_stop(style: str, room: Room) -> tuple[bool, str]:
    votes = room.latest_votes()
    opens = room.open_questions()
    if not room.speakers:
        return True, "there is nobody left to speak"
    if room.rejects or room.open_concerns():
        return False, ""  # nothing concludes over an unanswered REJECT or an open concern
    if style == "closer":
        heard = sum(1 for seat in room.speakers if room.heard(seat))
        accepted = votes and all(v == "READY" for v in votes.values())
        if room.of_type("decision") and accepted and heard >= max(2, (len(room.speakers) + 1) // 2):
            return True, "a decision is on record, half the room has weighed in and everyone who voted accepts it"
        if room.all_heard and room.of_type("decision"):
            return True, "everyone has been heard once and nothing blocks a decision"
        return False, ""
    if style == "equalizer":
        balanced = room.max_airtime - room.min_airtime == 0
        if room.all_heard and balanced and room.min_airtime >= 2 and not opens:
            return True, "airtime is balanced and every voice has been heard"
        return False, ""
    if style == "impartial-chair":
        if room.min_airtime >= 2 and room.max_airtime == room.min_airtime:
            return True, "every seat has had the same number of turns, twice round the table"
        return False, ""
    if style == "socratic":
        if room.all_heard and not opens and room.of_type("decision") and room.min_airtime >= 2:
            return True, "the central claims have been questioned and no question is left open"
        return False, ""
    if style == "contrarian":
        if not room.all_heard or not room.of_type("decision"):
            return False, ""
        advocates = [s for s in room.speakers if s.get("role") == "devil_advocate"]
        tested = any(room.heard(s) for s in advocates) or any(v in ("REJECT", "CHANGES") for v in votes.values())
        if tested and room.min_airtime >= 1 and len(room.recent) >= 2:
            return True, "the leading position has met a serious objection and the room has answered it"
        return False, ""
    if style == "bridge-builder":
        if room.format == "brainstorm":
            return (room.min_airtime >= 2, "every voice has been woven in twice")
        values = set(votes.values())
        if room.all_heard and len(votes) >= len(room.speakers) and values == {"READY"}:
            return True, "the positions have converged and everyone supports the direction"
        if room.all_heard and len(votes) >= len(room.speakers) and len(values) == 1:
            return True, f"everyone asks for changes ({next(iter(values))}): the remaining differences are clear"
        if room.min_airtime >= 2:
            return True, "the remaining difference is clear and stable; more talk will not close it"
        return False, ""
    if style == "spark":
        if room.min_airtime >= 2:
            return True, "every voice has added ideas twice; time to cluster"
        return False, ""
    if style == "examiner":
        if room.format == "brainstorm":
            return (room.all_heard, "every reviewer has examined the work")
        if room.all_heard and all(s["name"] in votes for s in room.speakers):
            return True, "every reviewer has examined the work and voted; concerns have responses"
        return False, ""
    if room.min_airtime >= 2 and not opens:
        return True, "every perspective has been heard twice and no question is open"
    return False, ""


_OPENING_QUESTIONS = {
    "socratic": ["{name}, to begin: what do you take for granted about \"{subject}\", and what would show you are wrong?",
                 "{name}, what is the strongest claim you would make about \"{subject}\", and what evidence supports it?"],
    "contrarian": ["{name}, put a position on the table: what should we do about \"{subject}\"? Make it concrete enough to be attacked.",
                   "{name}, what is your recommendation on \"{subject}\", and why would a sceptic accept it?"],
    "bridge-builder": ["{name}, what matters most to you about \"{subject}\", whatever option we end up with?",
                       "{name}, what outcome on \"{subject}\" would most of this room be glad to live with?"],
    "spark": ["{name}, kick us off: give three quick, different ideas for \"{subject}\"; the bolder the better.",
              "{name}, if there were no constraints at all, how would you approach \"{subject}\"?"],
    "examiner": ["{name}, start the review of \"{subject}\": what are its main strengths, and what is the most serious problem you see?",
                 "{name}, examine \"{subject}\" from your area: which findings would you rank as critical, major or minor?"],
    "impartial-chair": ["{name}, to open: what is your view on \"{subject}\"?",
                        "{name}, please start us off with your perspective on \"{subject}\"."],
    "closer": ["{name}, we need a decision on \"{subject}\". What would you decide today, and why?",
               "{name}, what is the option for \"{subject}\" you would commit to now, and what would make it a mistake?"],
    "equalizer": ["{name}, you open for us: how does \"{subject}\" look from where you sit?",
                  "{name}, we will hear everyone in turn; what is your first take on \"{subject}\"?"],
    "generic": ["{name}, to open the discussion: what is your view of \"{subject}\", and what matters most in it?"],
}

_FOLLOW_UPS = {
    "socratic": ["{name}, {ref} is still open. What would have to be true for the answer to be yes, and how would we know?",
                 "{name}, consider {ref}. Which assumption sits underneath it, and is that assumption safe for \"{subject}\"?"],
    "contrarian": ["{name}, the room is building on {ref}. What is the strongest case against it?",
                   "{name}, under what conditions does {ref} fail, and who pays if it does?"],
    "bridge-builder": ["{name}, consider {ref}. Which part of it could you accept, and what would you need changed?",
                       "{name}, where do you and {author} overlap on {ref}, and what real difference is left?"],
    "spark": ["{name}, riff on what we have: take the last idea somewhere unexpected for \"{subject}\".",
              "{name}, combine two ideas already on the table into something new for \"{subject}\"."],
    "examiner": ["{name}, verify {ref}: confirm or refute it with evidence, and rate its severity.",
                 "{name}, is {ref} blocking? What is the smallest change that resolves it?"],
    "impartial-chair": ["{name}, what is your view on {ref}?",
                        "{name}, is there anything you would add on \"{subject}\" before we move on, including on {ref}?"],
    "closer": ["{name}, on {ref}: can you live with it if we add a safeguard? If not, what exactly blocks you?",
               "{name}, give me your decision on \"{subject}\" in one line, with an owner for the first step."],
    "equalizer": ["{name}, how does {ref} look from where you sit?",
                  "{name}, what would you add on \"{subject}\"? Do you see {ref} differently?"],
    "generic": ["{name}, building on {ref}, what would you add, challenge or refine?"],
}
_ANSWER = "{name}, {author} objects: \"{text}\" Answer it directly: what evidence holds your position up, or what would you change?"
_REBUT = "{name}, {author} votes REJECT{why}. Answer that objection directly: what would resolve it, or why should we go ahead anyway?"
_KIND_WORDS = {"decision": "proposal", "todo": "suggestion", "concern": "concern", "question": "question"}


def _question(style: str, room: Room, seat: dict, point: dict | None, opening: bool) -> str:
    name = seat.get("name", "you")
    if opening:
        return seeded_pick(_OPENING_QUESTIONS.get(style) or _OPENING_QUESTIONS["generic"], room.seed, 1).format(name=name, subject=room.subject)
    if point is None:
        variants = [v for v in (_FOLLOW_UPS.get(style) or []) if "{ref}" not in v] or [
            "{name}, building on what has been said about \"{subject}\", what would you add, challenge or refine?"]
        return seeded_pick(variants, room.seed, 1).format(name=name, subject=room.subject)
    author, text = point.get("speaker") or "someone", quote(point.get("text"), 100)
    if point.get("mode") == "answer":
        return _ANSWER.format(name=name, author=author, text=text)
    if point.get("type") == "reject":
        reason = text[len("REJECT"):].strip(" -:,") if text.upper().startswith("REJECT") else text
        return _REBUT.format(name=name, author=author, why=f" (\"{reason}\")" if reason else "")
    ref = f"{author}'s {_KIND_WORDS.get(point.get('type'), 'point')} \"{text}\""
    question = seeded_pick(_FOLLOW_UPS.get(style) or _FOLLOW_UPS["generic"], room.seed, 1).format(name=name, subject=room.subject, ref=ref, author=author)
    if style == "equalizer" and room.airtime(seat) < room.max_airtime:
        question = question.replace(f"{name}, ", f"{name}, we have heard least from you so far. ", 1)
    return question


def decision(room: Room) -> dict:
    style = room.persona.get("key") or "generic"
    opening = room.purpose == "opening"
    persona_name = room.persona.get("name") or "The facilitator"
    opens = room.open_questions()
    heard = sum(1 for s in room.speakers if room.heard(s))
    coverage = 0.0
    if room.speakers:
        pace = min(1.0, room.round / room.max_rounds) if room.max_rounds else 0.0
        coverage = round(0.6 * heard / len(room.speakers) + 0.4 * pace, 2)
    progress = {"coverage": coverage, "openQuestions": len(opens)}

    if not room.speakers:
        return {"decision": "synthesize", "nextParticipantId": None, "question": "",
                "reasoning": f"{persona_name}: no speaking participant is available, so the room concludes.",
                "progress": progress, "rehearsal": True}

    stop, stop_why = (False, "")
    if room.reading.must_synthesize:
        stop, stop_why = True, "no rounds remain, so the room must conclude"
    elif not opening and room.rounds_left <= 0:
        stop, stop_why = True, "the round limit is reached"
    elif not opening:
        stop, stop_why = _should_stop(style, room)
    if stop:
        return {"decision": "synthesize", "nextParticipantId": None, "question": "",
                "reasoning": f"{persona_name}: time to synthesize, because {stop_why}.",
                "progress": {**progress, "coverage": max(coverage, 0.8) if not room.reading.must_synthesize else coverage},
                "rehearsal": True}

    seat, why, point = _rebut_or_choose(style, room, opening)
    return {"decision": "continue", "nextParticipantId": seat.get("id"), "question": tidy(_question(style, room, seat, point, opening)),
            "reasoning": f"{persona_name}: {why}.", "progress": progress, "rehearsal": True}


def _rebut_or_choose(style: str, room: Room, opening: bool) -> tuple[dict, str, dict | None]:
    """A standing REJECT gets an answer from someone else first; otherwise the style chooses."""
    if not opening and room.rejects:
        reject = room.rejects[0]
        pool = [s for s in room.candidates() if s.get("name") != reject["speaker"]]
        if pool:
            seat = _addressed(room, pool) or _least_airtime(room, pool)
            point = {"speaker": reject["speaker"], "type": "reject", "text": reject["text"]}
            return seat, f"{reject['speaker']}'s REJECT needs an answer before anything else", point
    seat, why, point = _choose(style, room, opening)
    cands = room.candidates()
    if seat not in cands and cands:
        seat = cands[0]
    return seat, why, point
