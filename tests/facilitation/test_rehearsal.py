"""The offline rehearsal model: it reads the prompt text a real model would get, and nothing else."""
import json
import re
from dataclasses import replace

import pytest

from facilitation.deliberation import parse_markers
from facilitation.deliberation.conclusion import omissions
from facilitation.engine import EngineState, Evaluation, Opening, ParticipantTurn, Synthesis
from facilitation.llm.base import LLMRequest
from facilitation.llm.rehearsal import FACILITATOR_STYLES, LABEL, RehearsalProvider
from facilitation.prompts.builder import for_step
from tests.facilitation.simulated_room import SimulatedRoom

PROVIDER = RehearsalProvider()
ARCH, SEC, PRAG = 11, 12, 13


def turn(seq, rnd, seat, text, speaker=None):
    names = {ARCH: "Architect", SEC: "Security", PRAG: "Pragmatist", 14: "Designer"}
    return {"kind": "contribution", "seq": seq, "round": rnd, "seatId": seat, "speaker": speaker or names[seat],
            "content": text, "markers": parse_markers(text), "status": "ok"}


def situation(style, records, *, rounds=6, people=None, fmt="deliberation"):
    room = SimulatedRoom(style, fmt, people=people or (("architect", "participant"), ("security", "participant"),
                                                        ("pragmatist", "devil_advocate")), max_rounds=rounds)
    room.records = list(records)
    done = [r for r in records if r["kind"] == "contribution"]
    last = done[-1]["seatId"] if done else None
    room.state = EngineState(phase="evaluation" if done else "opening", round=len(done), maxRounds=rounds, lastSeatId=last)
    return room


def decide(style, records, **kw):
    room = situation(style, records, **kw)
    ctx = room.ctx()
    step = Evaluation(rounds_left=ctx.max_rounds - ctx.round, must_synthesize=ctx.round >= ctx.max_rounds) if records else Opening()
    return json.loads(PROVIDER.complete(for_step(ctx, step, 30)).text)


def test_provider_identity_and_usage():
    room = SimulatedRoom("impartial-chair")
    request = for_step(room.ctx(), Opening(), 30)
    response = PROVIDER.complete(request)
    assert PROVIDER.name == "rehearsal" and PROVIDER.offline is True
    assert response.provider == "rehearsal" and response.model == "rehearsal"
    assert response.input_tokens > 1000 and response.output_tokens > 0


def test_deterministic_and_blind_to_everything_but_the_prompt_text():
    room = SimulatedRoom("spark").run()
    for request in room.requests:
        text = PROVIDER.complete(request).text
        assert PROVIDER.complete(request).text == text
        # no hidden channel: the structured meta, the purpose label and the limits change nothing
        blind = replace(request, meta={}, purpose="other", model="x", max_tokens=1, response_schema=None)
        assert PROVIDER.complete(blind).text == text


def test_a_change_in_the_prompt_text_alone_changes_the_decision():
    records = [turn(1, 1, ARCH, "Caching helps.\nVOTE: READY"), turn(2, 2, SEC, "I agree.\nVOTE: READY")]
    room = situation("equalizer", records)
    request = for_step(room.ctx(), Evaluation(rounds_left=4, must_synthesize=False), 30)
    before = json.loads(PROVIDER.complete(request).text)
    assert before["nextParticipantId"] == PRAG  # has not spoken
    blocks = request.messages[0]["content"]
    edited = [dict(b, text=b["text"].replace('- [13] "Pragmatist": 0 turns, 0 words, not heard yet',
                                             '- [13] "Pragmatist": 5 turns, 900 words, last heard in round 2')
                   .replace('May speak next: [13] "Pragmatist"', 'May speak next: [11] "Architect", [13] "Pragmatist"')) for b in blocks]
    after = json.loads(PROVIDER.complete(replace(request, messages=[{"role": "user", "content": edited}])).text)
    assert after["nextParticipantId"] != PRAG


@pytest.mark.parametrize("style", FACILITATOR_STYLES + ("generic-facilitator",))
def test_decisions_are_pure_json_with_speaking_ids(style):
    people = (("architect", "participant"), ("security", "participant"), ("pragmatist", "devil_advocate"), ("watcher", "observer"))
    opening = decide(style, [], people=people)
    assert opening["rehearsal"] is True and opening["decision"] == "continue"
    assert opening["nextParticipantId"] in {ARCH, SEC, PRAG} and opening["question"]
    for last in (ARCH, SEC, PRAG):
        data = decide(style, [turn(1, 1, last, "A first view on caching the reads.")], people=people)
        assert set(data) >= {"decision", "nextParticipantId", "question", "reasoning", "progress"}
        assert data["nextParticipantId"] in {ARCH, SEC, PRAG} and data["nextParticipantId"] != last
        assert 0 <= data["progress"]["coverage"] <= 1 and data["progress"]["openQuestions"] >= 0


@pytest.mark.parametrize("style", FACILITATOR_STYLES)
def test_must_synthesize_is_obeyed(style):
    records = [turn(n, n, seat, "Views.") for n, seat in enumerate((ARCH, SEC, PRAG, ARCH, SEC), start=1)]
    assert decide(style, records, rounds=5)["decision"] == "synthesize"


def test_equalizer_prefers_least_words_and_differs_from_the_chair():
    records = [turn(1, 1, ARCH, "Short."), turn(2, 2, SEC, " ".join(["word"] * 200)), turn(3, 3, PRAG, "Also brief, a few words only here."),
               turn(4, 4, ARCH, "Another short one.")]
    equalizer = decide("equalizer", records)
    chair = decide("impartial-chair", records)
    assert equalizer["nextParticipantId"] == PRAG  # fewest words among those with the fewest turns
    assert chair["nextParticipantId"] == SEC  # next in seat order


def test_socratic_hands_an_open_question_to_someone_else():
    records = [turn(1, 1, SEC, "Access matters here.\nQ: Who may read the cached entries?")]
    data = decide("socratic", records)
    assert data["nextParticipantId"] != SEC and "Who may read the cached entries?" in data["question"]


def test_contrarian_sends_the_devil_advocate_at_a_fresh_decision_and_then_the_proposer_answers():
    records = [turn(1, 1, ARCH, "Caching reads is cheap.\nDECISION: Cache reads for five minutes.\nVOTE: READY"),
               turn(2, 2, SEC, "Security view.\nVOTE: CHANGES")]
    assert decide("contrarian", records)["nextParticipantId"] == PRAG
    records.append(turn(3, 3, PRAG, "This assumes load stays flat.\nCONCERN: Five minutes of stale reads hurts billing.\nVOTE: REJECT"))
    answer = decide("contrarian", records)
    assert answer["nextParticipantId"] == ARCH and "REJECT" in answer["question"]


def test_a_mention_steers_the_next_speaker():
    records = [turn(1, 1, ARCH, "I see a risk in invalidation. @security what would you check first?")]
    for style in ("socratic", "bridge-builder", "generic-facilitator"):
        assert decide(style, records, people=(("architect", "participant"), ("pragmatist", "participant"), ("security", "participant")))[
            "nextParticipantId"] == 13, style  # Security sits third here


def test_closer_concludes_once_everyone_was_heard_and_the_chair_goes_round_again():
    records = [turn(1, 1, ARCH, "DECISION: Cache reads for five minutes.\nVOTE: READY"), turn(2, 2, SEC, "Fine.\nVOTE: READY"),
               turn(3, 3, PRAG, "Fine by me.\nVOTE: READY")]
    assert decide("closer", records)["decision"] == "synthesize"
    chair = decide("impartial-chair", records)
    assert chair["decision"] == "continue" and chair["nextParticipantId"] == ARCH


def test_examiner_does_not_conclude_over_an_unanswered_reject():
    records = [turn(1, 1, ARCH, "Looks fine.\nVOTE: READY"), turn(2, 2, SEC, "Looks fine.\nVOTE: READY"),
               turn(3, 3, PRAG, "The cache leaks tenant data.\nVOTE: REJECT")]
    data = decide("examiner", records)
    assert data["decision"] == "continue" and data["nextParticipantId"] in (ARCH, SEC) and "Pragmatist" in data["question"]


@pytest.mark.parametrize("alias", ["architect", "security", "pragmatist", "perfectionist", "designer", "researcher", "visualizer", "custom"])
@pytest.mark.parametrize("fmt", ["review", "deliberation"])
def test_contributions_are_labelled_and_marked(alias, fmt):
    room = situation("impartial-chair", [turn(1, 1, ARCH, "CONCERN: Stale reads after writes.")], fmt=fmt,
                     people=(("architect", "participant"), (alias, "participant")))
    text = PROVIDER.complete(for_step(room.ctx(), ParticipantTurn(12, "What worries you most?"), 30)).text
    assert text.startswith(LABEL + "\n")
    words = len(text.split("\n", 1)[1].split())
    assert 60 <= words <= 220, words
    items = parse_markers(text)
    assert {"question", "concern", "decision", "todo"} & {m["type"] for m in items}
    assert items[-1]["type"] == "vote" and text.rstrip().splitlines()[-1].startswith("VOTE: ")


def test_brainstorm_contribution_lists_ideas_and_mentions_someone():
    room = situation("spark", [], fmt="brainstorm")
    text = PROVIDER.complete(for_step(room.ctx(), ParticipantTurn(ARCH, "Three bold ideas?"), 30)).text
    items = parse_markers(text)
    mentions = [m["text"] for m in items if m["type"] == "mention"]
    assert mentions and all(m in ("security", "pragmatist") for m in mentions)
    assert sum(1 for line in text.splitlines() if line.startswith("- ")) >= 3
    assert not any(m["type"] == "vote" for m in items)


def test_devil_advocate_challenges_the_point_it_is_asked_about():
    room = situation("contrarian", [turn(1, 1, ARCH, "DECISION: Cache every read for five minutes.")])
    text = PROVIDER.complete(for_step(room.ctx(), ParticipantTurn(PRAG, "What is the case against caching every read?"), 30)).text
    assert "Cache every read for five minutes" in text and "Architect" in text
    assert any(m["type"] == "concern" for m in parse_markers(text))


def test_synthesis_accounts_for_every_decision_and_open_item_and_follows_the_persona():
    records = [
        turn(1, 1, ARCH, "A short cache keeps Postgres calm under load.\nDECISION: Cache reads for five minutes.\nVOTE: READY"),
        turn(2, 2, SEC, "Tenancy matters.\nCONCERN: Cached entries could leak data across tenants.\nQ: Who may read the cache?\nVOTE: CHANGES"),
        turn(3, 3, PRAG, "Measure first.\nTODO: Measure the hit rate in staging.\nVOTE: REJECT"),
    ]
    texts = {}
    for style in ("examiner", "closer", "equalizer", "impartial-chair"):
        room = situation(style, records, rounds=3)
        ctx = room.ctx()
        text = PROVIDER.complete(for_step(ctx, Synthesis("max_rounds"), 30)).text
        assert text.startswith(LABEL + "\n")
        assert omissions(text, ctx.room) == [], style
        for heading in ("## Key points", "## Decisions", "## Unresolved", "## Recommendations"):
            assert heading in text, (style, heading)
        for needle in ("Cache reads for five minutes", "Who may read the cache?", "Measure the hit rate in staging",
                       "Pragmatist still votes REJECT", "round limit"):
            assert needle in text, (style, needle)
        texts[style] = text
    assert "## Verdict" in texts["examiner"] and "critical" in texts["examiner"]
    assert "## Decision\n" in texts["closer"]
    assert "## Every voice" in texts["equalizer"]
    assert len(set(texts.values())) == 4


def test_a_facilitator_of_its_own_is_named_as_its_persona_says_or_not_at_all():
    records = [turn(1, 1, ARCH, "A short cache keeps Postgres calm.\nVOTE: READY")]
    room = situation("a-facilitator-of-our-own", records, rounds=1)
    ctx = room.ctx()
    text = PROVIDER.complete(for_step(ctx, Synthesis("max_rounds"), 30)).text
    assert "The facilitator closes this deliberation after 1 turn." in text  # "You are a fair facilitator." names nobody
    named = replace(ctx, facilitator=replace(ctx.facilitator, persona_prompt="You are Morgan, a fair facilitator."))
    assert "Morgan closes this deliberation" in PROVIDER.complete(for_step(named, Synthesis("max_rounds"), 30)).text


def test_other_prompts_get_a_labelled_summary():
    text = PROVIDER.complete(LLMRequest(system="Summarise.", messages=[{"role": "user", "content": "DECISION: Encrypt the cache."}],
                                        purpose="narrative")).text
    assert text.startswith(LABEL + "\n")


def test_tolerates_empty_prompts():
    for system in ("", "## Your selection policy (The Closer)"):
        assert PROVIDER.complete(LLMRequest(system=system, messages=[], purpose="opening")).text


@pytest.mark.parametrize("style", FACILITATOR_STYLES)
@pytest.mark.parametrize("fmt", ["brainstorm", "review", "deliberation"])
def test_whole_rooms_run_to_a_checked_conclusion_without_repeats(style, fmt):
    room = SimulatedRoom(style, fmt, max_rounds=8).run()
    order = room.order
    assert 1 <= len(order) <= 8
    assert all(a != b for a, b in zip(order, order[1:]))
    assert room.conclusion.startswith(LABEL)
    assert omissions(room.conclusion, room.ctx().room) == []
    own = [c for d in room.decisions for c in d.corrections if c["rule"] in ("no_repeat", "not_speaking", "fair_share", "strict_share")]
    assert own == [], own  # the rehearsal model itself keeps to the rules


FOUR = (("architect", "participant"), ("security", "participant"), ("pragmatist", "devil_advocate"), ("designer", "participant"))


def test_the_eight_presets_steer_differently():
    orders = {style: tuple(SimulatedRoom(style, people=FOUR, max_rounds=12).run().order) for style in FACILITATOR_STYLES}
    assert len(set(orders.values())) == 8, orders


def test_contrarian_hears_the_whole_room():
    order = SimulatedRoom("contrarian", people=FOUR, max_rounds=12).run().order
    assert {"Architect", "Security", "Pragmatist", "Designer"} <= set(order[:6])


def test_spark_does_not_hand_the_devil_advocate_every_other_turn():
    order = SimulatedRoom("spark", "brainstorm", people=FOUR, max_rounds=12).run().order
    assert order.count("Pragmatist") <= (len(order) + 3) // 4 + 1


def test_rehearsal_text_is_clean():
    texts = []
    for style in FACILITATOR_STYLES:
        room = SimulatedRoom(style, people=FOUR, max_rounds=10).run()
        texts += [t["content"] for t in room.turns] + [room.conclusion] + [d.question for d in room.decisions]
        tally = room.ctx().room.tally()
        if tally["changes"] and not tally["reject"] and not tally["ready"]:
            assert "nobody votes against" not in " ".join(d.reasoning for d in room.decisions)
    body = "\n".join(texts)
    assert '.".' not in body and '?".' not in body
    assert not re.search(r"[.!?] [a-z]", body), re.search(r".{40}[.!?] [a-z].{20}", body)
    assert "(owner: " in body and not re.search(r"\(owner[^:]|owned by|\(owners?\b(?!:)", body)  # owners written one way


# A person's Markdown and HTML, and lines that pretend to be the facilitator's own headings.
HOSTILE_FIRST_LINE = "**Ship it** now, see <img src=x onerror=alert(1)> and [the plan](javascript:alert(1)) for ~~details~~"
HOSTILE_TOPIC = "Should we **cache** <b>reads</b> in [Redis](https://example.com)?"


def _rendered(text):
    """The synthesis as the pages render it (markdown-it, raw HTML off): its blocks' inline tokens."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).parse(text)


def _emphasised(children) -> set[str]:
    """The texts inside bold or italics."""
    spans, depth, current = set(), 0, []
    for c in children:
        if c.type in ("strong_open", "em_open"):
            depth += 1
        elif c.type in ("strong_close", "em_close"):
            depth -= 1
            if depth == 0:
                spans.add("".join(current).strip())
                current = []
        elif depth:
            current.append(c.content)
    return spans


def _plain(inline) -> str:
    return "".join(c.content for c in inline.children if c.type in ("text", "text_special", "code_inline"))


@pytest.mark.parametrize("style", FACILITATOR_STYLES)
def test_a_synthesis_quotes_what_people_wrote_as_written(style):
    people = (("ann_lee", "participant"), ("security", "participant"), ("pragmatist", "devil_advocate"))
    records = [
        turn(1, 1, ARCH, f"{HOSTILE_FIRST_LINE}\n## Decision\nDECISION: Cache **reads** for <i>five</i> minutes.\nVOTE: REJECT",
             speaker="Ann_Lee"),
        turn(2, 2, SEC, "Synthesis: everyone agreed to ship it today\n===\nCONCERN: Cached *entries* could leak <b>data</b>.\n"
                        "- idea one with `code` in it\nQ: Who may read [the cache](https://example.com)?\nVOTE: CHANGES"),
        turn(3, 3, PRAG, "Measure first, then decide.\nTODO: Measure the hit rate in _staging_.\nVOTE: READY"),
    ]
    room = situation(style, records, rounds=3, people=people)
    room.topic = HOSTILE_TOPIC
    ctx = room.ctx()
    text = PROVIDER.complete(for_step(ctx, Synthesis("max_rounds"), 30)).text
    tokens = _rendered(text)
    inlines = [t for t in tokens if t.type == "inline"]
    children = [c for t in inlines for c in t.children]
    # Nothing a person wrote became markup: no link, no tag, no strike-through, no code span.
    kinds = {c.type for c in children}
    assert not kinds & {"link_open", "html_inline", "s_open", "code_inline", "image"}, kinds
    assert not any(t.type == "html_block" for t in tokens)
    # Bold and italics are the facilitator's own (names, severities, the verdict, the decision it leads
    # with): none of the words the people emphasised.
    assert not _emphasised(children) & {"Ship it", "reads", "five", "entries", "staging", "cache"}, _emphasised(children)
    # The facilitator's headings are the only headings; the first quotes the topic as the line it reads as
    # (its emphasis and link marks left out, its tag shown as typed).
    headings = [_plain(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0] == "Synthesis: " + "Should we cache <b>reads</b> in Redis?"
    assert not any("everyone agreed" in h for h in headings) and "Decision" not in headings[1:] or style == "closer"
    # What was said reads as typed, in quotation marks where a sentence is taken from a turn.
    shown = "\n".join(_plain(t) for t in inlines)
    assert '"Ship it now, see <img src=x onerror=alert(1' in shown  # the first sentence (its emphasis marks left out)
    assert "Cached *entries* could leak <b>data</b>." in shown and "Who may read [the cache](https://example.com)?" in shown
    assert "Cache **reads** for <i>five</i> minutes." in shown and "Ann_Lee" in shown
    # Every item is still accounted for, the REJECT of a name with an underscore included.
    assert omissions(text, ctx.room) == [], style


@pytest.mark.parametrize("style", FACILITATOR_STYLES)
def test_a_heading_that_quotes_a_topic_of_several_lines_is_one_clean_line(style):
    records = [turn(1, 1, ARCH, "Cache the reads.\nVOTE: READY"), turn(2, 2, SEC, "Agreed.\nVOTE: READY")]
    room = situation(style, records, rounds=2)
    room.topic = "# Heading line\nShould we use **bold** caching?\n\n- and a `list`"
    text = PROVIDER.complete(for_step(room.ctx(), Synthesis("max_rounds"), 30)).text
    tokens = _rendered(text)
    headings = [_plain(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0] == "Synthesis: Heading line", headings
    assert "**" not in text.split("\n# ", 1)[1].split("\n", 1)[0]


def _seats_renumbered(room: SimulatedRoom, by: int) -> SimulatedRoom:
    """The same room, its seats under other ids (as another database would number them)."""
    room.agents = {seat_id + by: replace(agent, seat_id=seat_id + by, agent_id=seat_id + by) for seat_id, agent in room.agents.items()}
    room.seats = [replace(seat, id=seat.id + by) for seat in room.seats]
    return room


@pytest.mark.parametrize("style", ["impartial-chair", "socratic"])
def test_one_room_gives_the_same_discussion_whatever_ids_its_seats_have(style):
    """The model's variation is seeded from the prompt with seats named by their place in the room, not their ids."""
    first = SimulatedRoom(style, max_rounds=5).run()
    again = _seats_renumbered(SimulatedRoom(style, max_rounds=5), 90).run()
    assert again.order == first.order and len(first.order) == 5
    assert [t["content"] for t in again.turns] == [t["content"] for t in first.turns]
    assert again.conclusion == first.conclusion
