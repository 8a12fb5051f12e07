"""A relayed turn's Markdown as Telegram shows it: plain text with entities, never raw ``**`` or ``#``.

Turns and conclusions are Markdown (the browser renders them). Telegram shows text and the entities
sent with it (bold, italic, code, links...), so the Markdown is converted by ``telegramify-markdown``.
Its headings carry no emoji here (a heading is a bold line) and list items start with a bullet. The
library counts offsets in UTF-16 code units; ``Span`` offsets are Python indices, converted back here
(``send._entities`` converts them to UTF-16 again, after a long message is split).
"""
from telegramify_markdown import convert
from telegramify_markdown.config import RenderConfig

from channels_bridge.text import Span, utf16_len


def _config() -> RenderConfig:
    config = RenderConfig.isolated()
    symbols = config.markdown_symbol
    for level in range(1, 7):
        setattr(symbols, f"heading_level_{level}", "")
    symbols.unordered_list_item = "•"
    symbols.link = ""
    symbols.image = ""
    return config


_CONFIG = _config()

#: Entity fields that travel with the type (a link's address, a code block's language).
_EXTRA = ("url", "language")


def _indices(text: str) -> dict[int, int]:
    """UTF-16 offset -> Python index, at every character boundary of ``text`` (and its end)."""
    where, units = {0: 0}, 0
    for index, char in enumerate(text):
        units += utf16_len(char)
        where[units] = index + 1
    return where


def rendered(markdown: str) -> tuple[str, list[Span]]:
    """``markdown`` as Telegram's plain text and the spans of its formatting."""
    text, entities = convert(markdown, config=_CONFIG)
    where = _indices(text)
    spans = []
    for entity in entities:
        start, end = where.get(entity.offset), where.get(entity.offset + entity.length)
        if start is None or end is None or end <= start:
            continue  # an entity that does not fall on character boundaries is left out, never sent broken
        data = {"type": entity.type, **{k: getattr(entity, k) for k in _EXTRA if getattr(entity, k, None)}}
        spans.append(Span(start, end - start, data))
    return text, spans
