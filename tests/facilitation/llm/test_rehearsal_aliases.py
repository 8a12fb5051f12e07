"""The offline rehearsal model's text keeps an @mention as written, whatever the alias starts with: an alias is a
slug, so ``@3d-architect``, ``@_bot`` and ``@-x`` are aliases as much as ``@architect``."""
import json

import pytest

from facilitation.llm.rehearsal import workspace


def _narrative_prompt(topic: str) -> str:
    """A workspace moderator's prompt, as facilitation.workspace.prompts writes it, with no observations yet."""
    sections = [("Topic", topic), ("Observations of round 1", "(none)"), ("Open blockers", "(none)"), ("Tasks", "(none)")]
    return "# Workspace: Scene - narrative of round 1\n\n" + "\n\n".join(
        f"## {title}\n<data>\n{body}\n</data>" for title, body in sections) + "\n\n## What to do\nWrite the narrative."


@pytest.mark.parametrize("alias", ["3d-architect", "_render_bot", "-pipeline-x", "architect-3d"])
def test_a_workspace_narrative_names_a_mentioned_agent_as_the_topic_wrote_it(alias):
    answer = json.loads(workspace.answer("", _narrative_prompt(f"Hand @{alias} the farm")))
    assert answer["summary"] == f"Round 1 brought no observations on @{alias}."


def test_topic_keywords_keep_mentions_and_words_that_start_with_a_digit_whole():
    words = workspace.keywords("Ask @3d-architect about the 3d-pipeline; mail ana@example.com", n=10)
    assert "@3d-architect" in words and "3d-pipeline" in words
    assert not any(w in words for w in ("d-architect", "d-pipeline", "@example"))


@pytest.mark.parametrize("alias", ["_bot", "ana_b", "3d-architect", "-x"])
def test_a_turns_gist_and_ideas_keep_an_alias_as_written(alias):
    from facilitation.llm.rehearsal.text import gist_of, ideas_in

    turn = f"We should ask @{alias} to check the **render** cache first.\n\n- Ask @{alias} about _warm_ caches."
    # the gist names the agent without the @ (a quote is no new mention); its other marks go
    assert gist_of(turn) == f"We should ask {alias} to check the render cache first."
    assert ideas_in(turn) == [f"Ask @{alias} about warm caches."]
