"""Words in the sentences people read: chat messages, minutes, the offline model's text."""


def counted(n: int, noun: str, plural: str = "") -> str:
    """The number with its noun in the matching form: ``1 item``, ``3 items`` (``plural`` when it is not noun + "s")."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
