"""Upper bounds on what people write, in characters, and what no text may hold. Actions refuse longer text
(400); the API's input serializers document the same numbers."""

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


def unstorable(text: str) -> str | None:
    """Why no database column could store ``text`` (a NUL character, a lone surrogate), or None when it can."""
    if "\x00" in text:
        return "Text may not contain NUL characters."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "Text must be valid Unicode."
    return None
