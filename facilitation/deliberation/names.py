"""What a name people give something (a room, an agent, a run's role or option) may hold. Pure: no Django.

A name is read on one line, in lists, headings and chat messages, and told apart from other names by how it
looks. So it holds no line or paragraph breaks or other control characters (tabs, NUL, ESC...), and none of
Unicode's invisible format characters (category Cf: zero-width spaces, word joiners, the byte order mark, soft
hyphens, bidi marks, overrides and isolates), with which a name looks like another ("Lead" and "Lead" + U+200B)
or shows in another order than it reads. Two joiners stay allowed: the zero-width joiner, which makes emoji
sequences (with variation selectors, which are marks, not format characters), and the zero-width non-joiner,
which Persian and the scripts of India need to spell words.
"""
import re
import unicodedata

_UNSAYABLE = frozenset(("Cc", "Zl", "Zp"))
_JOINERS = "\u200c\u200d"
_GLUE = re.compile("[\u200c\u200d\ufe00-\ufe0f\U000e0100-\U000e01ef]")

ONE_LINE = "A name on one line, without line breaks, tabs or other control characters."
NO_INVISIBLE = ("A name without invisible formatting characters (zero-width spaces, word joiners, direction marks "
                "and the like), so that it reads as it looks.")


def sayable(name: str) -> bool:
    """No control characters, line or paragraph breaks."""
    return not any(unicodedata.category(c) in _UNSAYABLE for c in name)


def visible(name: str) -> bool:
    """No invisible format characters but the two joiners."""
    return not any(unicodedata.category(c) == "Cf" and c not in _JOINERS for c in name)


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a name (``ONE_LINE`` or ``NO_INVISIBLE``), or None."""
    if not sayable(name):
        return ONE_LINE
    if not visible(name):
        return NO_INVISIBLE
    return None


def visible_text(text: str) -> str:
    """``text`` without the invisible format characters a created name may not hold (joiners kept)."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf" or c in _JOINERS)


def same_name(name: str) -> str:
    """What two names that read the same share: without joiners and variation selectors (an emoji sequence may be
    typed with or without them), case-folded, with single spaces between words."""
    return " ".join(_GLUE.sub("", name).split()).casefold()


def without_glue(text: str) -> str:
    """``text`` without joiners and variation selectors, as ``same_name`` reads names (for matching a message)."""
    return _GLUE.sub("", text)
