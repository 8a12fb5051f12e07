"""Reading requests safely: the JSON body and typed query values (400 with details when wrong)."""
import re

from rooms import limits
from rooms.errors import ValidationFailed

#: A whole number as a URL writes one: ASCII digits, an optional sign (``int`` would also take ``1_000`` and ``１``).
WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")

BOOL_VALUES = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _clean(value, path: str, problems: dict) -> None:
    if isinstance(value, str):
        problem = limits.unstorable(value)
        if problem:
            problems[path] = [problem]
    elif isinstance(value, dict):
        for k, v in value.items():
            _clean(v, f"{path}.{k}" if path else str(k), problems)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _clean(v, f"{path}[{i}]", problems)


def json_body(request) -> dict:
    """The request's JSON object (keys already snake_case), or 400."""
    data = request.data
    if hasattr(data, "dict") and not isinstance(data, dict):  # a QueryDict from a form post
        data = data.dict()
    if not isinstance(data, dict):
        raise ValidationFailed("The body must be a JSON object.", {"body": ["Send a JSON object."]})
    problems: dict = {}
    _clean(data, "", problems)
    if problems:
        raise ValidationFailed("The body contains text that cannot be stored.", problems)
    return data


def is_json(request) -> bool:
    media = (request.content_type or "").split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def no_fields(request) -> None:
    """The body of a control that takes no fields (start, pause, copy...): none is needed, but one sent as
    JSON is read like any other, so malformed JSON is 400 ``parse_error`` and a JSON value that is not an
    object 400; an object's keys are ignored. A body that does not say it is JSON (an empty form post)
    is not read, as before."""
    if is_json(request):
        json_body(request)


def bool_param(request, name: str) -> bool | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    value = BOOL_VALUES.get(raw.lower())
    if value is None:
        raise ValidationFailed(f"{name} must be true or false.", {name: ["Must be true or false."]})
    return value


def int_param(request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        if not WHOLE_NUMBER.fullmatch(raw.strip()):
            raise ValueError(raw)
        value = int(raw)  # ValueError too past Python's digit limit
    except ValueError:
        raise ValidationFailed(f"{name} must be a whole number.", {name: [f"Must be a whole number from {lo} to {hi}."]}) from None
    if not lo <= value <= hi:
        raise ValidationFailed(f"{name} is out of range.", {name: [f"Must be from {lo} to {hi}."]})
    return value


def choice_params(request, name: str, choices) -> list[str]:
    """A filter that accepts one value or several separated by commas, the parameter given once or repeated
    (``?status=active&status=draft`` is ``?status=active,draft``)."""
    values = [v.strip() for raw in request.query_params.getlist(name) for v in raw.split(",") if v.strip()]
    if not values:
        return []
    unknown = [v for v in values if v not in choices]
    if unknown:
        raise ValidationFailed(f"Unknown {name}.", {name: [f"Must be one of {', '.join(choices)}."]})
    return values


def safe_text(value: str, name: str) -> str:
    """A text value from the URL, refused when no database could store or compare it."""
    problems: dict = {}
    _clean(value, name, problems)
    if problems:
        raise ValidationFailed(f"{name} is not valid text.", problems)
    return value
