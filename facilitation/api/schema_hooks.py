"""drf-spectacular postprocessing: response shapes are closed (no undocumented keys).

Every response component (``...Out`` and ``...Envelope``) gets ``additionalProperties:
false``, so the schemathesis run fails when a view returns a key the schema does not
describe, not only when a documented key is missing.
"""


def close_response_objects(result, generator, request, public):
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name.endswith(("Out", "Envelope")) and "properties" in component:
            component.setdefault("additionalProperties", False)
    return result
