"""Creating, changing and deleting the catalog: roles, personas and agents (assistants).

Built-in presets are read-only here (``Forbidden``); custom rows belong to the user
who created them. Callers pass already-typed values (the API's input serializers
parse JSON); these functions apply the domain rules: required fields, unique keys and agent
aliases (per owner, and none a built-in has), references the user may use, and rows still in use
(``StateConflict`` on delete).
"""
import re

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, Q
from django.utils.text import slugify

from rooms import limits
from rooms.audit import audit
from rooms.errors import Forbidden, StateConflict, ValidationFailed
from rooms.models import Agent, Persona, Role
from rooms.queries import usable_by

ROLE_FIELDS = ("key", "name", "function", "base_prompt")
PERSONA_FIELDS = ("key", "name", "description", "style", "prompt", "is_facilitator", "philosophy", "best_for", "model_tier")
AGENT_FIELDS = ("name", "alias", "description", "role", "persona", "is_facilitator", "provider", "model",
                "expertise", "concerns", "budget_tokens", "budget_usd")

FIELDS = {Role: ROLE_FIELDS, Persona: PERSONA_FIELDS, Agent: AGENT_FIELDS}

def require_custom(row, what: str) -> None:
    """403 ``builtin_readonly`` for a built-in row: nobody changes or deletes one (staff neither)."""
    if row.is_builtin:
        raise Forbidden(f"Built-in {what}s cannot be changed or deleted.", code="builtin_readonly")


TEXT_LIMITS = {"prompt": ("prompt", limits.PROMPT), "base_prompt": ("basePrompt", limits.PROMPT)}


def _require_text(fields: dict, names: tuple[str, ...], errors: dict, *, creating: bool) -> None:
    errors.update(limits.too_long(fields, TEXT_LIMITS))
    for name in names:
        if name in fields or creating:
            value = fields.get(name)
            if not isinstance(value, str) or not value.strip():
                errors[name] = ["This field is required."]


def _unique_key(model, key: str, owner, exclude_pk=None) -> bool:
    """Keys are per owner: free unless a built-in or another row of the same owner has it."""
    qs = model.objects.filter(Q(is_builtin=True) | Q(is_builtin=False, created_by=owner), key=key)
    if exclude_pk is not None:
        qs = qs.exclude(pk=exclude_pk)
    return not qs.exists()


def _fresh_key(model, name: str, prefix: str, owner) -> str:
    base = (slugify(name) or prefix)[:48]
    key, n = base, 1
    while not _unique_key(model, key, owner):
        n += 1
        key = f"{base}-{n}"
    return key


def _check_key(model, fields: dict, errors: dict, owner, exclude_pk=None) -> None:
    key = fields.get("key")
    if key is None:
        return
    if not isinstance(key, str) or not key or slugify(key) != key.lower() or len(key) > 64:
        errors["key"] = ["Use letters, digits, hyphens and underscores (at most 64)."]
    elif not _unique_key(model, key, owner, exclude_pk):
        errors["key"] = [f"You already use the key {key!r} (or a built-in does)."]


def _apply(row, fields: dict, allowed: tuple[str, ...]) -> None:
    for name in allowed:
        if name in fields:
            value = fields[name]
            if isinstance(value, str) and name not in ("prompt", "base_prompt"):
                value = value.strip()
            setattr(row, name, value)


def _snapshot(row) -> dict:
    """What an audit row records of a catalog row."""
    return {"id": row.pk, **{name: getattr(row, name) for name in FIELDS[type(row)]}}


def _save(row, actor, what: str) -> None:
    """Save a new or changed row with its audit row (``catalog.<what>_create`` / ``_update``)."""
    creating = row.pk is None
    before = None if creating else _snapshot(type(row).objects.get(pk=row.pk))
    try:
        with transaction.atomic():
            row.save()
            audit(None, actor, f"catalog.{what}_{'create' if creating else 'update'}", before=before, after=_snapshot(row))
    except IntegrityError as exc:  # a concurrent request of the same owner took the same key
        raise ValidationFailed("The row conflicts with an existing one.", {"key": ["This key is already taken."]}) from exc


def _delete(row, what: str, actor) -> None:
    before = _snapshot(row)
    try:
        with transaction.atomic():
            row.delete()
            audit(None, actor, f"catalog.{what}_delete", before=before)
    except ProtectedError as exc:
        raise StateConflict(f"This {what} is still in use and cannot be deleted.", {"usedBy": len(exc.protected_objects)},
                            code="in_use") from exc


# --- roles and personas: rows named by a unique key ---------------------------------

def _create_keyed(model, user, fields: dict, *, required: tuple[str, ...], allowed: tuple[str, ...], what: str):
    errors: dict = {}
    _require_text(fields, required, errors, creating=True)
    _check_key(model, fields, errors, user)
    if errors:
        raise ValidationFailed(f"The {what} is not valid.", errors)
    row = model(created_by=user, is_builtin=False)
    _apply(row, fields, allowed)
    if not fields.get("key"):
        row.key = _fresh_key(model, row.name, what, user)
    _save(row, user, what)
    return row


def _update_keyed(row, fields: dict, actor, *, required: tuple[str, ...], allowed: tuple[str, ...], what: str):
    require_custom(row, what)
    errors: dict = {}
    _require_text(fields, (*required, "key"), errors, creating=False)
    if "key" not in errors:
        _check_key(type(row), fields, errors, row.created_by, exclude_pk=row.pk)
    if errors:
        raise ValidationFailed(f"The {what} is not valid.", errors)
    _apply(row, fields, allowed)
    _save(row, actor, what)
    return row


def do_create_role(user, **fields) -> Role:
    return _create_keyed(Role, user, fields, required=("name",), allowed=ROLE_FIELDS, what="role")


def do_update_role(role: Role, actor=None, **fields) -> Role:
    return _update_keyed(role, fields, actor, required=("name",), allowed=ROLE_FIELDS, what="role")


def do_delete_role(role: Role, actor=None) -> None:
    require_custom(role, "role")
    _delete(role, "role", actor)


def do_create_persona(user, **fields) -> Persona:
    return _create_keyed(Persona, user, fields, required=("name", "prompt"), allowed=PERSONA_FIELDS, what="persona")


def do_update_persona(persona: Persona, actor=None, **fields) -> Persona:
    return _update_keyed(persona, fields, actor, required=("name", "prompt"), allowed=PERSONA_FIELDS, what="persona")


def do_delete_persona(persona: Persona, actor=None) -> None:
    require_custom(persona, "persona")
    _delete(persona, "persona", actor)


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
            errors[name] = [f"Unknown {name} {ref!r}."]
        else:
            resolved[name] = row
    return resolved


def _check_budgets(fields: dict, errors: dict) -> None:
    for name in ("budget_tokens", "budget_usd"):
        value = fields.get(name)
        if value is not None and value < 0:
            errors[name] = ["Must be zero or more."]


# --- aliases: what @mentions, ``GET /api/agents?alias=`` and discussion files name an agent by ---------
# Like a key, an alias is the owner's own: no two of one owner's agents share one, and none takes a
# built-in's (compared without case, as @mentions are).

def _alias_holder(alias: str, owner, exclude_pk=None) -> Agent | None:
    """The built-in or the owner's agent that already has ``alias`` (built-ins first), or None."""
    qs = Agent.objects.filter(Q(is_builtin=True) | Q(is_builtin=False, created_by=owner), alias__iexact=alias)
    if exclude_pk is not None:
        qs = qs.exclude(pk=exclude_pk)
    return qs.order_by("-is_builtin", "id").first()


ALIAS_MAX_LENGTH = 64
#: An alias is a slug, as the API's input reads it: ASCII letters, digits, ``-`` and ``_`` (what @mentions read).
ALIAS_FORMAT = re.compile(r"^[-a-zA-Z0-9_]+\Z")
ALIAS_FORMAT_ERROR = "Use letters, digits, hyphens and underscores (at most 64)."


def alias_problem(alias: str, owner, current: Agent | None = None, *, builtin: bool = False,
                  asker=None) -> str | None:
    """Why ``alias`` cannot be the alias of an agent of ``owner`` (``builtin``: a built-in, which every owner
    sees), in words, or None. The one check of an alias given for an agent, by the API and the admin alike:
    its format, then that neither one of the owner's other agents nor a built-in has it (for a built-in: no
    other agent at all). ``current`` is the agent being changed, as it is stored: it does not stand in its own
    way, and an alias it already has (same owner) stays, so an older duplicate keeps its alias. An empty alias
    is not given but derived (``fresh_alias``). Call it under ``lock_aliases_of(owner)`` and save before the
    lock is released. ``asker``: who is told (the admin's staff member); None when the owner asks, as in the
    API. The owner's own agent is "Your agent" only to the owner."""
    if len(alias) > ALIAS_MAX_LENGTH or not ALIAS_FORMAT.match(alias):
        return ALIAS_FORMAT_ERROR
    owner_id = owner.pk if owner is not None else None
    if current is not None and current.pk is not None and current.alias.lower() == alias.lower() \
            and current.created_by_id == owner_id and current.is_builtin == builtin:
        return None  # unchanged (an older duplicate stays as it is)
    exclude = current.pk if current is not None else None
    if builtin:
        holder = Agent.objects.filter(alias__iexact=alias).exclude(pk=exclude).order_by("-is_builtin", "id").first()
    else:
        holder = _alias_holder(alias, owner, exclude_pk=exclude)
    if holder is None:
        return None
    # The alias as the holder has it, so the asker sees what clashed (``REV`` asked, ``rev`` taken).
    taken = f"the alias {holder.alias!r}" + (" (aliases are compared without case)" if holder.alias != alias else "")
    if holder.is_builtin:
        return f"The built-in agent {holder.name!r} uses {taken}; choose another."
    if holder.created_by_id == owner_id and not builtin and (asker is None or asker.pk == owner_id):
        return f"Your agent {holder.name!r} already uses {taken}; choose another."
    return f"The agent {holder.name!r} of {holder.created_by} already uses {taken}; choose another."


def _check_alias(fields: dict, errors: dict, owner, current: Agent | None = None) -> None:
    alias = fields.get("alias")
    if not isinstance(alias, str) or not alias.strip():
        return
    problem = alias_problem(alias.strip(), owner, current)
    if problem:
        errors["alias"] = [problem]


def _check_name(fields: dict, errors: dict, owner, current: Agent | None = None) -> None:
    """No two of one owner's agents share a name (compared without case), so people can tell them apart where
    an agent is picked by name; an older duplicate keeps its name until it is renamed."""
    name = fields.get("name")
    if not isinstance(name, str) or not name.strip() or "name" in errors:
        return
    name = name.strip()
    if current is not None and current.name.lower() == name.lower():
        return
    taken = Agent.objects.filter(is_builtin=False, created_by=owner, name__iexact=name)
    if current is not None:
        taken = taken.exclude(pk=current.pk)
    if taken.exists():
        errors["name"] = [f"You already have an agent named {name!r}; choose another name."]


FALLBACK_ALIAS = "agent"


def fresh_alias(name: str, owner, exclude_pk=None) -> str:
    """The alias derived from a name, numbered when the owner or a built-in already has it (``exclude_pk``: the
    agent whose alias is derived again, which does not stand in its own way). A name that leaves nothing to
    slugify (``日本語``, ``!!!``) gives ``agent``, numbered the same way: an alias is never empty, as an empty
    one could be neither @mentioned nor looked up, and would be shared by every such agent."""
    base = slugify(name)[:60] or FALLBACK_ALIAS
    alias, n = base, 1
    while _alias_holder(alias, owner, exclude_pk=exclude_pk) is not None:
        n += 1
        alias = f"{base}-{n}"
    return alias


def lock_aliases_of(owner) -> None:
    """Take the owner's alias lock until the transaction ends: their user row, locked.

    No constraint keeps aliases unique (agents created before the rule may share one, and keep it), so
    the check and the save must not interleave with another's: whoever takes an alias or a name of ``owner``
    (a new agent, a renamed one) holds this lock from the check to the commit, and a second request
    waits here, then sees the first one's alias (400 on an alias it asked for, the next number on one
    derived from the name). PostgreSQL: ``SELECT ... FOR UPDATE`` of that row. SQLite locks the whole
    database for a writing transaction (``BEGIN IMMEDIATE``), so it is serialized there already.
    """
    get_user_model().objects.select_for_update().filter(pk=owner.pk).values_list("pk", flat=True).first()


def do_create_agent(user, **fields) -> Agent:
    with transaction.atomic():
        lock_aliases_of(user)
        errors: dict = {}
        _require_text(fields, ("name",), errors, creating=True)
        _check_budgets(fields, errors)
        _check_alias(fields, errors, user)
        _check_name(fields, errors, user)
        resolved = _resolve_refs(user, fields, errors)
        if errors:
            raise ValidationFailed("The agent is not valid.", errors)
        agent = Agent(created_by=user, is_builtin=False)
        _apply(agent, resolved, AGENT_FIELDS)
        if not agent.alias:
            agent.alias = fresh_alias(agent.name, user)
        _save(agent, user, "agent")
    return agent


def do_update_agent(agent: Agent, user, **fields) -> Agent:
    require_custom(agent, "agent")
    with transaction.atomic():
        if "alias" in fields or "name" in fields:
            lock_aliases_of(agent.created_by)
        errors: dict = {}
        _require_text(fields, ("name",), errors, creating=False)
        _check_budgets(fields, errors)
        _check_alias(fields, errors, agent.created_by, current=agent)
        _check_name(fields, errors, agent.created_by, current=agent)
        resolved = _resolve_refs(user, fields, errors)
        if errors:
            raise ValidationFailed("The agent is not valid.", errors)
        if "is_facilitator" in fields and not fields["is_facilitator"] and agent.moderated_rooms.exists():
            raise StateConflict("This agent facilitates discussions; it must stay a facilitator.", code="in_use")
        _apply(agent, resolved, AGENT_FIELDS)
        if "alias" in fields and not agent.alias:  # an empty alias: derived again from the (new) name
            agent.alias = fresh_alias(agent.name, agent.created_by, exclude_pk=agent.pk)
        _save(agent, user, "agent")
    return agent


def do_delete_agent(agent: Agent, actor=None) -> None:
    require_custom(agent, "agent")
    _delete(agent, "agent", actor)
