"""Small builders for rows the tests need (no preset content involved)."""
import itertools

from django.contrib.auth import get_user_model

from rooms.models import Agent, Persona, Role


def make_user(username="alice", **extra):
    return get_user_model().objects.create_user(username=username, password="pw-123456789", **extra)


def make_token(user, **extra) -> str:
    """A live API token for ``user``; returns its key."""
    from rooms.actions.tokens import do_create_token

    return do_create_token(user, **extra)[1]


def make_facilitator(name="Chair", key=None, **extra):
    persona = Persona.objects.create(key=key or name.lower().replace(" ", "-"), name=name, prompt=f"You are {name}, a fair facilitator.",
                                     is_facilitator=True, is_builtin=True)
    return Agent.objects.create(name=name, persona=persona, is_facilitator=True, is_builtin=True, **extra)


def make_participant(name, alias=None, **extra):
    alias = alias or name.lower()
    persona = Persona.objects.create(key=f"p-{alias}", name=name, prompt=f"You are {name}.", is_builtin=True)
    role, _ = Role.objects.get_or_create(key=f"r-{alias}", defaults={"name": f"{name} role", "base_prompt": f"Speak as the {name}.", "is_builtin": True})
    return Agent.objects.create(name=name, alias=alias, persona=persona, role=role, is_builtin=True, **extra)


_unique = itertools.count(1)


def make_discussion(owner, *, roles=("participant", "participant"), max_rounds=3, format="deliberation", **extra):
    from rooms.actions.rooms import do_create_room

    n = next(_unique)
    fac = make_facilitator(key=f"fac-{owner.username}-{n}")
    people = [make_participant(f"Agent{i}{owner.username}", alias=f"a{i}-{owner.username}-{n}") for i in range(len(roles))]
    return do_create_room(owner, name="Test discussion", topic="Should we cache?", format=format, moderator_id=fac.pk,
                          max_rounds=max_rounds, participants=[{"agent_id": a.pk, "role": r} for a, r in zip(people, roles)], **extra)
