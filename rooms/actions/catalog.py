"""Creating, changing and deleting the catalog: roles, personas and agents (assistants).

Built-in presets are read-only here (``Forbidden``); custom rows belong to the user
who created them. Callers pass already-typed values (the API's input serializers
parse JSON); these functions apply the domain rules: required fields, unique keys,
references the user may use, and rows still in use (``StateConflict`` on delete).
"""
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, Q
from django.utils.text import slugify

from rooms.errors import Forbidden, StateConflict, ValidationFailed
from rooms.models import Agent, Persona, Role

ROLE_FIELDS = ("key", "name", "function", "base_prompt")
PERSONA_FIELDS = ("key", "name", "description", "style", "prompt", "is_facilitator", "philosophy", "best_for", "model_tier")
AGENT_FIELDS = ("name", "alias", "description", "role", "persona", "is_facilitator", "provider", "model",
                "expertise", "concerns", "budget_tokens", "budget_usd")

# Error keys use the API's camelCase names.
_CAMEL = {"base_prompt": "basePrompt", "is_facilitator": "isFacilitator", "best_for": "bestFor",
          "model_tier": "modelTier", "budget_tokens": "budgetTokens", "budget_usd": "budgetUsd",
          "role": "roleId", "persona": "personaId"}


def _key_of(field: str) -> str:
    return _CAMEL.get(field, field)


def usable_by(model, user):
    """Catalog rows a user may see and reference: built-ins, their own, everything for staff."""
    if user is not None and getattr(user, "is_staff", False):
        return model.objects.all()
    if user is None or not user.is_authenticated:
        return model.objects.filter(is_builtin=True)
    return model.objects.filter(Q(is_builtin=True) | Q(created_by=user))


def _require_custom(row, what: str) -> None:
    if row.is_builtin:
        raise Forbidden(f"Built-in {what}s cannot be changed or deleted.", code="builtin_readonly")


def _require_text(fields: dict, names: tuple[str, ...], errors: dict, *, creating: bool) -> None:
    for name in names:
        if name in fields or creating:
            value = fields.get(name)
            if not isinstance(value, str) or not value.strip():
                errors[_key_of(name)] = ["This field is required."]


def _unique_key(model, key: str, exclude_pk=None) -> bool:
    qs = model.objects.filter(key=key)
    if exclude_pk is not None:
        qs = qs.exclude(pk=exclude_pk)
    return not qs.exists()


def _fresh_key(model, name: str, prefix: str) -> str:
    base = (slugify(name) or prefix)[:48]
    key, n = base, 1
    while not _unique_key(model, key):
        n += 1
        key = f"{base}-{n}"
    return key


def _check_key(model, fields: dict, errors: dict, exclude_pk=None) -> None:
    key = fields.get("key")
    if key is None:
        return
    if not isinstance(key, str) or not key or slugify(key) != key.lower() or len(key) > 64:
        errors["key"] = ["Use letters, digits, hyphens and underscores (at most 64)."]
    elif not _unique_key(model, key, exclude_pk):
        errors["key"] = [f"The key {key!r} is already taken."]


def _apply(row, fields: dict, allowed: tuple[str, ...]) -> None:
    for name in allowed:
        if name in fields:
            value = fields[name]
            if isinstance(value, str) and name not in ("prompt", "base_prompt"):
                value = value.strip()
            setattr(row, name, value)


def _save(row) -> None:
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError as exc:  # a concurrent request took the same key
        raise ValidationFailed("The row conflicts with an existing one.", {"key": [str(exc)]}) from exc


def _delete(row, what: str) -> None:
    try:
        with transaction.atomic():
            row.delete()
    except ProtectedError as exc:
        raise StateConflict(f"This {what} is still in use and cannot be deleted.", {"usedBy": len(exc.protected_objects)},
                            code="in_use") from exc


# --- roles and personas: rows named by a unique key ---------------------------------

def _create_keyed(model, user, fields: dict, *, required: tuple[str, ...], allowed: tuple[str, ...], what: str):
    errors: dict = {}
    _require_text(fields, required, errors, creating=True)
    _check_key(model, fields, errors)
    if errors:
        raise ValidationFailed(f"The {what} is not valid.", errors)
    row = model(created_by=user, is_builtin=False)
    _apply(row, fields, allowed)
    if not fields.get("key"):
        row.key = _fresh_key(model, row.name, what)
    _save(row)
    return row


def _update_keyed(row, fields: dict, *, required: tuple[str, ...], allowed: tuple[str, ...], what: str):
    _require_custom(row, what)
    errors: dict = {}
    _require_text(fields, (*required, "key"), errors, creating=False)
    if "key" not in errors:
        _check_key(type(row), fields, errors, exclude_pk=row.pk)
    if errors:
        raise ValidationFailed(f"The {what} is not valid.", errors)
    _apply(row, fields, allowed)
    _save(row)
    return row


def do_create_role(user, **fields) -> Role:
    return _create_keyed(Role, user, fields, required=("name",), allowed=ROLE_FIELDS, what="role")


def do_update_role(role: Role, **fields) -> Role:
    return _update_keyed(role, fields, required=("name",), allowed=ROLE_FIELDS, what="role")


def do_delete_role(role: Role) -> None:
    _require_custom(role, "role")
    _delete(role, "role")


def do_create_persona(user, **fields) -> Persona:
    return _create_keyed(Persona, user, fields, required=("name", "prompt"), allowed=PERSONA_FIELDS, what="persona")


def do_update_persona(persona: Persona, **fields) -> Persona:
    return _update_keyed(persona, fields, required=("name", "prompt"), allowed=PERSONA_FIELDS, what="persona")


def do_delete_persona(persona: Persona) -> None:
    _require_custom(persona, "persona")
    _delete(persona, "persona")


# --- agents ------------------------------------------------------------------------

def _resolve_refs(user, fields: dict, errors: dict) -> dict:
    """Replace ``role``/``persona`` ids by rows the user may use."""
    resolved = dict(fields)
    for name, model in (("role", Role), ("persona", Persona)):
        if name not in fields:
            continue
        ref = fields[name]
        if ref is None:
            resolved[name] = None
            continue
        row = usable_by(model, user).filter(pk=ref).first() if isinstance(ref, int) and not isinstance(ref, bool) else None
        if row is None:
            errors[_key_of(name)] = [f"Unknown {name} {ref!r}."]
        else:
            resolved[name] = row
    return resolved


def _check_budgets(fields: dict, errors: dict) -> None:
    for name in ("budget_tokens", "budget_usd"):
        value = fields.get(name)
        if value is not None and value < 0:
            errors[_key_of(name)] = ["Must be zero or more."]


def do_create_agent(user, **fields) -> Agent:
    errors: dict = {}
    _require_text(fields, ("name",), errors, creating=True)
    _check_budgets(fields, errors)
    resolved = _resolve_refs(user, fields, errors)
    if errors:
        raise ValidationFailed("The agent is not valid.", errors)
    agent = Agent(created_by=user, is_builtin=False)
    _apply(agent, resolved, AGENT_FIELDS)
    if not agent.alias:
        agent.alias = slugify(agent.name)[:64]
    _save(agent)
    return agent


def do_update_agent(agent: Agent, user, **fields) -> Agent:
    _require_custom(agent, "agent")
    errors: dict = {}
    _require_text(fields, ("name",), errors, creating=False)
    _check_budgets(fields, errors)
    resolved = _resolve_refs(user, fields, errors)
    if errors:
        raise ValidationFailed("The agent is not valid.", errors)
    if "is_facilitator" in fields and not fields["is_facilitator"] and agent.moderated_rooms.exists():
        raise StateConflict("This agent facilitates discussions; it must stay a facilitator.", code="in_use")
    _apply(agent, resolved, AGENT_FIELDS)
    _save(agent)
    return agent


def do_delete_agent(agent: Agent) -> None:
    _require_custom(agent, "agent")
    _delete(agent, "agent")
