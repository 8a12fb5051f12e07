import pytest

from facilitation.presets import BUNDLED_PARTICIPANTS, FACILITATOR_PRESETS, GENERIC_FACILITATOR
from facilitation.presets.seed import seed_presets
from rooms.models import Agent, Persona, Role

FACILITATOR_NAMES = {
    "The Socratic", "The Contrarian", "The Bridge-Builder", "The Spark",
    "The Examiner", "The Impartial Chair", "The Closer", "The Equalizer",
}
TIERS = {"socratic": "sonnet", "contrarian": "opus", "bridge-builder": "sonnet", "spark": "sonnet",
         "examiner": "opus", "impartial-chair": "sonnet", "closer": "haiku", "equalizer": "sonnet"}


def test_preset_data_is_complete_and_distinct():
    assert {p["name"] for p in FACILITATOR_PRESETS} == FACILITATOR_NAMES
    assert {p["key"]: p["model_tier"] for p in FACILITATOR_PRESETS} == TIERS
    prompts = [p["prompt"] for p in FACILITATOR_PRESETS]
    assert len(set(prompts)) == 8
    for preset in FACILITATOR_PRESETS:
        words = len(preset["prompt"].split())
        assert 150 <= words <= 300, (preset["key"], words)
        assert set(preset["best_for"]) <= {"brainstorm", "review", "deliberation"} and preset["best_for"]
        # each prompt covers speaker choice, stopping and the synthesis
        assert "next speaker" in preset["prompt"].lower()
        assert "synthesize" in preset["prompt"].lower()
        assert "synthesis" in preset["prompt"].lower()
    assert GENERIC_FACILITATOR["key"] == "generic-facilitator"


@pytest.mark.django_db
def test_seed_is_idempotent():
    first = seed_presets()
    rows = (Role.objects.count(), Persona.objects.count(), Agent.objects.count())
    second = seed_presets()
    assert first == second
    assert (Role.objects.count(), Persona.objects.count(), Agent.objects.count()) == rows
    assert first["facilitators"] == 8 and first["participants"] == 7


@pytest.mark.django_db
def test_eight_facilitators_with_distinct_prompts():
    seed_presets()
    facilitators = Agent.objects.filter(is_builtin=True, is_facilitator=True)
    assert {a.name for a in facilitators} == FACILITATOR_NAMES
    assert len({a.persona.prompt for a in facilitators}) == 8
    for agent in facilitators:
        assert agent.persona.is_facilitator and agent.persona.is_builtin
        assert agent.model == ""
        assert agent.persona.model_tier == TIERS[agent.persona.key]
        assert agent.persona.best_for
    generic = Persona.objects.get(key="generic-facilitator")
    assert generic.is_facilitator and generic.is_builtin


@pytest.mark.django_db
def test_seat_roles_and_participants():
    seed_presets()
    for key in ("participant", "observer", "devil_advocate"):
        role = Role.objects.get(key=key)
        assert role.is_builtin and role.base_prompt
    aliases = {"architect", "security", "pragmatist", "perfectionist", "designer", "researcher", "visualizer"}
    participants = Agent.objects.filter(is_builtin=True, is_facilitator=False)
    assert {a.alias for a in participants} == aliases
    for agent in participants:
        assert agent.role is not None and agent.role.is_builtin
        assert agent.persona is not None and not agent.persona.is_facilitator
        assert agent.expertise and agent.concerns
        assert "VOTE:" in agent.persona.prompt and "Q:" in agent.persona.prompt
    assert Agent.objects.get(alias="architect").name == "Architect"
    assert len({p["prompt"] for p in BUNDLED_PARTICIPANTS}) == 7


@pytest.mark.django_db
def test_seed_restores_edited_builtin_text():
    seed_presets()
    Persona.objects.filter(key="closer").update(prompt="tampered")
    seed_presets()
    assert Persona.objects.get(key="closer").prompt != "tampered"
    assert Agent.objects.filter(alias="closer", is_builtin=True).count() == 1


@pytest.mark.django_db
def test_management_command_prints_counts(capsys):
    from django.core.management import call_command

    call_command("seed_presets")
    out = capsys.readouterr().out
    assert "facilitators: 8" in out and "participants: 7" in out
