from facilitation.deliberation import parse_markers


def kinds(text):
    return [(m["type"], m["text"]) for m in parse_markers(text)]


def test_line_start_markers_in_order():
    text = "Intro line\nQ: Which cache?\nTODO: write the spec\nDECISION: use Postgres\nASSIGNED: Rob drafts it\nDONE: spec reviewed\nCONCERN: no auth yet\nVOTE: READY"
    assert kinds(text) == [
        ("question", "Which cache?"), ("todo", "write the spec"), ("decision", "use Postgres"),
        ("assigned", "Rob drafts it"), ("done", "spec reviewed"), ("concern", "no auth yet"), ("vote", "READY"),
    ]


def test_vote_value_is_case_insensitive_and_normalised():
    items = parse_markers("vote: changes - needs tests\nVOTE: **reject**\nVOTE: Ready")
    assert [m["value"] for m in items] == ["CHANGES", "REJECT", "READY"]
    assert items[0]["text"] == "CHANGES - needs tests"


def test_invalid_vote_is_ignored():
    assert parse_markers("VOTE: maybe later") == []


def test_bullets_and_bold_markers():
    text = "- Q: bulleted?\n* CONCERN: starred\n**Q:** bold inside\n**DECISION**: bold before colon\n  - **TODO:** nested bold\n1. Q: numbered"
    assert kinds(text) == [
        ("question", "bulleted?"), ("concern", "starred"), ("question", "bold inside"),
        ("decision", "bold before colon"), ("todo", "nested bold"), ("question", "numbered"),
    ]


def test_markers_only_at_line_start():
    assert parse_markers("This is not a Q: marker, nor is FAQ: this") == []


def test_mentions_anywhere_in_order_with_markers():
    items = parse_markers("@architect, what do you think?\nASSIGNED: @rob writes it, with @security-team")
    assert [(m["type"], m["text"]) for m in items] == [
        ("mention", "architect"), ("assigned", "@rob writes it, with @security-team"),
        ("mention", "rob"), ("mention", "security-team"),
    ]
    # A mention names whom it addresses in ``target`` (the shape CONTRACT gives turn markers).
    assert items[0] == {"type": "mention", "text": "architect", "target": "architect", "line": 0}
    assert all("alias" not in m for m in items)


def test_mentions_read_every_alias_an_agent_can_have():
    """An alias is a slug: a digit, ``-`` or ``_`` may start it, ``-`` or ``_`` end it (kept as written)."""
    text = "@42 first, then @3d-artist, @_bot, @bot_ and @-x; @2nd-pass."
    assert [m["target"] for m in parse_markers(text)] == ["42", "3d-artist", "_bot", "bot_", "-x", "2nd-pass"]
    # punctuation alone is no mention; addresses and domains stay text
    assert parse_markers("@- or @__ or @. here; mail ops@1and1.com or see @10.0.0.1") == []


def test_emails_code_and_fences_are_not_markers():
    text = "Mail bob@example.com please\nUse `@decorator` here\n```\nQ: inside code\n@hidden\n```\nQ: outside"
    assert kinds(text) == [("question", "outside")]


def test_empty_input_and_empty_markers():
    assert parse_markers("") == []
    assert parse_markers(None) == []
    assert parse_markers("Q:\nTODO:   ") == []
