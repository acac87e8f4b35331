"""Vectors: an embedder that fails never costs an event, `embed` adds what is missing,
and a model change is refused until the enrichment pass made room."""

import logging
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch, helpers

from session_recall.cli import main
from session_recall.embeddings import (
    EndpointEmbedder,
    StaticEmbedder,
    vector_field,
)
from session_recall.indexer import (
    Event,
    Submission,
    Writer,
    enrich,
    pending,
    to_document,
)
from session_recall.mappings import mapping_update
from session_recall.recall import Searchers
from session_recall.templates import install, uninstall
from tests.support.embeddings_server import DIMS, MODEL, EmbeddingsServer
from tests.support.memory_eval import events
from tests.support.ndjson import write_ndjson

pytestmark = pytest.mark.integration

KEY = b"embedding-ingest-cursor-key-32b!"
EVAL = events()


@pytest.fixture
def server() -> Iterator[EmbeddingsServer]:
    made = EmbeddingsServer()
    yield made
    made.stop()


def with_vectors(es: Elasticsearch, alias: str, model_id: str) -> int:
    es.indices.refresh(index=alias)
    query = {"exists": {"field": vector_field(model_id)}}
    return int(es.count(index=alias, query=query)["count"])


def cli(es_url: str, alias: str, server: EmbeddingsServer, *args: str) -> tuple[int, str]:
    env = {
        "SESSION_RECALL_EMBEDDER": "endpoint",
        "SESSION_RECALL_EMBEDDINGS_URL": server.url,
        "SESSION_RECALL_EMBEDDINGS_MODEL": MODEL,
        "SESSION_RECALL_EMBEDDINGS_DIMS": str(DIMS),
    }
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args], env=env)
    return result.exit_code, result.output


def test_events_ingested_while_the_endpoint_is_down_are_stored_then_embedded(
    es: Elasticsearch, es_url: str, alias: str, server: EmbeddingsServer, tmp_path: Path
):
    source = write_ndjson(tmp_path / "events.ndjson", EVAL)
    dead = str(tmp_path / "dead.ndjson")

    # The endpoint is down (nothing listens on its port): every event is stored.
    code, output = cli(es_url, alias, server, "ingest", str(source), "--dead-letter", dead)
    assert code == 0, output
    assert f"indexed {len(EVAL)}, already present 0, rejected 0" in output
    assert "the embedder failed" in output and "session-recall embed" in output
    model_id = f"{MODEL}@{DIMS}"
    assert with_vectors(es, alias, model_id) == 0

    server.start()
    code, output = cli(es_url, alias, server, "embed", "--page-size", "50")
    assert code == 0, output
    assert f"{len(EVAL)} event(s) awaited enrichment" in output
    assert f"{len(EVAL)} enriched" in output
    assert with_vectors(es, alias, model_id) == len(EVAL)
    assert server.controls.batches and max(server.controls.batches) <= 64

    # Idempotent: nothing is left to do, and nothing is sent.
    sent = len(server.controls.batches)
    code, output = cli(es_url, alias, server, "embed", "--backfill")  # its former name
    assert (code, len(server.controls.batches)) == (0, sent), output
    assert "0 event(s) awaited enrichment" in output

    # The vectors added later serve semantic search.
    with closing(EndpointEmbedder(url=server.url, model=MODEL, dims=DIMS)) as remote:
        found = (
            Searchers(es, alias, KEY, embedder=remote)
            .memory(user_id="bob")
            .search("What did the animal doctor recommend for my pet's stomach?", mode="semantic")
        )
    assert found.mode == "semantic" and "bob-dog-3" in [h.event.event_id for h in found.hits]


def test_an_enrichment_pass_resumes_where_an_outage_stopped_it(
    es: Elasticsearch, alias: str, server: EmbeddingsServer
):
    written = list(Writer(es, alias).write(Submission(Event(**e)) for e in EVAL))
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=alias)
    server.start()
    remote = EndpointEmbedder(url=server.url, model=MODEL, dims=DIMS, max_attempts=1)
    progress = []

    def stop_after_two_pages(summary) -> None:
        progress.append(summary.done)
        if summary.done >= 100:
            server.stop()

    with closing(remote):
        failed = enrich(es, alias, remote, page_size=50, on_progress=stop_after_two_pages)
    assert failed.embedder_error and "did not answer" in failed.embedder_error
    assert failed.enriched == len(EVAL), "stems and context go on without the embedder"
    done = with_vectors(es, alias, remote.model_id)
    # The page after the one being written was embedded meanwhile: the outage may
    # come before or after its vectors.
    assert done in (100, 150) and done < len(EVAL)

    server.start()
    with closing(EndpointEmbedder(url=server.url, model=MODEL, dims=DIMS)) as again:
        summary = enrich(es, alias, again, page_size=50)
    assert summary.missing == len(EVAL) - done and summary.enriched == summary.missing
    assert with_vectors(es, alias, again.model_id) == len(EVAL)


def test_after_a_model_change_events_are_stored_without_vectors_until_the_pass_maps_it(
    es: Elasticsearch, alias: str, caplog: pytest.LogCaptureFixture
):
    old, new = StaticEmbedder(256), StaticEmbedder(128)
    first, second = EVAL[:50], EVAL[50:60]
    assert all(w.result.stored for w in Writer(es, alias, embedder=old).write(
        Submission(Event(**e)) for e in first
    ))  # fmt: skip

    # An adapter configured with the new model: its writes go ahead, without vectors.
    with caplog.at_level(logging.WARNING, logger="session_recall.indexer.writer"):
        written = list(
            Writer(es, alias, embedder=new).write(Submission(Event(**e)) for e in second)
        )
    assert all(w.result.stored for w in written)
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert old.model_id in warned and new.model_id in warned and "session-recall embed" in warned
    es.indices.refresh(index=alias)
    assert es.count(index=alias)["count"] == len(first) + len(second)
    assert with_vectors(es, alias, new.model_id) == 0

    # The pass maps the new model's field and fills it, beside the old one.
    assert enrich(es, alias, new).enriched == len(first) + len(second)
    later = list(Writer(es, alias, embedder=new).write(Submission(Event(**e)) for e in EVAL[60:65]))
    assert all(w.result.stored for w in later)
    es.indices.refresh(index=alias)
    assert with_vectors(es, alias, new.model_id) == len(first) + len(second) + 5
    assert with_vectors(es, alias, old.model_id) == len(first)


def test_an_index_of_the_single_index_layout_stays_readable_and_setup_upgrades_it(
    es: Elasticsearch,
):
    # What an earlier release left: one index behind a write alias, without vector fields.
    alias = f"t-pre-vectors_{uuid.uuid4().hex[:8]}"
    mapped = mapping_update()["properties"]
    old = {
        "dynamic": "strict",
        "_routing": {"required": True},
        "properties": {k: v for k, v in mapped.items() if not k.startswith("embedding")},
    }
    legacy = f"{alias}-000001"
    es.indices.create(index=legacy, mappings=old, aliases={alias: {"is_write_index": True}})
    try:
        stored = [to_document(Event(**e), index=legacy) for e in EVAL[:20]]
        helpers.bulk(es, [{**d.header["create"], "_source": orjson.loads(d.body)} for d in stored])

        install(es, alias)  # what `session-recall setup` does
        embedder = StaticEmbedder()
        writer = Writer(es, alias, embedder=embedder)
        assert all(
            w.result.stored for w in writer.write(Submission(Event(**e)) for e in EVAL[20:40])
        )
        assert writer.without_vectors == 0
        es.indices.refresh(index=alias)
        assert es.count(index=legacy)["count"] == 20, "the old index is kept as it was"
        assert es.count(index=alias)["count"] == 40, "read through the alias with the rest"
        assert enrich(es, alias, embedder).enriched == 40  # vectors for 20, context for all
        assert with_vectors(es, alias, embedder.model_id) == 40
    finally:
        uninstall(es, alias)


def test_embed_drop_model_removes_the_old_models_vectors_and_keeps_the_new(
    es: Elasticsearch, es_url: str, alias: str
):
    old, new = StaticEmbedder(64), StaticEmbedder(128)
    events = [Event(**e) for e in EVAL[:30]]
    assert all(
        w.result.stored for w in Writer(es, alias, embedder=old).write(map(Submission, events))
    )
    es.indices.refresh(index=alias)
    enrich(es, alias, new)
    es.indices.refresh(index=alias)
    assert with_vectors(es, alias, old.model_id) == with_vectors(es, alias, new.model_id) == 30

    cli = ["--es-url", es_url, "--index", alias, "embed"]
    env = {"SESSION_RECALL_EMBEDDER": "static", "SESSION_RECALL_EMBEDDINGS_DIMS": "128"}
    status = CliRunner().invoke(main, [*cli, "--status"], env=env)
    assert old.model_id in status.output and new.model_id in status.output, status.output
    in_use = CliRunner().invoke(main, [*cli, "--drop-model", new.model_id], env=env)
    assert in_use.exit_code == 2 and "the model in use" in in_use.output
    unknown = CliRunner().invoke(main, [*cli, "--drop-model", "no-such-model"], env=env)
    assert unknown.exit_code == 2 and "no event holds vectors of 'no-such-model'" in unknown.output

    dropped = CliRunner().invoke(main, [*cli, "--drop-model", old.model_id], env=env)
    assert dropped.exit_code == 0, dropped.output
    assert f"Removed the vectors of {old.model_id!r} from 30 event(s)." in dropped.output
    es.indices.refresh(index=alias)
    assert with_vectors(es, alias, old.model_id) == 0
    assert with_vectors(es, alias, new.model_id) == 30
    kept = es.search(index=alias, size=1, source={"exclude_vectors": False})["hits"]["hits"][0]
    assert kept["_source"]["embedding_models"] == [new.model_id]
    assert "context" in kept["_source"] and kept["_source"]["enriched"]
    assert pending(es, alias, new) == 0, "nothing to do again for the model in use"
