import json

import pytest

from facilitation.deliberation import parse_markers
from facilitation.llm.base import LLMRequest
from facilitation.llm.rehearsal import FACILITATOR_STYLES, LABEL, RehearsalProvider

PROVIDER = RehearsalProvider()
TOPIC = "Should we put a Redis cache in front of Postgres?"
SPEAKERS = [
    {"id": 11, "name": "Architect", "role": "participant"},
    {"id": 12, "name": "Security", "role": "participant"},
    {"id": 13, "name": "Pragmatist", "role": "devil_advocate"},
]
VOICES = {11: "architect", 12: "security", 13: "pragmatist"}


def ask(purpose, **meta):
    base = {"topic": TOPIC, "format": "deliberation", "round": 0, "maxRounds": 5, "roundsLeft": 5, "mustSynthesize": False,
            "persona": {"key": "impartial-chair", "name": "The Impartial Chair"}, "speakers": SPEAKERS,
            "lastSpeakerId": None, "recent": [], "points": [], "airtime": {}}
    base.update(meta)
    if "roundsLeft" not in meta:
        base["roundsLeft"] = max(0, base["maxRounds"] - base["round"])
    return PROVIDER.complete(LLMRequest(system="sys", messages=[{"role": "user", "content": "hello"}], purpose=purpose, meta=base))


def decide(purpose="evaluation", **meta):
    response = ask(purpose, **meta)
    return json.loads(response.text)


def run_room(style, fmt="deliberation", max_rounds=6, speakers=SPEAKERS):
    """Drive a whole room with the rehearsal provider only; returns (speaker order, synthesis text)."""
    recent, points, airtime, last, order = [], [], {}, None, []
    persona = {"key": style, "name": style}
    d = decide("opening", format=fmt, persona=persona, maxRounds=max_rounds, speakers=speakers)
    rnd = 0
    while True:
        seat = next(s for s in speakers if s["id"] == d["nextParticipantId"])
        order.append(seat["name"])
        text = ask("contribution", format=fmt, round=rnd, maxRounds=max_rounds, question=d["question"], speakers=speakers,
                   persona={"key": VOICES.get(seat["id"], "x"), "name": seat["name"]}, speaker=seat,
                   recent=recent[-4:], points=points, airtime=dict(airtime), lastSpeakerId=last).text
        points += [{"speaker": seat["name"], "type": m["type"], "text": m["text"], **({"value": m["value"]} if "value" in m else {})}
                   for m in parse_markers(text)]
        recent.append({"seatId": seat["id"], "speaker": seat["name"], "role": seat["role"], "content": text, "round": rnd + 1})
        rnd += 1
        last = seat["id"]
        airtime[str(last)] = airtime.get(str(last), 0) + 1
        d = decide("evaluation", format=fmt, persona=persona, round=rnd, maxRounds=max_rounds, mustSynthesize=rnd >= max_rounds,
                   speakers=speakers, lastSpeakerId=last, recent=recent[-4:], points=points, airtime=dict(airtime))
        if d["decision"] == "synthesize":
            break
    synthesis = ask("synthesis", format=fmt, persona=persona, round=rnd, maxRounds=max_rounds, reason="decided",
                    speakers=speakers, recent=recent[-4:], points=points, airtime=dict(airtime)).text
    return order, synthesis


def test_provider_identity_and_usage():
    response = ask("contribution", speaker=SPEAKERS[0], persona={"key": "architect", "name": "Architect"}, question="Why?")
    assert PROVIDER.name == "rehearsal" and PROVIDER.offline is True
    assert response.provider == "rehearsal" and response.model == "rehearsal"
    assert response.input_tokens > 0 and response.output_tokens > 0


@pytest.mark.parametrize("purpose", ["opening", "evaluation", "contribution", "synthesis", "narrative"])
def test_deterministic(purpose):
    meta = {"round": 2, "lastSpeakerId": 11, "airtime": {"11": 1, "12": 1}, "speaker": SPEAKERS[1],
            "persona": {"key": "security", "name": "Security"} if purpose == "contribution" else {"key": "spark", "name": "The Spark"},
            "points": [{"speaker": "Architect", "type": "question", "text": "What about cache invalidation?"}]}
    assert ask(purpose, **meta).text == ask(purpose, **meta).text


def test_variation_comes_from_meta():
    texts = {ask("contribution", speaker=SPEAKERS[0], persona={"key": "architect", "name": "Architect"}, topic=f"Topic {i}").text
             for i in range(6)}
    assert len(texts) > 1


@pytest.mark.parametrize("style", FACILITATOR_STYLES + ("generic-facilitator",))
def test_decisions_are_pure_json_with_speaking_ids(style):
    speakers = SPEAKERS + [{"id": 99, "name": "Observer", "role": "observer"}]
    persona = {"key": style, "name": style}
    opening = ask("opening", persona=persona, speakers=speakers)
    assert not opening.text.startswith(LABEL)
    data = json.loads(opening.text)
    assert data["rehearsal"] is True and data["decision"] == "continue"
    assert data["nextParticipantId"] in {11, 12, 13} and data["question"]
    for last in (11, 12, 13):
        data = decide(persona=persona, speakers=speakers, round=1, lastSpeakerId=last, airtime={str(last): 1})
        assert set(data) >= {"decision", "nextParticipantId", "question", "reasoning", "progress"}
        assert data["nextParticipantId"] in {11, 12, 13}
        assert data["nextParticipantId"] != last
        assert 0 <= data["progress"]["coverage"] <= 1 and data["progress"]["openQuestions"] >= 0


@pytest.mark.parametrize("style", FACILITATOR_STYLES)
def test_must_synthesize_is_obeyed(style):
    data = decide(persona={"key": style, "name": style}, round=5, roundsLeft=0, mustSynthesize=True, lastSpeakerId=11,
                  airtime={"11": 2, "12": 2, "13": 1})
    assert data["decision"] == "synthesize"


def test_no_speakers_concludes():
    data = decide(speakers=[{"id": 5, "name": "Watcher", "role": "observer"}], round=1)
    assert data["decision"] == "synthesize" and data["nextParticipantId"] is None


def test_personas_choose_differently():
    # Architect just spoke; Security has never spoken; Pragmatist (devil's advocate) spoke once.
    situation = {"round": 3, "lastSpeakerId": 11, "airtime": {"11": 2, "13": 1},
                 "points": [{"speaker": "Architect", "type": "decision", "text": "Cache reads for five minutes."},
                            {"speaker": "Architect", "type": "vote", "text": "READY", "value": "READY"}]}
    equalizer = decide(persona={"key": "equalizer", "name": "The Equalizer"}, **situation)
    contrarian = decide(persona={"key": "contrarian", "name": "The Contrarian"}, **situation)
    chair = decide(persona={"key": "impartial-chair", "name": "The Impartial Chair"}, **situation)
    assert equalizer["nextParticipantId"] == 12  # least airtime
    assert contrarian["nextParticipantId"] == 13  # the devil's advocate attacks the fresh decision
    assert chair["nextParticipantId"] == 12  # round-robin after Architect
    assert equalizer["question"] != contrarian["question"]


def test_equalizer_prefers_least_airtime():
    data = decide(persona={"key": "equalizer", "name": "The Equalizer"}, round=5, lastSpeakerId=12, airtime={"11": 3, "12": 1, "13": 1})
    assert data["nextParticipantId"] == 13


def test_socratic_hands_an_open_question_to_someone_else():
    points = [{"speaker": "Security", "type": "question", "text": "Who may read the cached entries?"}]
    data = decide(persona={"key": "socratic", "name": "The Socratic"}, round=1, lastSpeakerId=12, airtime={"12": 1}, points=points)
    assert data["nextParticipantId"] != 12
    assert "Who may read the cached entries?" in data["question"]


def test_closer_synthesizes_once_everyone_was_heard():
    persona = {"key": "closer", "name": "The Closer"}
    early = decide(persona=persona, round=1, lastSpeakerId=11, airtime={"11": 1})
    assert early["decision"] == "continue" and early["nextParticipantId"] in (12, 13)
    done = decide(persona=persona, round=3, lastSpeakerId=13, airtime={"11": 1, "12": 1, "13": 1})
    assert done["decision"] == "synthesize"
    # the chair, in the same situation, keeps going round the table
    chair = decide(round=3, lastSpeakerId=13, airtime={"11": 1, "12": 1, "13": 1})
    assert chair["decision"] == "continue" and chair["nextParticipantId"] == 11


@pytest.mark.parametrize("voice", ["architect", "security", "pragmatist", "perfectionist", "designer", "researcher", "visualizer", "custom"])
@pytest.mark.parametrize("fmt", ["review", "deliberation"])
def test_contributions_are_labelled_and_marked(voice, fmt):
    text = ask("contribution", format=fmt, round=1, speaker=SPEAKERS[1], persona={"key": voice, "name": voice.title()},
               question="Security, what worries you most?", lastSpeakerId=11,
               points=[{"speaker": "Architect", "type": "concern", "text": "Stale reads after writes."}]).text
    assert text.startswith(LABEL + "\n")
    words = len(text.split("\n", 1)[1].split())
    assert 80 <= words <= 200, words
    items = parse_markers(text)
    assert {"question", "concern", "decision", "todo"} & {m["type"] for m in items}
    assert items[-1]["type"] == "vote" and items[-1]["value"] in ("READY", "CHANGES", "REJECT")
    assert text.rstrip().splitlines()[-1].startswith("VOTE: ")


def test_brainstorm_contribution_lists_ideas_and_mentions_someone():
    text = ask("contribution", format="brainstorm", speaker=SPEAKERS[0], persona={"key": "designer", "name": "Designer"},
               question="Architect, what are three bold ideas?").text
    assert text.startswith(LABEL + "\n")
    items = parse_markers(text)
    mentions = [m["text"] for m in items if m["type"] == "mention"]
    assert mentions and all(m in ("security", "pragmatist") for m in mentions)
    assert sum(1 for line in text.splitlines() if line.startswith("- ")) >= 3
    assert not any(m["type"] == "vote" for m in items)


def test_devil_advocate_challenges_the_latest_point():
    points = [{"speaker": "Architect", "type": "decision", "text": "Cache every read for five minutes."}]
    text = ask("contribution", round=1, speaker=SPEAKERS[2], persona={"key": "pragmatist", "name": "Pragmatist"},
               question="Pragmatist, what is the case against it?", lastSpeakerId=11, points=points).text
    assert "Cache every read for five minutes." in text and "Architect" in text
    assert any(m["type"] == "concern" for m in parse_markers(text))


def test_synthesis_is_extractive_and_persona_shaped():
    points = [
        {"speaker": "Architect", "type": "decision", "text": "Cache reads for five minutes."},
        {"speaker": "Security", "type": "concern", "text": "Cached entries could leak data across tenants."},
        {"speaker": "Security", "type": "question", "text": "Who may read the cache?"},
        {"speaker": "Pragmatist", "type": "todo", "text": "Measure the hit rate in staging."},
        {"speaker": "Architect", "type": "vote", "text": "READY", "value": "READY"},
        {"speaker": "Security", "type": "vote", "text": "CHANGES", "value": "CHANGES"},
    ]
    recent = [{"seatId": 11, "speaker": "Architect", "role": "participant", "content": "A short cache keeps Postgres calm under load.", "round": 1}]
    meta = {"round": 3, "reason": "max_rounds", "points": points, "recent": recent, "mustSynthesize": True}
    texts = {}
    for style in ("examiner", "closer", "equalizer", "impartial-chair"):
        text = ask("synthesis", persona={"key": style, "name": style}, **meta).text
        assert text.startswith(LABEL + "\n")
        for heading in ("## Key points", "## Agreements", "## Disagreements", "## Decisions", "## Open questions", "## Recommendations"):
            assert heading in text, (style, heading)
        for needle in ("Cache reads for five minutes.", "Who may read the cache?", "Measure the hit rate in staging.", "Architect", "Security"):
            assert needle in text
        assert "round limit" in text
        texts[style] = text
    assert "## Verdict" in texts["examiner"] and "critical" in texts["examiner"]
    assert "## Decision\n" in texts["closer"]
    assert "## Every voice" in texts["equalizer"] and "Pragmatist" in texts["equalizer"]
    assert len(set(texts.values())) == 4


def test_other_purposes_are_labelled_summaries():
    text = ask("narrative", points=[{"speaker": "Security", "type": "decision", "text": "Encrypt the cache."}]).text
    assert text.startswith(LABEL + "\n") and "Encrypt the cache." in text


def test_tolerates_sparse_meta():
    for purpose in ("opening", "evaluation", "contribution", "synthesis"):
        response = PROVIDER.complete(LLMRequest(system="", messages=[], purpose=purpose, meta={}))
        assert response.text


@pytest.mark.parametrize("style", FACILITATOR_STYLES)
@pytest.mark.parametrize("fmt", ["brainstorm", "review", "deliberation"])
def test_whole_rooms_run_to_a_synthesis(style, fmt):
    order, synthesis = run_room(style, fmt)
    assert 1 <= len(order) <= 6
    assert all(a != b for a, b in zip(order, order[1:]))
    assert synthesis.startswith(LABEL)


def test_styles_stop_at_different_times():
    lengths = {style: len(run_room(style, max_rounds=12)[0]) for style in ("closer", "examiner", "impartial-chair")}
    assert lengths["closer"] < lengths["impartial-chair"]
    assert lengths["examiner"] <= lengths["impartial-chair"]
