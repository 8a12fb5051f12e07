"""The API's AutoSchema: what drf-spectacular infers, corrected where this server parses differently.

- PATCH bodies: drf-spectacular documents every PATCH body as DRF's ``partial=True`` would parse
  it (its ``Patched...`` components require nothing). Only the catalogue's views parse PATCH
  bodies partially (``patch_is_partial = True`` on the view); the others (a narrative's or a
  seat's ``version``, the facilitator's ``moderatorId``...) refuse a body without their required
  fields, so their components keep ``required``.
- A body drf-spectacular cannot see is required (a text body, such as the discussion file of
  ``POST /api/discussions/import``) is marked required when its view says so (``request_body_required``).
- Text the server trims and then refuses when blank (names, topics, titles...) has ``pattern: \\S``: a string
  of spaces satisfies ``minLength: 1`` but is refused. Decimal amounts are ``format: decimal``.
"""
import copy

from django.core.validators import RegexValidator
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import is_patched_serializer
from rest_framework import serializers

#: A pattern of text that is not only spaces (JSON Schema patterns are not anchored).
NON_SPACE = r"\S"


class AutoSchema(SpectacularAutoSchema):
    def _patch_is_partial(self) -> bool:
        return bool(getattr(self.view, "patch_is_partial", False))

    def _map_basic_serializer(self, serializer, direction):
        if is_patched_serializer(serializer, direction) and not self._patch_is_partial():
            # Keep the ``Patched...`` component (its name comes from the partial serializer), with
            # the fields the server requires.
            serializer = copy.copy(serializer)
            serializer.partial = False
        return super()._map_basic_serializer(serializer, direction)

    def _get_request_body(self, direction="request"):
        body = super()._get_request_body(direction)
        if body is not None and getattr(self.view, "request_body_required", False):
            body["required"] = True
        return body

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction != "request" or not isinstance(schema, dict):
            return schema
        if (isinstance(field, serializers.CharField) and field.trim_whitespace and not field.allow_blank
                and schema.get("type") == "string" and "pattern" not in schema
                and not any(isinstance(v, RegexValidator) for v in field.validators)  # a slug's own pattern says more
                and not isinstance(field.parent, serializers.ListField)):
            # The server trims the text and refuses what is left blank: one non-space character at least.
            schema["pattern"] = NON_SPACE
        if isinstance(field, serializers.DecimalField) and schema.get("type") == "number":
            schema["format"] = "decimal"  # kept exact, to ``decimal_places`` (more are refused)
        return schema
