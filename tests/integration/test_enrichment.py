"""The enrichment pass on the real node: stems and context fill in after an event is
stored, a neighbour that arrives later reaches the turns before it, contexts never mix
users or sessions, an event not enriched yet is still found by its own words, and the
pass resumes where it stopped. `serve` enriches in the background and reports the lag;
`ingest` enriches once it has stored, and `embed --status` / `embed` show and close it."""

import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.core.stems import stems
from session_recall.embeddings import StaticEmbedder
from session_recall.http import create_app
from session_recall.indexer import Event, Submission, Writer, enrich, pending
from session_recall.indexer.enrichment import CONTEXT_MARK
from session_recall.indexer.errors import IndexerError
from session_recall.mappings import mapping_update
from session_recall.node import wait_until
from session_recall.recall import Searchers
from session_recall.templates import install, uninstall
from tests.support.ndjson import write_ndjson

pytestmark = pytest.mark.integration

KEY = b"enrichment-test-cursor-key-32b!!"
START = Instant.parse("2026-06-01T10:00:00Z").nanos


def turn(n: int, text: str, *, user: str = "alice", session: str = "s", at: float | None = None):
    seconds = n if at is None else at
    return Event(
        event_id=f"{user}-{session}-{n}",
        user_id=user,
        session_id=session,
        timestamp=Instant(START + int(seconds * 10**9)),
        type="user_message",
        text=text,
    )


def store(es: Elasticsearch, alias: str, *events: Event) -> None:
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)


def enriched(es: Elasticsearch, alias: str) -> dict[str, dict]:
    """Each stored event's enriched fields, by event id."""
    es.indices.refresh(index=alias)
    hits = es.search(index=alias, size=100, query={"match_all": {}})["hits"]["hits"]
    return {hit["_source"]["event_id"]: hit["_source"] for hit in hits}


def test_context_holds_the_turns_before_and_a_turn_stored_late_reaches_those_after(
    es: Elasticsearch, alias: str
):
    store(es, alias, turn(1, "alpha apples"), turn(2, "bravo bananas"))
    assert enrich(es, alias, None).enriched == 2
    docs = enriched(es, alias)
    ids = stored_ids(es, alias)
    assert docs["alice-s-2"]["context"] == "alpha appl bravo banana"
    assert docs["alice-s-2"]["context_of"] == [ids["alice-s-1"]]
    assert docs["alice-s-2"]["stems"] == "bravo banana"
    assert docs["alice-s-1"]["context"] == "alpha appl"
    assert docs["alice-s-1"]["enriched"] == [CONTEXT_MARK]

    # A later turn, and one stored late between the first two: the turn after it that
    # was enriched before is rewritten with it, the first turn is left as it was.
    store(es, alias, turn(3, "charlie cherries"), turn(15, "delta dates", at=1.5))
    summary = enrich(es, alias, None)
    assert (summary.missing, summary.enriched, summary.neighbours) == (2, 2, 1)
    docs = enriched(es, alias)
    ids = stored_ids(es, alias)
    assert docs["alice-s-1"]["context"] == "alpha appl"
    assert docs["alice-s-2"]["context"] == "alpha appl delta date bravo banana"
    assert docs["alice-s-2"]["context_of"] == [ids["alice-s-1"], ids["alice-s-15"]]
    assert docs["alice-s-3"]["context"] == "alpha appl delta date bravo banana charli cherri"
    assert enrich(es, alias, None).missing == 0, "nothing is left to do"


def test_each_event_is_written_once_after_its_store_when_turns_arrive_in_order(
    es: Elasticsearch, alias: str
):
    # As `serve` receives a live conversation: one turn, then a pass, and so on.
    for n in range(1, 9):
        store(es, alias, turn(n, f"turn number {n} about topic{n}"))
        assert enrich(es, alias, None).enriched == 1
    es.indices.refresh(index=alias)
    hits = es.search(index=alias, size=100, version=True, query={"match_all": {}})["hits"]["hits"]
    assert len(hits) == 8
    assert {hit["_version"] for hit in hits} == {2}, "the store, then one enrichment write"


def stored_ids(es: Elasticsearch, alias: str) -> dict[str, str]:
    """Each stored event's `_id`, by event id."""
    hits = es.search(index=alias, size=100, query={"match_all": {}}, source=["event_id"])
    return {hit["_source"]["event_id"]: hit["_id"] for hit in hits["hits"]["hits"]}


def test_contexts_never_mix_users_or_sessions(es: Elasticsearch, alias: str):
    # Interleaved in time, with the same session id for both users.
    store(
        es,
        alias,
        *[turn(n, f"alice{n}word", at=2 * n) for n in range(5)],
        *[turn(n, f"bob{n}word", user="bob", at=2 * n + 1) for n in range(5)],
        *[turn(n, f"other{n}word", session="s2", at=2 * n + 0.5) for n in range(5)],
    )
    enrich(es, alias, None, page_size=3)  # pages that cut across users and sessions
    for event_id, doc in enriched(es, alias).items():
        owner = f"{doc['user_id']}-{doc['session_id']}"
        prefix = {"alice-s": "alice", "bob-s": "bob", "alice-s2": "other"}[owner]
        assert event_id.startswith(owner)
        assert doc["context"] and all(t.startswith(prefix) for t in doc["context"].split())


def test_an_event_is_found_by_its_words_before_enrichment_and_by_word_forms_after(
    es: Elasticsearch, alias: str
):
    store(
        es,
        alias,
        turn(1, "We are researching adoption agencies for next spring."),
        turn(2, "Lunch was great today."),
    )
    searcher = Searchers(es, alias, KEY).memory(user_id="alice")

    def found(query: str) -> list[str]:
        return [hit.event.event_id for hit in searcher.search(query, mode="keyword").hits]

    assert found("researching agencies")[:1] == ["alice-s-1"], "found by its own words"
    assert found("research agency") == [], "no word form matches before enrichment"
    enrich(es, alias, None)
    es.indices.refresh(index=alias)
    assert found("research agency")[:1] == ["alice-s-1"]
    assert found("which agency did they research?")[:1] == ["alice-s-1"]


def test_a_pass_resumes_where_it_stopped_and_vectors_come_with_it(es: Elasticsearch, alias: str):
    store(es, alias, *[turn(n, f"turn number {n} about topic{n % 7}") for n in range(30)])
    embedder = StaticEmbedder()
    stop = threading.Event()
    first = enrich(es, alias, embedder, page_size=10, stop=stop, on_progress=_stop_at(stop, 10))
    assert (first.missing, first.enriched) == (30, 10)
    es.indices.refresh(index=alias)
    assert pending(es, alias, embedder) == 20

    second = enrich(es, alias, embedder, page_size=10)
    assert (second.missing, second.enriched, second.failed) == (20, 20, 0)
    es.indices.refresh(index=alias)
    assert pending(es, alias, embedder) == 0
    docs = enriched(es, alias).values()
    assert all(embedder.model_id in doc["embedding_models"] for doc in docs)
    assert all(doc["enriched"] == [CONTEXT_MARK] for doc in docs)


def test_the_next_page_is_embedded_while_a_page_is_written(es: Elasticsearch, alias: str):
    """A model's time overlaps Elasticsearch's: the first page's updates are held
    until the second page's texts are being embedded. A pass that embedded a page only
    after the one before was written would wait here in vain."""
    store(es, alias, *[turn(n, f"turn number {n} about topic{n % 7}") for n in range(20)])
    inner = StaticEmbedder()
    second_page = threading.Event()
    held: list[bool] = []
    embedded: list[int] = []

    class Embedder:
        model_id, dims = inner.model_id, inner.dims

        def embed(self, texts):
            embedded.append(len(texts))
            if len(embedded) == 2:
                second_page.set()
            return inner.embed(texts)

    class Client:  # the node, with its first bulk request held
        def __getattr__(self, name: str):
            return getattr(es, name)

        def bulk(self, **request):
            if not held:
                held.append(second_page.wait(timeout=30))
            return es.bulk(**request)

    summary = enrich(Client(), alias, Embedder(), page_size=10)
    assert held == [True], "the second page was embedded while the first was written"
    assert (summary.enriched, summary.failed, embedded) == (20, 0, [10, 10])
    docs = enriched(es, alias).values()
    assert all(doc["embedding_models"] == [inner.model_id] for doc in docs)


def test_a_pass_that_stops_never_waits_for_the_page_being_embedded(es: Elasticsearch, alias: str):
    """The second page is embedded by a model that hangs: a pass stopped after the
    first page returns at once, and the second page waits for the next pass."""
    store(es, alias, *[turn(n, f"turn number {n} about topic{n % 7}") for n in range(20)])
    inner = StaticEmbedder()
    release = threading.Event()
    ended: list[int] = []

    class Embedder:
        model_id, dims = inner.model_id, inner.dims

        def embed(self, texts):
            if ended:  # the second page: a server that does not answer
                release.wait(timeout=30)
            ended.append(len(texts))
            return inner.embed(texts)

    stop = threading.Event()
    summary = enrich(es, alias, Embedder(), page_size=10, stop=stop, on_progress=_stop_at(stop, 10))
    assert ended == [10], "the pass returned while the second page was being embedded"
    assert (summary.enriched, summary.failed) == (10, 0)
    release.set()
    assert wait_until(lambda: len(ended) == 2, timeout=30)
    es.indices.refresh(index=alias)
    assert pending(es, alias, inner) == 10, "its vectors were not written: the next pass does"


def _stop_at(stop: threading.Event, count: int):
    def check(summary) -> None:
        if summary.done >= count:
            stop.set()

    return check


def test_serve_enriches_in_the_background_and_reports_the_lag(
    settings: Settings, es: Elasticsearch, alias: str
):
    events = [turn(n, f"we keep researching option {n}").model_dump(mode="json") for n in range(40)]
    with TestClient(create_app(settings)) as web:
        assert web.post("/v1/events?refresh=wait_for", json=events).status_code == 200
        deadline = time.monotonic() + 60
        while True:
            ready = web.get("/readyz").json()
            if ready.get("enrichment_pending") == 0 and pending(es, alias, None) == 0:
                break
            assert time.monotonic() < deadline, f"still pending: {ready}"
            time.sleep(0.2)
    assert ready["status"] == "ready"
    es.indices.refresh(index=alias)
    docs = enriched(es, alias).values()
    assert len(docs) == 40 and all(stems("researching") in doc["stems"] for doc in docs)


def test_ingest_enriches_once_stored_and_embed_shows_and_closes_the_lag(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path
):
    events = [
        turn(n, f"the flight to Lisbon, option {n}").model_dump(mode="json") for n in range(25)
    ]
    source = write_ndjson(tmp_path / "events.ndjson", events)
    run = CliRunner().invoke
    base = ["--index", alias, "--es-url", es_url]
    dead = ["--dead-letter", str(tmp_path / "dead.ndjson")]

    result = run(main, [*base, "ingest", str(source), *dead, "--no-enrich"])
    assert result.exit_code == 0, result.output
    result = run(main, [*base, "embed", "--status"])
    assert result.exit_code == 0 and "25 event(s) await enrichment" in result.output
    result = run(main, [*base, "embed"])
    assert result.exit_code == 0 and "25 enriched" in result.output, result.output
    assert "0 event(s) await" in run(main, [*base, "embed", "--status"]).output

    more = [
        turn(n, f"the train to Porto, option {n}").model_dump(mode="json") for n in range(25, 30)
    ]
    result = run(main, [*base, "ingest", str(write_ndjson(tmp_path / "more.ndjson", more)), *dead])
    assert result.exit_code == 0, result.output
    assert "0 event(s) await" in run(main, [*base, "embed", "--status"]).output


@pytest.mark.parametrize(
    "added_since",
    [
        ("stems", "context", "enriched", "context_of", "context_since"),
        ("context_of", "context_since"),  # the rule of turns on both sides
    ],
    ids=["before-enrichment", "before-the-context-rule"],
)
def test_an_index_of_an_earlier_release_is_named_until_setup_adds_the_fields(
    es: Elasticsearch, added_since: tuple[str, ...]
):
    alias = f"t-pre-enrichment_{uuid.uuid4().hex[:8]}"
    mapped = mapping_update()["properties"]
    old = {k: v for k, v in mapped.items() if k not in added_since}
    legacy = f"{alias}-000001"
    mappings = {"dynamic": "strict", "_routing": {"required": True}, "properties": old}
    es.indices.create(index=legacy, mappings=mappings, aliases={alias: {"is_write_index": True}})
    try:
        with pytest.raises(IndexerError, match="lacks fields of the context rule") as refused:
            enrich(es, alias, None)
        assert "session-recall setup" in refused.value.hint
        install(es, alias)  # what `session-recall setup` does
        store(es, alias, turn(1, "after the upgrade"))
        assert enrich(es, alias, None).enriched == 1
    finally:
        uninstall(es, alias)


def test_embed_follow_enriches_what_another_writer_stores_until_stopped(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path
):
    env = {**os.environ, "ELASTICSEARCH_URL": es_url, "SESSION_RECALL_INDEX": alias}
    env["SESSION_RECALL_HOME"] = str(tmp_path / "home")
    follower = subprocess.Popen(
        ["session-recall", "embed", "--follow"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for batch in range(3):  # stored while it follows, a batch at a time
            store(es, alias, *[turn(10 * batch + n, f"follow {batch} {n}") for n in range(10)])
            assert wait_until(lambda: pending(es, alias, None) == 0, timeout=60), "not enriched"
        assert all(doc.get("enriched") == [CONTEXT_MARK] for doc in enriched(es, alias).values())
    finally:
        follower.send_signal(signal.SIGTERM)
        out, err = follower.communicate(timeout=60)
    assert follower.returncode == 0, err
    assert "Stopped; 0 event(s) await enrichment." in out


def test_a_refusal_is_a_clear_error_and_ingest_still_prints_what_it_stored(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path
):
    # A real refusal: a closed index behind the alias, with the enriched fields mapped.
    closed = f"{alias}-closed"
    es.indices.create(index=closed, mappings=mapping_update(), aliases={alias: {}})
    es.indices.close(index=closed)
    source = write_ndjson(tmp_path / "events.ndjson", [turn(1, "hello").model_dump(mode="json")])
    base = ["--index", alias, "--es-url", es_url]

    result = CliRunner().invoke(main, [*base, "embed"])
    assert result.exit_code == 3, result.output  # what the CLI gives an Elasticsearch error
    # Refused at its first request: the count of what waits, which is not lenient about
    # the indices (lenient, it would count 0 for a credential that may not read them).
    assert "refused to count the events" in result.output and "closed" in result.output
    assert "Traceback" not in result.output

    dead = ["--dead-letter", str(tmp_path / "dead.ndjson")]
    result = CliRunner().invoke(main, [*base, "ingest", str(source), *dead])
    assert result.exit_code == 0, result.output
    assert "Read 1, indexed 1" in result.stdout
    assert "enriching them failed" in result.stderr and "session-recall embed" in result.stderr
