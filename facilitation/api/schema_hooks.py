"""drf-spectacular postprocessing hooks.

- ``close_response_objects``: response shapes are closed (no undocumented keys). Every response
  component (``...Out`` and ``...Envelope``) gets ``additionalProperties: false``, so the
  schemathesis run fails when a view returns a key the schema does not describe, not only when a
  documented key is missing.
- ``document_write_throttling``: every writing operation (POST, PUT, PATCH, DELETE) may answer
  429: every write counts against the ``writes.user`` and ``writes.ip`` rates
  (``facilitation.api.throttles``), whatever its view. Described here once, for all of them.
"""

WRITE_METHODS = ("post", "put", "patch", "delete")
THROTTLED_COMPONENT = "ThrottledEnvelope"

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


def throttled_response() -> dict:
    return {
        "description": "Too many requests: every write counts per user and per address (see the API guide's "
                       "rate limits); retry after `Retry-After` seconds. Nothing was changed.",
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


def document_write_throttling(result, generator, request, public):
    found = False
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method in WRITE_METHODS:
                operation.setdefault("responses", {})["429"] = throttled_response()
                found = True
    if found:
        result.setdefault("components", {}).setdefault("schemas", {})[THROTTLED_COMPONENT] = THROTTLED_ENVELOPE
    return result
