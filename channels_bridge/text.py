"""Message text for chats: UTF-16 offsets (Telegram counts entities in UTF-16 code units) and
splitting long messages on paragraph boundaries without cutting a mention in two. Pure Python."""
from dataclasses import dataclass


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def utf16_offset(text: str, index: int) -> int:
    """The UTF-16 offset of the character at ``index`` of ``text``."""
    return utf16_len(text[:index])


def markdown_from(text: str, card: dict | None) -> int | None:
    """Where a relayed turn's Markdown starts in ``text`` (the delivery's ``card.markdownFrom``; what comes
    before is the speaker's prefix), or None when the text is plain."""
    start = (card or {}).get("markdownFrom")
    return start if isinstance(start, int) and 0 <= start <= len(text) else None


@dataclass(frozen=True)
class Span:
    """A range of characters (Python indices) with what it means (a mention, bold...)."""

    offset: int
    length: int
    data: dict

    @property
    def end(self) -> int:
        return self.offset + self.length


def _cut_point(text: str, start: int, limit: int, measure, spans: list[Span]) -> int:
    """The end (exclusive) of the longest piece from ``start`` within ``limit`` units, preferring
    a paragraph break, then a line break, then a space; never inside a span."""
    # The furthest index whose piece fits.
    lo, hi = start + 1, len(text)
    if measure(text[start:]) <= limit:
        return len(text)
    while lo < hi:  # binary search on the measured length
        mid = (lo + hi + 1) // 2
        if measure(text[start:mid]) <= limit:
            lo = mid
        else:
            hi = mid - 1
    furthest = lo

    def inside_span(i: int) -> bool:
        return any(s.offset < i < s.end for s in spans)

    piece = text[start:furthest]
    for sep in ("\n\n", "\n", " "):
        at = piece.rfind(sep)
        while at > 0:
            cut = start + at + len(sep)
            if not inside_span(cut) and cut > start:
                return cut
            at = piece.rfind(sep, 0, at)
    cut = furthest
    while cut > start + 1 and inside_span(cut):
        cut -= 1
    if cut <= start:
        cut = furthest
    # Never split a surrogate pair's character (Python indices are code points: always safe).
    return cut


def split_message(text: str, limit: int, spans: list[Span] | None = None, measure=utf16_len) -> list[tuple[str, list[Span]]]:
    """Split ``text`` into pieces of at most ``limit`` units, each with its spans re-based.

    Paragraphs stay whole where they fit; a paragraph longer than the limit is cut at a line
    break, else a space, else anywhere. Whitespace at a cut is dropped.
    """
    spans = sorted(spans or [], key=lambda s: s.offset)
    pieces: list[tuple[str, list[Span]]] = []
    start = 0
    while start < len(text):
        end = _cut_point(text, start, limit, measure, spans)
        raw = text[start:end]
        stripped_lead = len(raw) - len(raw.lstrip())
        body = raw.strip()
        if body:
            base = start + stripped_lead
            own = [Span(s.offset - base, s.length, s.data) for s in spans if s.offset >= base and s.end <= base + len(body)]
            pieces.append((body, own))
        start = end
    return pieces or [("", [])]
