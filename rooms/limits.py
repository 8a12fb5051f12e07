"""Upper bounds on what people write, in characters. Actions refuse longer text (400);
the API's input serializers document the same numbers."""

NAME = 200              # a room's name
TOPIC = 10_000          # a room's topic or goal
CONCLUSION = 100_000    # a conclusion set by hand
PROMPT = 20_000         # a persona's prompt, a role's base prompt
COMMENT = 10_000        # a person's comment or chat message in a room
USERNAME = 150


def too_long(fields: dict, limits: dict) -> dict:
    """Error details for the text fields in ``fields`` longer than their limit (API names as keys)."""
    errors = {}
    for name, (api_name, limit) in limits.items():
        value = fields.get(name)
        if isinstance(value, str) and len(value) > limit:
            errors[api_name] = [f"At most {limit} characters."]
    return errors
