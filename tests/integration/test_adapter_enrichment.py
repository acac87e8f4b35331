"""An adapter-only deployment (no serve beside it) still enriches: the adapter's store
runs the pass in the background, and stops it on close. Its embedder's tries of one
store end within the store's deadline, even against a server that never answers."""

import asyncio
import time
from collections.abc import Iterator

import pytest
from elasticsearch import Elasticsearch

from session_recall.config import Settings
from session_recall.indexer import pending
from session_recall.indexer.enrichment import CONTEXT_MARK
from session_recall.integrations.openai_agents import SessionRecallSession
from session_recall.integrations.store import EventStore
from session_recall.node import wait_until
from tests.support import network

pytestmark = pytest.mark.integration


def test_an_adapter_alone_enriches_what_it_stores(es: Elasticsearch, es_url: str, alias: str):
    settings = Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_EMBEDDER="static")
    store = EventStore(settings, index=alias)
    try:
        session = SessionRecallSession("chat", user_id="solo", store=store)

        items = [{"role": "user", "content": f"note {n} about the garden"} for n in range(3)]
        asyncio.run(session.add_items(items))
        wait_until(lambda: pending(es, alias, store.embedder) == 0, timeout=60)
        es.indices.refresh(index=alias)
        hits = es.search(index=alias, query={"term": {"user_id": "solo"}})["hits"]["hits"]
        assert len(hits) == 3
        assert all(CONTEXT_MARK in hit["_source"]["enriched"] for hit in hits)
    finally:
        store.close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An embeddings address that takes connections and never answers."""
    with network.silent_server() as url:
        yield f"{url}/v1"


def test_a_store_ends_within_its_deadline_when_the_embeddings_server_never_answers(
    es: Elasticsearch, es_url: str, alias: str, silent_server: str
):
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_EMBEDDER="endpoint", SESSION_RECALL_ENRICH=False,
        SESSION_RECALL_EMBEDDINGS_URL=silent_server, SESSION_RECALL_EMBEDDINGS_MODEL="m",
        SESSION_RECALL_EMBEDDINGS_DIMS=8,
    )  # fmt: skip
    store = EventStore(settings, index=alias, timeout=4.0)
    try:
        session = SessionRecallSession("chat", user_id="waiting", store=store)
        started = time.monotonic()
        asyncio.run(session.add_items([{"role": "user", "content": "stored all the same"}]))
        took = time.monotonic() - started
        # Liveness, not speed: the endpoint's own tries alone would take three times its
        # 30 s timeout; the store gives up on vectors within its deadline and stores.
        assert took < 45, took
        es.indices.refresh(index=alias)
        assert es.count(index=alias, query={"term": {"user_id": "waiting"}})["count"] == 1
    finally:
        store.close()
