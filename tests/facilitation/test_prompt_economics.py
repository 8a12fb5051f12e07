"""The economics benchmark's discussion as a test: a long discussion on the Anthropic wire format stays cheap.

``benchmarks/economics.py`` runs a 20-round discussion with four participants through the engine
against the loopback Anthropic fake (which applies the prompt-caching rules) and computes the
three figures of the prompt layout; they are token counts, not timings, so they are exact.
"""
import importlib.util
from pathlib import Path

import pytest

from facilitation.presets.seed import seed_presets
from tests.factories import make_user

pytestmark = pytest.mark.django_db

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "economics.py"


@pytest.fixture(scope="module")
def economics():
    spec = importlib.util.spec_from_file_location("convene_benchmark_economics", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def run(economics, settings):
    settings.CONVENE = {**settings.CONVENE, "FALLBACK_PROVIDERS": []}
    seed_presets()
    return economics.run_room("impartial-chair", 20, make_user())


def test_a_long_discussion_meets_the_three_cost_targets_and_reads_the_cache_on_every_later_call(economics, run):
    figures = run["figures"]
    assert figures["calls"] == 42  # the opening, 20 turns, 20 evaluations and the synthesis
    assert figures["cost_ratio"] <= economics.TARGETS["cost_ratio"]
    assert figures["cache_read_share"] >= economics.TARGETS["cache_read_share"]
    assert figures["late_early_ratio"] <= economics.TARGETS["late_early_ratio"]
    # what the room's invocations record is what the API reported
    assert run["recorded"] == {"cache_read": figures["cache_read"], "cache_write": figures["cache_write"]}
    calls = run["calls"]
    decisions = [c for c in calls if c["kind"] == "decision"]
    turns = [c for c in calls if c["kind"] == "turn"]
    assert decisions[0]["read"] == 0 and decisions[0]["write"] > 1024  # the facilitator's prefix is written once
    assert all(c["read"] > 1024 for c in decisions[1:])
    assert all(c["read"] > 1024 for c in turns[4:])  # each participant reads its own prefix from its second turn on
    assert all(c["prompt"] < c["replay"] for c in calls[12:])  # summaries replace old turns


def test_the_figures_count_against_a_replay_of_the_whole_transcript(economics):
    calls = [{"kind": "turn", "round": r, "uncached": 100, "write": 0, "read": 900, "prompt": 1000, "replay": 2000} for r in range(1, 21)]
    figures = economics.figures(calls, 20)
    assert figures["cost_ratio"] == pytest.approx((100 + 90) / 2000)
    assert figures["cache_read_share"] == pytest.approx(0.9)
    assert figures["late_early_ratio"] == pytest.approx(1.0)
    calls[-1] = {**calls[-1], "prompt": 1500}
    assert economics.figures(calls, 20)["late_early_ratio"] == pytest.approx(1.1)
