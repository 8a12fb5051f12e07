"""The JSON body parser: camelCase keys to snake_case, with limits on size and nesting.

A body over ``API_MAX_BODY_BYTES`` is 413 before it is read; one nested deeper than
``MAX_DEPTH`` (or deep enough to exhaust the parser's recursion) is 400.

Both spellings of a field are read (``maxRounds`` and ``max_rounds``); a body that gives one field in
two spellings with different values is 400 naming the field, instead of one of them silently winning.
Keys inside ``settings.JSON_DATA_FIELDS`` are people's words and stay as written (``note_taker`` next to
``noteTaker`` are two roles).

A body whose ``charset`` names a codec that is not a text encoding (``base64``, ``rot13``) is 400, as one the
charset cannot decode is; so is an object key that is not valid Unicode (a lone surrogate escape such as
``"\\ud800"``), which no answer could name back; so is a number beyond a double's range (``1e400``), as
``NaN`` and ``Infinity`` are.
"""
import json
import math
import re

from django.conf import settings
from djangorestframework_camel_case.parser import CamelCaseJSONParser
from djangorestframework_camel_case.util import camel_to_underscore, camelize_re, underscore_to_camel
from rest_framework import exceptions, status
from rest_framework.utils.json import strict_constant

from rooms.errors import ValidationFailed

MAX_DEPTH = 20


class BodyTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


def _finite(text: str) -> float:
    """A JSON number as a float, refusing one beyond a double's range (``1e400`` would read as infinity)."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]!r} is out of range")
    return value


def shape_problem(value) -> str | None:
    """What is wrong with the shape of a parsed body, in one pass without recursion: nested deeper than
    ``MAX_DEPTH``, or an object key that is not valid Unicode. None when neither."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            for key in item:
                try:
                    key.encode("utf-8")
                except UnicodeEncodeError:
                    return "JSON parse error - an object key is not valid Unicode (a lone surrogate escape)."
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return f"JSON nested more than {MAX_DEPTH} levels deep."
        stack.extend((child, depth + 1) for child in children)
    return None


def _wire(key: str) -> str:
    return re.sub(camelize_re, underscore_to_camel, key)


def _same(a, b) -> bool:
    """The same JSON value, type included (``1`` is not ``true``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def underscore_keys(value, options: dict, path: str = "", clashes: dict | None = None):
    """``value`` with its object keys in snake_case (as ``djangorestframework_camel_case`` writes them);
    each field given in two spellings with different values is added to ``clashes`` under its path
    (``maxRounds``, ``participants[0].agentId``)."""
    clashes = {} if clashes is None else clashes
    if isinstance(value, list):
        return [underscore_keys(item, options, f"{path}[{n}]", clashes) for n, item in enumerate(value)]
    if not isinstance(value, dict):
        return value
    ignore, keep = options.get("ignore_fields") or (), options.get("ignore_keys") or ()
    out, spelled = {}, {}
    for key, item in value.items():
        snake = camel_to_underscore(key, **options) if isinstance(key, str) else key
        if key in keep or snake in keep:
            snake = key
        where = f"{path}.{_wire(snake)}" if path else _wire(snake)
        result = item if key in ignore or snake in ignore else underscore_keys(item, options, where, clashes)
        if snake in out and not _same(out[snake], result) and where not in clashes:
            clashes[where] = [f"Sent as both {spelled[snake]!r} and {key!r} with different values; send one of them."]
        out[snake] = result
        spelled.setdefault(snake, key)
    return out


class JSONParser(CamelCaseJSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        if request is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                raise BodyTooLarge(f"The request body is larger than {settings.API_MAX_BODY_BYTES} bytes.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.loads(stream.read().decode(encoding), parse_constant=strict_constant, parse_float=_finite)
        except LookupError:  # a codec, but not of text
            raise exceptions.ParseError(f"JSON parse error - {encoding!r} is not a text encoding; send UTF-8.") from None
        except RecursionError:
            raise exceptions.ParseError(f"JSON nested more than {MAX_DEPTH} levels deep.") from None
        except ValueError as exc:
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None
        problem = shape_problem(data)
        if problem:
            raise exceptions.ParseError(problem)
        clashes: dict = {}
        data = underscore_keys(data, self.json_underscoreize, clashes=clashes)
        if clashes:
            first = next(iter(clashes))
            raise ValidationFailed(f"{first} was sent twice, in two spellings with different values.", clashes)
        return data
