"""Checking what people and agents send, with API-named error details (400, nothing written)."""
import math

from rooms import limits
from rooms.errors import ValidationFailed
from rooms.models import Observation

EVENT_TYPES = tuple(Observation.EventType.values)
TITLE = 300
LIST_ITEMS = 50
LIST_ITEM = 1000
NARRATIVE = 50_000
MAX_ID = 2**63 - 1


class Errors(dict):
    def add(self, key: str, message: str) -> None:
        self.setdefault(key, []).append(message)

    def raise_if_any(self, message: str) -> None:
        if self:
            raise ValidationFailed(message, dict(self))


def is_id(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ID


def text(value, key: str, errors: Errors, *, limit: int, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        errors.add(key, "Text is required." if required else "Must be text.")
        return None
    if len(value) > limit:
        errors.add(key, f"At most {limit} characters.")
        return None
    return value.strip()


def event_type(value, errors: Errors) -> str | None:
    if not isinstance(value, str) or value not in EVENT_TYPES:
        errors.add("type", f"Unknown type {value!r}; must be one of {', '.join(EVENT_TYPES)}.")
        return None
    return value


def confidence(value, errors: Errors) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
        errors.add("confidence", "Must be a number from 0 to 1.")
        return None
    return float(value)


def priority(value, errors: Errors, *, required: bool) -> int | None:
    if value is None:
        if required:
            errors.add("priority", "Required: a whole number from 1 (low) to 5 (urgent).")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        errors.add("priority", "Must be a whole number from 1 (low) to 5 (urgent).")
        return None
    return value


def optional_id(value, key: str, errors: Errors) -> int | None:
    if value is None:
        return None
    if not is_id(value):
        errors.add(key, "Must be an id (a whole number from 1).")
        return None
    return value


def version(value, errors: Errors) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        errors.add("version", "Required: the version you read (a whole number from 1).")
        return None
    return value


def text_list(value, key: str, errors: Errors) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > LIST_ITEMS or not all(isinstance(v, str) for v in value):
        errors.add(key, f"A list of at most {LIST_ITEMS} texts.")
        return None
    items = [v.strip() for v in value if v.strip()]
    if any(len(v) > LIST_ITEM for v in items):
        errors.add(key, f"Each item has at most {LIST_ITEM} characters.")
        return None
    return items


def id_list(value, key: str, errors: Errors) -> list[int] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > LIST_ITEMS or not all(is_id(v) for v in value):
        errors.add(key, f"A list of at most {LIST_ITEMS} ids.")
        return None
    return list(dict.fromkeys(value))


COMMENT = limits.COMMENT
