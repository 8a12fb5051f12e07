"""Optional semantic re-ranking through an OpenAI-compatible ``/embeddings`` endpoint.

Configured by ``EMBEDDINGS_BASE_URL`` and ``EMBEDDINGS_MODEL`` (and ``EMBEDDINGS_API_KEY`` if the
endpoint wants one). Anything going wrong (no answer, a bad answer, a timeout) returns None and
the caller keeps the lexical order.
"""
import logging
import math

import httpx
from django.conf import settings

log = logging.getLogger("convene.search")
TIMEOUT = 5.0
# Lexical score and meaning both count: the final score mixes the normalised bm25/ts_rank with the cosine.
LEXICAL_WEIGHT = 0.3


def configured() -> bool:
    cfg = getattr(settings, "EMBEDDINGS", {}) or {}
    return bool(cfg.get("BASE_URL") and cfg.get("MODEL"))


def embed(texts: list[str]) -> list[list[float]] | None:
    cfg = settings.EMBEDDINGS
    headers = {"Authorization": f"Bearer {cfg['API_KEY']}"} if cfg.get("API_KEY") else {}
    try:
        response = httpx.post(cfg["BASE_URL"].rstrip("/") + "/embeddings", json={"model": cfg["MODEL"], "input": texts},
                              headers=headers, timeout=TIMEOUT)
        response.raise_for_status()
        rows = sorted(response.json()["data"], key=lambda d: d["index"])
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
    except Exception:
        log.warning("embeddings endpoint failed; keeping the lexical order", exc_info=True)
        return None
    return vectors if len(vectors) == len(texts) else None


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def rerank(q: str, hits: dict[str, list[tuple[int, float]]], texts: dict[str, list[str]]) -> dict | None:
    """Re-order each kind's hits by a mix of meaning and lexical score; None when embeddings are unavailable."""
    flat = [t for kind in hits for t in texts[kind]]
    vectors = embed([q, *flat])
    if vectors is None:
        return None
    query, docs = vectors[0], iter(vectors[1:])
    result = {}
    for kind, rows in hits.items():
        top = max((s for _, s in rows), default=0.0) or 1.0
        scored = [(pk, round((1 - LEXICAL_WEIGHT) * cosine(query, next(docs)) + LEXICAL_WEIGHT * (s / top), 6))
                  for pk, s in rows]
        result[kind] = sorted(scored, key=lambda r: -r[1])
    return result
