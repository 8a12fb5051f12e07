"""Reading chat commands addressed to the bot. Pure Python.

Telegram: ``/facilitator start CODE``, ``/facilitator@OurBot status``, ``/start CODE`` (a
deep link), a command addressed to another bot (``/facilitator@OtherBot``) is not ours.
Teams: the text after the bot's @mention (``facilitator start CODE``, with or without a slash).
"""
import re

COMMANDS = ("facilitator", "start", "help")
_TELEGRAM = re.compile(r"^/(?P<name>[A-Za-z0-9_]{1,32})(?:@(?P<bot>[A-Za-z0-9_]{1,64}))?(?:\s+(?P<args>.*))?$", re.S)


def parse_telegram(text: str, bot_username: str) -> tuple[str, tuple[str, ...]] | None:
    match = _TELEGRAM.match((text or "").strip())
    if not match:
        return None
    if match["bot"] and bot_username and match["bot"].lower() != bot_username.lower():
        return None  # addressed to another bot
    name = match["name"].lower()
    if name not in COMMANDS:
        return None
    return name, tuple((match["args"] or "").split())


_TRAILING = ".,;:!?\u2026"


def parse_addressed(text: str) -> tuple[str, tuple[str, ...]] | None:
    """A command in text already addressed to the bot (Teams, after the mention is removed). People write to the bot
    as to a person: punctuation after a word (``facilitator status?``, ``facilitator start CODE.``) is not part of the
    command (a code never holds any)."""
    words = [word.rstrip(_TRAILING) or word for word in (text or "").strip().split()]
    if not words:
        return None
    name = words[0].lstrip("/").lower()
    if name not in COMMANDS:
        return None
    return name, tuple(words[1:])
