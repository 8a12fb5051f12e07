"""drf-spectacular postprocessing hooks.

- ``close_response_objects``: response shapes are closed (no undocumented keys). Every response
  component (``...Out`` and ``...Envelope``) gets ``additionalProperties: false``, so the
  schemathesis run fails when a view returns a key the schema does not describe, not only when a
  documented key is missing.
- ``close_request_bodies``: the request bodies whose unknown fields the server refuses (400 naming each,
  "Unknown or read-only field") get ``additionalProperties: false``; the others ignore unknown fields and
  stay open. ``tests/api/test_closed_request_bodies.py`` holds the list to what the server does.
- ``document_throttling``: every operation may answer 429. Every write (POST, PUT, PATCH, DELETE)
  counts against the ``writes.user`` and ``writes.ip`` rates (``facilitation.api.throttles``),
  whatever its view; and any request, reads included, that carries a token (``Authorization: Token``
  or ``Bearer``) from an address that sent too many invalid ones is refused before the key is looked
  up (``facilitation.api.authentication``, ``CONVENE_RATE_LIMITS["bad_token_ip"]``). Described here
  once, for all of them.
"""

WRITE_METHODS = ("post", "put", "patch", "delete")
#: Request components of the bodies that refuse unknown fields: a discussion's PATCH, a workspace's task,
#: narrative, seat and adaptation edits, and a new API token.
CLOSED_REQUEST_BODIES = (
    "PatchedDiscussionPatchInRequest", "TaskInRequest", "PatchedTaskPatchInRequest", "PatchedNarrativePatchInRequest",
    "PatchedSeatPatchInRequest", "PatchedAdaptationPatchInRequest", "TokenInRequest",
)
READ_METHODS = ("get", "head", "options", "trace")
THROTTLED_COMPONENT = "ThrottledEnvelope"

WRITE_THROTTLED = ("Too many requests: every write counts per user and per address, and an address that sent too "
                   "many invalid tokens is refused whatever key it sends (see the API guide's rate limits); retry "
                   "after `Retry-After` seconds. Nothing was changed.")
READ_THROTTLED = ("Too many invalid tokens from your address: every request from it that carries a token is refused, "
                  "whatever key it sends, until the window passes (see the API guide's rate limits); retry after "
                  "`Retry-After` seconds. Reads are not limited otherwise.")

THROTTLED_ENVELOPE = {
    "type": "object",
    "description": "The error envelope of a 429: `error.code` is `throttled`.",
    "properties": {
        "success": {"type": "boolean", "enum": [False]},
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "enum": ["throttled"]},
                "message": {"type": "string"},
                "details": {
                    "type": "object",
                    "properties": {"retryAfter": {"type": "integer", "minimum": 1,
                                                  "description": "Seconds to wait; the same as the Retry-After header."}},
                    "required": ["retryAfter"],
                    "additionalProperties": False,
                },
            },
            "required": ["code", "message", "details"],
            "additionalProperties": False,
        },
    },
    "required": ["success", "error"],
    "additionalProperties": False,
}

THROTTLED_EXAMPLE = {"success": False, "error": {
    "code": "throttled", "message": "Request was throttled. Expected available in 12 seconds.",
    "details": {"retryAfter": 12}}}


def throttled_response(description: str = WRITE_THROTTLED) -> dict:
    return {
        "description": description,
        "headers": {"Retry-After": {"description": "Seconds to wait before sending again.", "required": True,
                                    "schema": {"type": "integer", "minimum": 1}}},
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{THROTTLED_COMPONENT}"},
                                         "example": THROTTLED_EXAMPLE}},
    }


def close_response_objects(result, generator, request, public):
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name.endswith(("Out", "Envelope")) and "properties" in component:
            component.setdefault("additionalProperties", False)
    return result


def close_request_bodies(result, generator, request, public):
    components = result.get("components", {}).get("schemas", {})
    for name in CLOSED_REQUEST_BODIES:
        if name in components:
            components[name]["additionalProperties"] = False
    return result


def document_throttling(result, generator, request, public):
    found = False
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method in WRITE_METHODS or method in READ_METHODS:
                responses = operation.setdefault("responses", {})
                responses["429"] = throttled_response(WRITE_THROTTLED if method in WRITE_METHODS else READ_THROTTLED)
                operation["responses"] = dict(sorted(responses.items()))  # in the order of their codes
                found = True
    if found:
        result.setdefault("components", {}).setdefault("schemas", {})[THROTTLED_COMPONENT] = THROTTLED_ENVELOPE
    return result
