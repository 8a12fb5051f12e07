"""Write the built-in presets to the database, idempotently.

Roles and personas are keyed by ``key``, agents by ``alias`` (among built-ins).
Running it again updates the built-in rows in place and never duplicates them;
usage counters and budgets an operator set on the agents are left alone.
"""
from django.db import transaction

from facilitation.presets.facilitators import FACILITATOR_PRESETS, GENERIC_FACILITATOR
from facilitation.presets.participants import BUNDLED_PARTICIPANTS, FACILITATOR_ROLE, FUNCTION_ROLES, SEAT_ROLES
from rooms.models import Agent, Persona, Role


def _role(data: dict) -> Role:
    role, _ = Role.objects.update_or_create(
        key=data["key"], is_builtin=True,
        defaults={"name": data["name"], "function": data["function"], "base_prompt": data["base_prompt"], "is_builtin": True},
    )
    return role


def _persona(data: dict, *, key: str, is_facilitator: bool) -> Persona:
    persona, _ = Persona.objects.update_or_create(
        key=key, is_builtin=True,
        defaults={
            "name": data["name"], "description": data["description"], "style": data.get("style", ""),
            "prompt": data["prompt"], "is_facilitator": is_facilitator, "philosophy": data.get("philosophy", ""),
            "best_for": list(data.get("best_for", [])), "model_tier": data.get("model_tier", ""), "is_builtin": True,
        },
    )
    return persona


def _agent(*, alias: str, name: str, description: str, role: Role, persona: Persona, is_facilitator: bool,
           expertise: list | None = None, concerns: list | None = None) -> Agent:
    agent, _ = Agent.objects.update_or_create(
        alias=alias, is_builtin=True,
        defaults={
            "name": name, "description": description, "role": role, "persona": persona,
            "is_facilitator": is_facilitator, "expertise": list(expertise or []), "concerns": list(concerns or []),
        },
    )
    return agent


@transaction.atomic
def seed_presets() -> dict:
    """Create or update every built-in role, persona and agent; return how many of each exist."""
    roles = [_role(r) for r in (*SEAT_ROLES, FACILITATOR_ROLE, *FUNCTION_ROLES)]
    by_key = {r.key: r for r in roles}

    personas = [_persona(GENERIC_FACILITATOR, key=GENERIC_FACILITATOR["key"], is_facilitator=True)]
    facilitators = []
    for preset in FACILITATOR_PRESETS:
        persona = _persona(preset, key=preset["key"], is_facilitator=True)
        personas.append(persona)
        facilitators.append(_agent(
            alias=preset["key"], name=preset["name"], description=preset["description"],
            role=by_key[FACILITATOR_ROLE["key"]], persona=persona, is_facilitator=True,
        ))

    participants = []
    for spec in BUNDLED_PARTICIPANTS:
        persona = _persona(spec, key=spec["alias"], is_facilitator=False)
        personas.append(persona)
        participants.append(_agent(
            alias=spec["alias"], name=spec["name"], description=spec["description"], role=by_key[spec["role"]],
            persona=persona, is_facilitator=False, expertise=spec["expertise"], concerns=spec["concerns"],
        ))

    return {"roles": len(roles), "personas": len(personas), "facilitators": len(facilitators), "participants": len(participants)}


def ensure_presets() -> bool:
    """Seed the built-in presets when there are none yet (a fresh database); True when it did."""
    if Agent.objects.filter(is_builtin=True).exists():
        return False
    seed_presets()
    return True
