"""The API's AutoSchema: what drf-spectacular infers, corrected where this server parses differently.

- PATCH bodies: drf-spectacular documents every PATCH body as DRF's ``partial=True`` would parse
  it (its ``Patched...`` components require nothing). Only the catalogue's views parse PATCH
  bodies partially (``patch_is_partial = True`` on the view); the others (a narrative's or a
  seat's ``version``, the facilitator's ``moderatorId``...) refuse a body without their required
  fields, so their components keep ``required``.
- A body drf-spectacular cannot see is required (a text body, such as the discussion file of
  ``POST /api/discussions/import``) is marked required when its view says so (``request_body_required``).
- A DELETE that may name its row in a JSON body (``optional_body_methods`` on the view, with a request
  serializer: ``DELETE .../members`` and ``.../links``) documents that body, as optional: drf-spectacular
  documents bodies of POST, PUT and PATCH only.
- 413 ``too_large``: every operation that reads a body answers it for a body over ``API_MAX_BODY_BYTES``
  (the JSON parser, or the import's text), so it is listed on every operation with a request body and on
  those whose view reads an optional JSON body the schema does not describe as one (``optional_body_methods``
  on the view: the controls that take no fields, a DELETE that may name its row in the body). Operations
  that never read their body (a DELETE by id, ``rounds/end``...) do not answer it and do not list it.
- Text the server trims and then refuses when blank (names, topics, titles...) has ``pattern: \\S``: a string
  of spaces satisfies ``minLength: 1`` but is refused. Decimal amounts are ``format: decimal``.
- The schema is OpenAPI 3.1 (``SPECTACULAR_SETTINGS["OAS_VERSION"]``): a field that may be null has
  ``type: [<type>, "null"]``, so the type checks here read a list of types too.
"""
import copy

from django.core.validators import RegexValidator
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import is_patched_serializer
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from facilitation.api.schemas import ERROR_TEXT, ErrorEnvelope

#: A pattern of text that is not only spaces (JSON Schema patterns are not anchored).
NON_SPACE = r"\S"


def _has_type(schema: dict, name: str) -> bool:
    """Is ``name`` the schema's type, or one of its types (OpenAPI 3.1: ``["number", "null"]``)?"""
    kind = schema.get("type")
    return kind == name or (isinstance(kind, list) and name in kind)


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

    def _reads_body(self) -> bool:
        if self.method in ("PUT", "PATCH", "POST") and self.get_request_serializer() is not None:
            return True
        return self.method.lower() in getattr(self.view, "optional_body_methods", ())

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if self._reads_body() and "413" not in responses:
            responses["413"] = self._get_response_for_code(
                OpenApiResponse(ErrorEnvelope, description=ERROR_TEXT[413]), "413", direction=direction)
            responses = dict(sorted(responses.items()))
        return responses

    def _get_request_body(self, direction="request"):
        if self.method == "DELETE" and self._reads_body() and self.get_request_serializer() is not None:
            self.method = "POST"  # drf-spectacular maps the body of unsafe methods only; the mapping is the same
            try:
                body = super()._get_request_body(direction)
            finally:
                self.method = "DELETE"
            if body is not None:
                body["required"] = False  # the row may be named in the query instead
            return body
        body = super()._get_request_body(direction)
        if body is not None and getattr(self.view, "request_body_required", False):
            body["required"] = True
        return body

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction != "request" or not isinstance(schema, dict):
            return schema
        if (isinstance(field, serializers.CharField) and field.trim_whitespace and not field.allow_blank
                and _has_type(schema, "string") and "pattern" not in schema
                and not any(isinstance(v, RegexValidator) for v in field.validators)  # a slug's own pattern says more
                and not isinstance(field.parent, serializers.ListField)):
            # The server trims the text and refuses what is left blank: one non-space character at least.
            schema["pattern"] = NON_SPACE
        if isinstance(field, serializers.DecimalField) and _has_type(schema, "number"):
            schema["format"] = "decimal"  # kept exact, to ``decimal_places`` (more are refused)
        return schema
