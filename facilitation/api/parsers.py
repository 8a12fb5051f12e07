"""The JSON body parser: camelCase keys to snake_case, with limits on size and nesting.

A body over ``API_MAX_BODY_BYTES`` is 413 before it is read; one nested deeper than
``MAX_DEPTH`` (or deep enough to exhaust the parser's recursion) is 400.
"""
from django.conf import settings
from djangorestframework_camel_case.parser import CamelCaseJSONParser
from rest_framework import exceptions, status

MAX_DEPTH = 20


class BodyTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


def depth_of(value) -> int:
    """How deeply lists and objects nest in ``value`` (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


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
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(f"JSON nested more than {MAX_DEPTH} levels deep.") from None
        if depth_of(data) > MAX_DEPTH:
            raise exceptions.ParseError(f"JSON nested more than {MAX_DEPTH} levels deep.")
        return data
