"""``parse`` takes only values ``render`` could have written, and names the line of one it could not."""
import json

import pytest

from facilitation.deliberation.discussion_file import DiscussionFile, FileError, FileTurn, parse, render

HEADER = {"name": "Caching", "topic": "Should we cache the catalogue?", "format": "deliberation", "maxRounds": 2,
          "facilitator": "The Impartial Chair", "participants": [{"name": "Architect", "alias": "architect", "role": "participant"}],
          "status": "concluded", "conclusion": "Cache the catalogue."}
TEXT = render(DiscussionFile(header=HEADER, turns=[FileTurn(2, 1, "Architect", "participant", content="Cache reads.")]))
LINES = TEXT.split("\n")
HEADING = next(n for n, line in enumerate(LINES, start=1) if line.startswith("### Turn"))


def _line_of(key: str) -> int:
    return next(n for n, line in enumerate(LINES, start=1) if line.startswith(f"{key}: "))


def _refused(text: str) -> FileError:
    with pytest.raises(FileError) as caught:
        parse(text)
    return caught.value


@pytest.mark.parametrize("key, value", [
    ("status", '["concluded"]'), ("status", '{"a": 1}'), ("conclusion", '["x"]'), ("facilitator", "1"),
    ("phase", "[1]"), ("template", "true"), ("format", "{}"),
    ("participants", "1"), ("participants", "true"), ("participants", '"Architect"'), ("participants", "[null]"),
    ("participants", '[{"name": "Architect", "alias": {"a": 1}, "role": "participant"}]'),
    ("participants", '[{"name": 1.5}]'),
])
def test_a_header_value_of_the_wrong_type_is_refused_at_its_line(key, value):
    line = _line_of(key) if key in HEADER else 3
    text = TEXT.replace(LINES[line - 1], f"{key}: {value}") if key in HEADER else TEXT.replace(
        LINES[2], f"{LINES[2]}\n{key}: {value}")
    error = _refused(text)
    assert error.line == (line if key in HEADER else 4)
    assert key in error.reason


@pytest.mark.parametrize("value", ["1e400", "-1e400", "NaN", "Infinity", "9" * 5000])
def test_a_number_json_lacks_or_too_large_is_refused(value):
    error = _refused(TEXT.replace("maxRounds: 2", f"maxRounds: {value}"))
    assert error.line == _line_of("maxRounds") and "maxRounds" in error.reason


@pytest.mark.parametrize("change", [
    {"seq": -5}, {"seq": 0}, {"seq": 1.5}, {"seq": True}, {"seq": "2"}, {"round": -1}, {"round": 1.7}, {"round": None},
    {"speaker": None}, {"speaker": 7}, {"role": ["participant"]}, {"kind": 1}, {"author": {}}, {"status": False},
])
def test_turn_data_of_the_wrong_type_or_range_is_refused_at_its_heading(change):
    turn = {"author": "agent", "kind": "contribution", "role": "participant", "round": 1, "seq": 2, "speaker": "Architect",
            "status": "ok", **change}
    heading = LINES[HEADING - 1].split("<!-- convene:turn ")[0] + f"<!-- convene:turn {json.dumps(turn)} -->"
    error = _refused(TEXT.replace(LINES[HEADING - 1], heading))
    assert error.line == HEADING


@pytest.mark.parametrize("value", ["1e400", "NaN"])
def test_a_turn_number_json_lacks_is_refused(value):
    error = _refused(TEXT.replace('"seq": 2', f'"seq": {value}'))
    assert error.line == HEADING


def test_parse_records_the_lines_of_header_keys_and_turns():
    doc = parse(TEXT)
    assert doc.header_lines == {key: _line_of(key) for key in HEADER}
    assert [t.line for t in doc.turns] == [HEADING]
    assert render(doc) == TEXT
