"""The discussion file round-trips exactly, whatever the turns say, and malformed files name their line."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from facilitation.deliberation.discussion_file import DiscussionFile, FileError, FileTurn, parse, render

HEADER = {"name": "Caching", "topic": "Should we cache the catalogue?", "format": "deliberation", "template": "feature",
          "phase": "explore", "maxRounds": 6, "consensus": {"threshold": 0.67, "rejectBlocks": True, "humanRequired": False},
          "participants": [{"name": "Architect", "alias": "architect", "role": "participant"}]}

texty = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=200)
tricky = st.sampled_from(["### Turn 9 · round 1 · X (y)  <!-- convene:turn {\"seq\": 9} -->", "---", "\\---",
                          "<!-- convene discussion file v1 -->", "\\### a", "VOTE: READY", "", "@all please"])
content = st.lists(st.one_of(texty, tricky), max_size=6).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(content, st.sampled_from(["participant", "devil_advocate", "facilitator"]),
                          st.sampled_from(["contribution", "decision", "synthesis"])), max_size=6),
       st.text(min_size=1, max_size=40).filter(lambda s: s.strip()))
def test_export_import_export_is_identical(turns, name):
    doc = DiscussionFile(header={**HEADER, "name": name},
                         turns=[FileTurn(seq=i + 1, round=i // 2, speaker=f"Seat {i}", role=role, kind=kind, content=text)
                                for i, (text, role, kind) in enumerate(turns)])
    text = render(doc)
    again = parse(text)
    assert render(again) == text
    assert [t.content for t in again.turns] == [t.content for t in doc.turns]
    assert again.header == doc.header


def test_a_file_saved_with_a_byte_order_mark_or_windows_line_ends_reads_the_same():
    doc = DiscussionFile(header=HEADER, turns=[FileTurn(1, 1, "A", "participant", content="first line\n\nsecond line")])
    text = render(doc)
    for saved in ("\ufeff" + text, text.replace("\n", "\r\n"), "\ufeff" + text.replace("\n", "\r\n")):
        again = parse(saved)
        assert render(again) == text and again.turns[0].content == "first line\n\nsecond line"


@pytest.mark.parametrize("mutate, line", [
    (lambda t: t.replace("<!-- convene discussion file v1 -->", "hello"), 1),
    (lambda t: t.replace('topic: "Should', 'topic "Should'), 4),
    (lambda t: t.replace('maxRounds: 6', 'maxRounds: six'), 8),
    (lambda t: t.replace('phase: "explore"', 'colour: "blue"'), 7),
])
def test_a_malformed_header_names_its_line(mutate, line):
    text = render(DiscussionFile(header=HEADER, turns=[FileTurn(1, 1, "A", "participant", content="hi")]))
    with pytest.raises(FileError) as caught:
        parse(mutate(text))
    assert caught.value.line == line


def test_an_unclosed_header_and_out_of_order_turns_are_refused():
    with pytest.raises(FileError, match="not closed"):
        parse("<!-- convene discussion file v1 -->\n---\nname: \"x\"\n")
    text = render(DiscussionFile(header=HEADER, turns=[FileTurn(2, 1, "A", "participant", content="a"),
                                                      FileTurn(3, 1, "B", "participant", content="b")]))
    with pytest.raises(FileError, match="increasing seq"):
        parse(text.replace('"seq": 3', '"seq": 1'))


def test_a_rehearsal_turn_keeps_its_mark_and_other_turns_carry_none():
    doc = DiscussionFile(header=HEADER, turns=[FileTurn(1, 1, "A", "participant", content="offline", rehearsal=True),
                                               FileTurn(2, 1, "B", "participant", content="by a model")])
    text = render(doc)
    first, second = [line for line in text.split("\n") if line.startswith("### Turn")]
    assert "· A (participant) · offline rehearsal  <!--" in first and '"rehearsal": true' in first
    assert "rehearsal" not in second
    again = parse(text)
    assert [t.rehearsal for t in again.turns] == [True, False] and render(again) == text


def test_a_rehearsal_mark_that_is_not_true_or_false_is_refused():
    text = render(DiscussionFile(header=HEADER, turns=[FileTurn(1, 1, "A", "participant", rehearsal=True)]))
    with pytest.raises(FileError) as caught:
        parse(text.replace('"rehearsal": true', '"rehearsal": "yes"'))
    assert "rehearsal" in caught.value.reason and caught.value.line == text.split("\n").index(
        next(line for line in text.split("\n") if line.startswith("### Turn"))) + 1
