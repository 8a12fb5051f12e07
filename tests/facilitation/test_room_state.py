"""The room state replayed from turns and the facilitator's questions (pure, no database)."""
from facilitation.deliberation import parse_markers
from facilitation.deliberation.state import RoomState, SeatRef, replay, significant_words, takes_up

SEATS = [
    SeatRef(1, "Architect", "participant", "architect"),
    SeatRef(2, "Security", "participant", "security"),
    SeatRef(3, "Pragmatist", "devil_advocate", "pragmatist"),
    SeatRef(4, "Watcher", "observer", "watcher"),
]


def room(*turns):
    """Replay (seat id, text[, question asked first]) tuples."""
    state = RoomState(SEATS)
    seq = 0
    for n, turn in enumerate(turns, start=1):
        seat_id, text, *question = turn
        if question:
            seq += 1
            state.record_question(seq, n - 1, seat_id, question[0])
        seq += 1
        state.record_turn(seq, n, seat_id, text, parse_markers(text))
    return state


def test_airtime_counts_turns_words_and_who_has_not_spoken():
    state = room((1, "One two three four."), (2, "Five six."), (1, "Seven."))
    assert (state.turns_of(1), state.words_of(1)) == (2, 5)
    assert (state.turns_of(2), state.words_of(2)) == (1, 2)
    assert [s.name for s in state.unheard] == ["Pragmatist"]  # observers are not expected to speak
    assert state.last_seat_id == 1 and state.turns == 3


def test_a_timed_out_turn_takes_the_floor_but_says_nothing():
    state = RoomState(SEATS)
    state.record_question(1, 0, 2, "Security, what do you see?")
    state.record_turn(2, 1, 2, "", [], status="timed_out")
    assert state.turns_of(2) == 1 and state.words_of(2) == 0
    assert state.last_asked.answered is False and state.last_asked.turn_status == "timed_out"


def test_latest_vote_per_voter_and_history():
    state = room((1, "VOTE: CHANGES"), (2, "VOTE: READY"), (1, "VOTE: READY"))
    assert {sid: v.value for sid, v in state.votes.items()} == {1: "READY", 2: "READY"}
    assert [v.value for v in state.vote_history] == ["CHANGES", "READY", "READY"]
    assert state.tally() == {"ready": 2, "changes": 0, "reject": 0}


def test_items_get_stable_ids_and_raisers():
    state = room((1, "Q: How do we invalidate cached sessions?\nCONCERN: Stale reads after writes\nDECISION: Cache reads for five minutes\nTODO: Measure the hit rate"))
    assert [(i.id, i.kind, i.speaker) for i in state.items] == [
        ("Q1", "question", "Architect"), ("C1", "concern", "Architect"), ("D1", "decision", "Architect"), ("T1", "todo", "Architect")]
    assert state.open_questions[0].text == "How do we invalidate cached sessions?"


def test_a_question_is_open_until_another_seat_takes_it_up():
    state = room((1, "Q: How do we invalidate cached sessions after a password change?"),
                 (1, "More from me about invalidate cached sessions after a password change."))
    assert len(state.open_questions) == 1  # the asker cannot answer their own question
    state = room((1, "Q: How do we invalidate cached sessions after a password change?"),
                 (2, "Cached sessions are invalidated by bumping a version on password change."))
    assert state.open_questions == [] and state.items[0].status == "answered" and state.items[0].closed_by == "Security"


def test_a_question_put_to_someone_by_the_facilitator_is_answered_by_their_turn():
    state = room((1, "Q: Which regions must hold replicas of the data?"),
                 (2, "From a security angle we need residency rules.", "Security, Architect asks which regions must hold replicas of the data: what is your view?"))
    assert state.open_questions == []
    unrelated = room((1, "Q: Which regions must hold replicas of the data?"),
                     (2, "From a security angle we need residency rules.", "Security, what about authentication?"))
    assert len(unrelated.open_questions) == 1


def test_concerns_are_addressed_by_others_or_accepted_by_their_raiser():
    state = room((2, "CONCERN: Authorisation checks are missing on the export endpoint"),
                 (1, "We add authorisation checks to the export endpoint in the first slice."))
    assert state.open_concerns == [] and state.items[0].status == "addressed"
    accepted = room((2, "CONCERN: Authorisation checks are missing on the export endpoint"), (3, "Something else entirely."),
                    (2, "Fine by me now.\nVOTE: READY"))
    assert accepted.items[0].status == "accepted"
    still = room((2, "CONCERN: Authorisation checks are missing on the export endpoint"), (3, "Something else entirely."))
    assert [c.id for c in still.open_concerns] == ["C1"]


def test_a_reject_stands_until_answered_or_changed():
    state = room((2, "CONCERN: no threat model\nVOTE: REJECT"), (1, "Unrelated remark."))
    assert [v.speaker for v in state.standing_rejects] == ["Security"]
    state.record_question(10, 2, 3, "Pragmatist, Security rejects the plan: what would you change?")
    state.record_turn(11, 3, 3, "We could write the threat model first.", [])
    assert state.standing_rejects == []
    changed = room((2, "VOTE: REJECT"), (2, "VOTE: CHANGES"))
    assert changed.standing_rejects == []
    by_alias = room((2, "VOTE: REJECT"), (1, "@security has a point, but the risk is small."))
    assert by_alias.standing_rejects == []


def test_todo_assigned_done():
    state = room((1, "TODO: Write the threat model for the export flow"),
                 (2, "ASSIGNED: @security writes the threat model for the export flow"),
                 (2, "DONE: threat model for the export flow written"))
    (todo,) = state.todos
    assert (todo.status, todo.owner, todo.closed_by) == ("done", "Security", "Security")
    fresh = room((1, "ASSIGNED: @pragmatist drafts the rollout plan"))
    assert [(t.status, t.owner) for t in fresh.todos] == [("assigned", "Pragmatist")]


def test_mentions_of_the_latest_turn_resolve_to_speaking_seats():
    state = room((1, "@Security what do you think? And @watcher, and @nobody, and @architect (myself)."))
    assert state.mentions == [2]
    state.record_turn(99, 2, 2, "No mentions here.", [])
    assert state.mentions == []


def test_every_alias_an_agent_can_have_is_mentionable():
    """Aliases are slugs: a digit, ``-`` or ``_`` may start one, ``-`` or ``_`` end one; ``@2`` names the seat
    whose alias is 2, never seat id 2; a dash or underscore after an alias that does not have it is punctuation."""
    seats = [SeatRef(1, "Lead", "participant", "lead"), SeatRef(2, "Numbered", "participant", "7"),
             SeatRef(7, "Digits", "participant", "2"), SeatRef(8, "Artist", "participant", "3d-artist"),
             SeatRef(9, "Under", "participant", "_bot"), SeatRef(10, "Trail", "participant", "bot_"),
             SeatRef(11, "Dash", "participant", "-x")]
    cases = {"@2 please": [7], "@7 please": [2], "@3D-Artist, your view?": [8], "@_bot and @bot_ and @-x": [9, 10, 11],
             "ask @lead- he knows": [1], "@lead__, again": [1]}
    for text, wanted in cases.items():
        state = RoomState(seats)
        state.record_turn(1, 1, None, text, parse_markers(text))
        assert state.mentions == wanted, text
    state = RoomState(seats)
    state.record_turn(1, 1, 1, "TODO: render the scene\nASSIGNED: @3d-artist renders the scene", parse_markers(
        "TODO: render the scene\nASSIGNED: @3d-artist renders the scene"))
    assert [(t.status, t.owner) for t in state.todos] == [("assigned", "Artist")]


def test_a_mention_names_a_seat_by_alias_or_name_in_any_casing_never_by_id():
    state = RoomState(SEATS)
    for target in ("security", "SECURITY", "Security", "@security", "@Security", "security-"):
        assert state.mentioned_seat(target).id == 2, target
    for target in (None, "", "@", "nobody", "2", 2):
        assert state.mentioned_seat(target) is None, target


def test_facilitator_question_answered_flag():
    state = room((1, "Cache reads.", "Architect, what would you cache?"))
    assert state.last_asked.answered is True and state.last_asked.seat_id == 1
    state.record_question(5, 1, 2, "Security, is that safe?")
    assert state.last_asked.answered is None


def test_repeated_question_is_one_item_raised_twice():
    state = room((1, "Q: What is the rollback plan?"), (3, "Q: What is the rollback plan?"))
    assert len(state.open_questions) == 1 and state.open_questions[0].also_raised_by == ["Pragmatist"]


def test_phases_reset_votes_but_keep_history():
    state = room((1, "VOTE: REJECT"))
    state.start_phase("consensus_vote")
    assert state.votes == {} and len(state.vote_history) == 1 and state.phase == "consensus_vote"


def test_replay_from_plain_records():
    records = [
        {"kind": "decision", "seq": 1, "round": 0, "seatId": 2, "question": "Security, your view?"},
        {"kind": "contribution", "seq": 2, "round": 1, "seatId": 2, "content": "CONCERN: leaks", "markers": [{"type": "concern", "text": "leaks"}]},
        {"kind": "synthesis", "seq": 3},
    ]
    state = replay(SEATS, records)
    assert state.turns == 1 and [c.text for c in state.open_concerns] == ["leaks"] and state.last_asked.answered


def test_word_overlap_helpers():
    assert significant_words("The caches ARE stale, again!") == {"cache", "stale"}
    assert takes_up("we will cache the sessions", "Should we cache sessions?", 0.6)
    assert not takes_up("unrelated", "Should we cache sessions?", 0.6)
    assert takes_up("so, what next? I think", "what next?", 0.6)  # short items need their whole text
