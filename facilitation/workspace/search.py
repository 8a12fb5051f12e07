"""Ranked search over a workspace's observations, tasks and narratives, behind one function.

What is searched: an observation's text, a task's title and description, a narrative's text with
its key decisions and next steps.

- SQLite (the embedded default): the FTS5 table ``workspace_search`` (kept current by triggers,
  see migrations rooms 0010 and 0019), ranked by bm25.
- PostgreSQL (production): observations by their stored ``search_vector`` column and its GIN index
  (migration rooms 0015); tasks and narratives by ``SearchVector`` / ``SearchQuery`` / ``SearchRank``
  over GIN expression indexes on the same ``to_tsvector('english', ...)`` expressions (rooms 0010, 0019).

Every word of the query must match (the last one also as a prefix, for search-as-you-type).
When an OpenAI-compatible embeddings endpoint is configured (``EMBEDDINGS_BASE_URL``,
``EMBEDDINGS_MODEL``) the lexical hits are re-ranked by meaning; if that call fails the
lexical order stands. Search never fails because of the embeddings.
"""
import re
from dataclasses import dataclass

from django.db import connection

from facilitation.workspace import embeddings
from facilitation.workspace.payloads import narrative_payload, observation_payload, task_payload
from rooms.models import Narrative, Observation, TaskAssignment

MAX_QUERY = 200
MAX_TERMS = 12
WORD = re.compile(r"\w+", re.UNICODE)
KINDS = {1: "observations", 2: "tasks", 3: "narratives"}


@dataclass
class SearchResult:
    data: dict
    engine: str
    reranked: bool = False


def terms_of(q: str) -> list[str]:
    return [t.lower() for t in WORD.findall(q or "")][:MAX_TERMS]


# --- SQLite FTS5 ----------------------------------------------------------------------------

def fts5_query(room_id: int, terms: list[str]) -> str:
    """``room:"r7" AND "cache" AND ("inval" OR "inval"*)``: words are quoted, so nothing is an operator."""
    parts = [f'"{t}"' for t in terms[:-1]]
    last = terms[-1]
    parts.append(f'("{last}" OR "{last}"*)')
    return f'room:"r{room_id}" AND ' + " AND ".join(parts)


def _sqlite_hits(room_id: int, terms: list[str], limit: int) -> dict[str, list[tuple[int, float]]]:
    hits: dict[str, list[tuple[int, float]]] = {k: [] for k in KINDS.values()}
    sql = ("SELECT rowid, bm25(workspace_search, 1.0, 0.0) AS score FROM workspace_search "
           "WHERE workspace_search MATCH %s AND rowid %% 4 = %s ORDER BY score LIMIT %s")
    with connection.cursor() as cursor:
        for code, kind in KINDS.items():
            cursor.execute(sql, [fts5_query(room_id, terms), code, limit])
            # bm25 is lower-is-better (negative); report higher-is-better.
            hits[kind] = [(rowid // 4, round(-score, 6)) for rowid, score in cursor.fetchall()]
    return hits


# --- PostgreSQL -----------------------------------------------------------------------------

# Observations: the stored ``search_vector`` column (migration rooms 0015), ranked without parsing text again.
PG_OBSERVATIONS = ("SELECT id, ts_rank(search_vector, q) AS score FROM rooms_observation, to_tsquery('english'::regconfig, %s) q "
                   "WHERE room_id = %s AND search_vector @@ q ORDER BY score DESC, id DESC LIMIT %s")


def pg_tsquery(terms: list[str]) -> str:
    """``'cache' & ('inval' | 'inval':*)``: each word a quoted lexeme (\\w+ holds no quote), the last also a prefix."""
    return " & ".join([*(f"'{t}'" for t in terms[:-1]), f"('{terms[-1]}' | '{terms[-1]}':*)"])


def _pg_hits(room_id: int, terms: list[str], limit: int) -> dict[str, list[tuple[int, float]]]:
    from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

    raw = pg_tsquery(terms)
    with connection.cursor() as cursor:
        cursor.execute(PG_OBSERVATIONS, [raw, room_id, limit])
        hits = {"observations": [(pk, round(float(score), 6)) for pk, score in cursor.fetchall()]}
    query = SearchQuery(raw, search_type="raw", config="english")
    # Tasks and narratives: a few per round; their GIN expression indexes (rooms 0010) serve the match.
    sources = {
        "tasks": (TaskAssignment.objects.filter(room_id=room_id), SearchVector("title", "description", config="english")),
        "narratives": (Narrative.objects.filter(room_id=room_id),
                       SearchVector("content", "key_decisions", "next_steps", config="english")),
    }
    for kind, (qs, vector) in sources.items():
        rows = (qs.annotate(document=vector).filter(document=query).annotate(score=SearchRank(vector, query))
                .order_by("-score", "-pk").values_list("pk", "score")[:limit])
        hits[kind] = [(pk, round(float(score), 6)) for pk, score in rows]
    return hits


def lexical_hits(room_id: int, q: str, limit: int = 20) -> tuple[dict[str, list[tuple[int, float]]], str]:
    """(kind -> [(id, score)] best first, engine name)."""
    terms = terms_of(q)
    if connection.vendor == "postgresql":
        engine = "postgresql"
        hits = _pg_hits(room_id, terms, limit) if terms else {k: [] for k in KINDS.values()}
    else:
        engine = "sqlite-fts5"
        hits = _sqlite_hits(room_id, terms, limit) if terms else {k: [] for k in KINDS.values()}
    return hits, engine


MODELS = {"observations": (Observation, observation_payload), "tasks": (TaskAssignment, task_payload),
          "narratives": (Narrative, narrative_payload)}


def search_room(room_id: int, q: str, limit: int = 20) -> SearchResult:
    """The room's observations, tasks and narratives matching ``q``, most relevant first."""
    hits, engine = lexical_hits(room_id, q, limit)
    rows = {}
    for kind, (model, _) in MODELS.items():
        ids = [pk for pk, _ in hits[kind]]
        qs = model.objects.filter(pk__in=ids, room_id=room_id)
        if model is not Observation:
            qs = qs.select_related("created_by" if model is TaskAssignment else "edited_by")
        rows[kind] = {r.pk: r for r in qs}
    reranked = False
    if embeddings.configured() and any(hits.values()):
        texts = {kind: [_text_of(rows[kind][pk]) for pk, _ in hits[kind] if pk in rows[kind]] for kind in hits}
        new_order = embeddings.rerank(q, {kind: [(pk, s) for pk, s in hits[kind] if pk in rows[kind]] for kind in hits}, texts)
        if new_order is not None:
            hits, reranked = new_order, True
    data = {}
    for kind, (_, payload) in MODELS.items():
        data[kind] = [{**payload(rows[kind][pk]), "score": score} for pk, score in hits[kind] if pk in rows[kind]]
    return SearchResult(data=data, engine=engine, reranked=reranked)


def _text_of(row) -> str:
    if isinstance(row, TaskAssignment):
        return f"{row.title}\n{row.description}"
    if isinstance(row, Narrative):
        return "\n".join([row.content, *(row.key_decisions or []), *(row.next_steps or [])])
    return row.content
