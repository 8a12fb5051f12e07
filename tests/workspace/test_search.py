"""Search over a workspace: ranked, room-scoped, kept current on edits, optional semantic re-rank.

Runs on the configured database: SQLite FTS5 by default; with DATABASE_URL pointing at
PostgreSQL the same tests exercise the SearchVector / GIN path.
"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import connection

from facilitation.runs.scheduling import inline
from facilitation.workspace.actions.lifecycle import do_start_workspace
from facilitation.workspace.actions.observations import do_post_observation
from facilitation.workspace.actions.tasks import do_create_task, do_update_task
from facilitation.workspace.search import fts5_query, search_room, terms_of
from rooms.models import Narrative
from tests.factories import make_user
from tests.workspace.helpers import make_workspace


@pytest.fixture
def room(db):
    owner = make_user("searcher")
    with inline():
        room = make_workspace(owner)
        do_start_workspace(room, owner)
        for kind, text in [("blocker", "The invoice queue has no dead-letter handling yet"),
                           ("question", "Which queue broker do we pick for invoices?"),
                           ("solution", "Use an outbox table so invoices survive a crash"),
                           ("observation", "Cron runs at midnight and overlaps with backups")]:
            do_post_observation(room, owner, event_type=kind, content=text)
        do_create_task(room, owner, title="Design the outbox table", description="Invoices written once", priority=4)
    Narrative.objects.create(room=room, round=1, content="We agreed invoices go through an outbox.", generated_content="x")
    return room, owner


def test_ranked_results_of_every_kind(room):
    room, _ = room
    result = search_room(room.pk, "invoices outbox")
    data = result.data
    assert result.engine == ("postgresql" if connection.vendor == "postgresql" else "sqlite-fts5")
    assert [o["type"] for o in data["observations"]] == ["solution"]
    assert [t["title"] for t in data["tasks"]] == ["Design the outbox table"]
    assert len(data["narratives"]) == 1
    ranked = search_room(room.pk, "invoice").data["observations"]
    assert len(ranked) == 3 and all(a["score"] >= b["score"] for a, b in zip(ranked, ranked[1:]))


def test_prefix_of_the_last_word_and_stemming(room):
    room, _ = room
    assert [o["type"] for o in search_room(room.pk, "dead-lett").data["observations"]] == ["blocker"]
    assert {o["type"] for o in search_room(room.pk, "queues").data["observations"]} == {"blocker", "question"}


def test_scoped_to_the_room_and_kept_current(room):
    room, owner = room
    other = make_workspace(make_user("other-searcher"), name="Other")
    assert search_room(other.pk, "invoices").data == {"observations": [], "tasks": [], "narratives": []}
    task = room.tasks.get()
    with inline():
        do_update_task(room, task.pk, owner, title="Draft the migration plan", description="", version=task.version)
    assert search_room(room.pk, "outbox").data["tasks"] == []
    assert [t["id"] for t in search_room(room.pk, "migration").data["tasks"]] == [task.pk]
    room.narratives.all().delete()
    assert search_room(room.pk, "agreed").data["narratives"] == []


def test_operators_in_the_query_are_plain_words(room):
    room, _ = room
    for q in ['invoice" OR room:"r1', "NOT AND OR", "*", "(", "room:r1"]:
        search_room(room.pk, q)  # never a syntax error
    assert terms_of('a "b" c*') == ["a", "b", "c"]
    assert fts5_query(7, ["x", "y"]) == 'room:"r7" AND "x" AND ("y" OR "y"*)'


class _FakeEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /embeddings endpoint: texts mentioning 'crash' point the query's way."""

    calls = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(body)
        # The query (first) points at "survive a crash"; every other text points elsewhere.
        vectors = [[1.0, 0.0] if (i == 0 or "survive" in t) else [0.0, 1.0] for i, t in enumerate(body["input"])]
        payload = {"object": "list", "model": body["model"],
                   "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]}
        raw = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


@pytest.fixture
def embeddings_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_semantic_rerank_with_an_embeddings_endpoint(room, settings, embeddings_server):
    room, _ = room
    lexical = [o["type"] for o in search_room(room.pk, "invoice").data["observations"]]
    settings.EMBEDDINGS = {"BASE_URL": embeddings_server, "MODEL": "fake-embed", "API_KEY": ""}
    result = search_room(room.pk, "invoice")
    assert result.reranked and _FakeEmbeddings.calls[-1]["model"] == "fake-embed"
    assert _FakeEmbeddings.calls[-1]["input"][0] == "invoice"
    # Meaning first, the lexical order among the rest.
    assert [o["type"] for o in result.data["observations"]] == ["solution", *[t for t in lexical if t != "solution"]]


def test_a_failing_embeddings_endpoint_leaves_the_lexical_order(room, settings):
    room, _ = room
    expected = search_room(room.pk, "invoice").data
    settings.EMBEDDINGS = {"BASE_URL": "http://127.0.0.1:9/v1", "MODEL": "m", "API_KEY": ""}
    result = search_room(room.pk, "invoice")
    assert not result.reranked and result.data == expected


def test_a_narrative_s_key_decisions_and_next_steps_are_searched(room):
    room, owner = room
    narrative = room.narratives.get()
    assert search_room(room.pk, "flag").data["narratives"] == []
    # Edited later (as the manager does), the lists are found; so is a word written with an accent.
    Narrative.objects.filter(pk=narrative.pk).update(key_decisions=["Ship behind a feature flag"],
                                                     next_steps=["Ask the café team", "Write the runbook"])
    assert [n["id"] for n in search_room(room.pk, "flag").data["narratives"]] == [narrative.pk]
    assert [n["id"] for n in search_room(room.pk, "runbook").data["narratives"]] == [narrative.pk]
    assert [n["id"] for n in search_room(room.pk, "café").data["narratives"]] == [narrative.pk]
    # Words from the text and a list at once; and a narrative written with its lists at once.
    assert [n["id"] for n in search_room(room.pk, "outbox feature").data["narratives"]] == [narrative.pk]
    second = Narrative.objects.create(room=room, round=2, content="Round two.", generated_content="x",
                                      key_decisions=["Retire the nightly cron"], next_steps=[])
    assert [n["id"] for n in search_room(room.pk, "nightly").data["narratives"]] == [second.pk]
    # A decision taken out is no longer found.
    Narrative.objects.filter(pk=narrative.pk).update(key_decisions=[])
    assert search_room(room.pk, "flag").data["narratives"] == []
    assert search_room(room.pk, "other-room-word").data["narratives"] == []
