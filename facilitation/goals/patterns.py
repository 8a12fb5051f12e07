"""The patterns a facilitation run can follow, and the machine check of "done". Pure: no Django.

A run is an instance of one validated pattern with filled slots, never a free-form graph:

``role_assignment``  slots ``{"roles": ["Lead", ...], "allowMultiple": false}``
                     artifact ``{"roles": {"Lead": "ana" | None, ...}}``;
                     done when every role holds exactly one person and, unless ``allowMultiple``,
                     nobody holds two roles.
``decision``         slots ``{"options": [...]?}``; artifact ``{"choice": str | None, "proposals": [...]}``;
                     done when one option is chosen (one of ``options`` when they are given).
``list``             slots ``{"min": N}``; artifact ``{"items": [{"text", "by"}]}``; done with at least N items.

Done is necessary, not sufficient: the people named in the artifact (or the initiator) confirm
explicitly, and a change to the result (``outcome``: the roles and who holds them, the chosen option,
the items) withdraws earlier confirmations. A decision's proposals are not its result: proposing
another option records it and asks for nothing again.
"""
import re
from dataclasses import dataclass, field

from facilitation.deliberation.names import NO_INVISIBLE, ONE_LINE, same_name, sayable, visible
from facilitation.wording import counted

PATTERNS = ("role_assignment", "decision", "list")
MAX_ROLES = 30
MAX_OPTIONS = 30
MAX_ITEMS = 200
MAX_NAME = 80


class PatternError(ValueError):
    """Slots that do not fit the pattern; ``details`` maps field -> messages (for a 400)."""

    def __init__(self, message: str, details: dict):
        super().__init__(message)
        self.details = details


def _names(value, field_name: str, limit: int, errors: dict, required: bool) -> list[str]:
    if value is None and not required:
        return []
    if not isinstance(value, list) or (required and not value):
        errors[field_name] = ["A non-empty list of names." if required else "A list of names."]
        return []
    out, seen = [], set()
    for i, v in enumerate(value):
        if not isinstance(v, str) or not same_name(v) or len(v.strip()) > MAX_NAME:  # a lone joiner is no name
            errors[f"{field_name}[{i}]"] = [f"A name of 1 to {MAX_NAME} characters."]
            continue
        if not sayable(v.strip()):  # a role with one could never be claimed: chat messages are read line by line
            errors[f"{field_name}[{i}]"] = [ONE_LINE[:-1] + " (as people write it in a chat message)."]
            continue
        if not visible(v.strip()):
            errors[f"{field_name}[{i}]"] = [NO_INVISIBLE]
            continue
        if same_name(v) in seen:
            errors[f"{field_name}[{i}]"] = ["Listed twice."]
            continue
        seen.add(same_name(v))
        out.append(v.strip())
    if len(out) > limit:
        errors[field_name] = [f"At most {limit}."]
    return out


def validate(pattern, slots) -> dict:
    """The slots, normalized, or ``PatternError`` naming what is wrong."""
    if pattern not in PATTERNS:
        raise PatternError("Unknown pattern.", {"pattern": [f"Must be one of {', '.join(PATTERNS)}."]})
    if slots is None:
        slots = {}
    if not isinstance(slots, dict):
        raise PatternError("slots must be an object.", {"slots": ["An object."]})
    errors: dict = {}
    if pattern == "role_assignment":
        roles = _names(slots.get("roles"), "slots.roles", MAX_ROLES, errors, required=True)
        allow = slots.get("allowMultiple", False)
        if not isinstance(allow, bool):
            errors["slots.allowMultiple"] = ["true or false."]
        normalized = {"roles": roles, "allowMultiple": bool(allow)}
    elif pattern == "decision":
        options = _names(slots.get("options"), "slots.options", MAX_OPTIONS, errors, required=False)
        if len(options) == 1:
            errors["slots.options"] = ["Give at least two options, or none to let the group propose them."]
        normalized = {"options": options}
    else:
        minimum = slots.get("min", 1)
        if isinstance(minimum, bool) or not isinstance(minimum, int) or not 1 <= minimum <= MAX_ITEMS:
            errors["slots.min"] = [f"A whole number from 1 to {MAX_ITEMS}."]
            minimum = 1
        normalized = {"min": minimum}
    if errors:
        raise PatternError(_said(errors), errors)
    return normalized


_ITEM_PATH = re.compile(r"^slots\.(roles|options)\[(\d+)\]$")
_WHOLE = {"slots.roles": "The roles are not valid.", "slots.options": "The options are not valid.",
          "slots.min": "The number of items is not valid.", "slots.allowMultiple": "allowMultiple must be true or false."}


def _said(errors: dict) -> str:
    """What is wrong with the slots, in words people read (``Role 3 is not valid.``); the fields' API paths, each
    with its own message, are the error's ``details``."""
    sentences, items = [], {}
    for path in errors:
        found = _ITEM_PATH.match(path)
        if found:
            items.setdefault(found.group(1), []).append(int(found.group(2)) + 1)
    for path, sentence in _WHOLE.items():
        key = path.removeprefix("slots.")
        if path in errors:
            sentences.append(sentence)
        elif items.get(key):
            numbers = [str(n) for n in sorted(items[key])]
            noun = key[:-1].capitalize()
            sentences.append(f"{noun} {numbers[0]} is not valid." if len(numbers) == 1 else
                             f"{noun}s {', '.join(numbers[:-1])} and {numbers[-1]} are not valid.")
    return " ".join(sentences) or "The slots do not fit the pattern."


def empty_artifact(pattern: str, slots: dict) -> dict:
    if pattern == "role_assignment":
        return {"roles": {role: None for role in slots["roles"]}}
    if pattern == "decision":
        return {"choice": None, "proposals": []}
    return {"items": []}


@dataclass(frozen=True)
class Check:
    done: bool
    missing: list = field(default_factory=list)


def check(pattern: str, slots: dict, artifact: dict) -> Check:
    """Is the artifact complete? ``missing`` says, in plain words, what is still needed."""
    missing: list[str] = []
    if pattern == "role_assignment":
        roles = artifact.get("roles", {})
        for role in slots["roles"]:
            if not roles.get(role):
                missing.append(f"someone for {role}")
        if not slots.get("allowMultiple"):
            held: dict[str, list[str]] = {}
            for role, person in roles.items():
                if person:
                    held.setdefault(person, []).append(role)
            for person, several in held.items():
                if len(several) > 1:
                    missing.append(f"{person} holds {len(several)} roles ({', '.join(several)}); one each")
    elif pattern == "decision":
        choice = artifact.get("choice")
        options = slots.get("options") or []
        if not choice:
            missing.append("a chosen option")
        elif options and choice not in options:
            missing.append(f"{choice!r} is not one of the options ({', '.join(options)})")
    else:
        have = len(artifact.get("items", []))
        if have < slots["min"]:
            missing.append(f"{counted(slots['min'] - have, 'more item')} ({have} of {slots['min']})")
    return Check(done=not missing, missing=missing)


def outcome(pattern: str, artifact: dict):
    """What people confirm: the part of the artifact that is the result. Confirmations hold while it stays
    the same (``rules.apply`` may change the rest, such as a decision's proposals)."""
    if pattern == "role_assignment":
        return dict(artifact.get("roles", {}))
    if pattern == "decision":
        return artifact.get("choice")
    return [(item.get("text"), item.get("by")) for item in artifact.get("items", [])]


def named_people(pattern: str, artifact: dict) -> list[str]:
    """Who the artifact names (they confirm it): role holders, or those who added items."""
    if pattern == "role_assignment":
        seen = []
        for person in artifact.get("roles", {}).values():
            if person and person not in seen:
                seen.append(person)
        return seen
    if pattern == "list":
        seen = []
        for item in artifact.get("items", []):
            if item.get("by") and item["by"] not in seen:
                seen.append(item["by"])
        return seen
    return []


def confirmers(pattern: str, artifact: dict, initiator: str | None, mode: str = "named") -> list[str]:
    """Who must confirm: everyone named in the artifact (``named``), or the initiator (``initiator``)."""
    if mode == "initiator" and initiator:
        return [initiator]
    people = named_people(pattern, artifact)
    if not people and initiator:
        return [initiator]
    return people


def unconfirmed(pattern: str, artifact: dict, confirmations: list[str], initiator: str | None,
                mode: str = "named") -> list[str]:
    """Those asked to confirm (``confirmers``) who have not confirmed yet."""
    have = {c.lower() for c in confirmations}
    return [p for p in confirmers(pattern, artifact, initiator, mode) if p.lower() not in have]


def confirmed(pattern: str, slots: dict, artifact: dict, confirmations: list[str], initiator: str | None,
              mode: str = "named") -> bool:
    """Complete: the machine check passes and every confirmer has confirmed this version."""
    if not check(pattern, slots, artifact).done:
        return False
    need = confirmers(pattern, artifact, initiator, mode)
    have = {c.lower() for c in confirmations}
    return bool(need) and all(p.lower() in have for p in need)
