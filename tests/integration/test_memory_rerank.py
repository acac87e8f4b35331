"""memory_search with a reranker over the real node: the reranker's order is the
answer, its failure leaves the fused order and says so, and it only ever sees the
searching user's events."""

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import AsyncElasticsearch, Elasticsearch

from session_recall.cli import main
from session_recall.indexer import Event, Submission, Writer
from session_recall.recall import (
    AsyncMemorySearcher,
    EndpointReranker,
    LocalReranker,
    MemorySearchResult,
    Reranker,
    Searchers,
    add_reranker,
)
from tests.support.rerankers import rerank_server, reversing, tiny_cross_encoder

pytestmark = pytest.mark.integration

KEY = b"memory-rerank-cursor-key-32byte!"
QUESTION = "which pear and apple tart did we bake"
ALICE = [
    "we baked a pear tart with pear and pear again, one apple",
    "the apple tart had apple and apple on top",
    "an apple and pear tart for sunday",
    "we did bake bread, a tart of nothing in particular",
]
# Bob's turns match the question better than any of Alice's: never hers to see.
BOB = ["pear apple tart bake pear apple tart bake", "apple apple apple tart"]


@pytest.fixture(scope="module")
def alias(es: Elasticsearch, module_alias: str) -> str:
    turns = [("alice", i, text) for i, text in enumerate(ALICE)]
    turns += [("bob", i, text) for i, text in enumerate(BOB)]
    events = [
        {"user_id": user, "session_id": f"{user}-s{i % 2}", "event_id": f"{user}-{i}",
         "timestamp": f"2026-03-0{i + 1}T10:00:00Z", "type": "user_message", "text": text}
        for user, i, text in turns
    ]  # fmt: skip
    written = Writer(es, module_alias).write(Submission(Event.model_validate(e)) for e in events)
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=module_alias)
    return module_alias


def alice(es: Elasticsearch, alias: str, reranker: Reranker | None) -> MemorySearchResult:
    searcher = Searchers(es, alias, KEY, reranker=reranker).memory(user_id="alice")
    return searcher.search(QUESTION, mode="keyword", limit=4, context=0)


def ids(result: MemorySearchResult) -> list[str]:
    return [hit.event.event_id for hit in result.hits]


def test_a_reranker_that_reverses_the_order_reverses_the_hits(es: Elasticsearch, alias: str):
    fused = ids(alice(es, alias, None))
    assert len(fused) == 4
    with rerank_server(reversing) as (url, received):
        result = alice(es, alias, EndpointReranker(url=url, model="tiny", timeout_s=10))
    assert ids(result) == fused[::-1]
    assert result.notice is None
    # It saw Alice's candidates, in the fused order, and nothing of Bob's.
    [body] = received
    by_id = {f"alice-{i}": text for i, text in enumerate(ALICE)}
    assert body["documents"] == [by_id[event_id] for event_id in fused]
    assert body["query"] == QUESTION


def test_a_local_cross_encoder_orders_the_hits_by_its_own_scores(
    es: Elasticsearch, alias: str, tmp_path: Path
):
    add_reranker(*tiny_cross_encoder(tmp_path), tmp_path / "models")
    result = alice(es, alias, LocalReranker(tmp_path / "models"))
    # Its logit: apples less pears (the question's own cancel out).
    assert ids(result) == ["alice-1", "alice-2", "alice-3", "alice-0"]
    assert ids(alice(es, alias, None))[0] == "alice-0"  # keywords put the pears first
    assert all(hit.event.event_id.startswith("alice-") for hit in result.hits)


@pytest.mark.parametrize("status", [500, 503])
def test_an_endpoint_that_fails_leaves_the_fused_order_and_says_so(
    es: Elasticsearch, alias: str, status: int
):
    fused = ids(alice(es, alias, None))
    with rerank_server(lambda body: (status, {"error": "down"})) as (url, _):
        result = alice(es, alias, EndpointReranker(url=url, model="tiny", timeout_s=10))
    assert ids(result) == fused
    assert result.notice is not None
    assert f"status {status}" in result.notice and "fused order" in result.notice


def test_an_endpoint_past_its_deadline_leaves_the_fused_order(es: Elasticsearch, alias: str):
    fused = ids(alice(es, alias, None))
    release = threading.Event()

    def stalled(body):
        release.wait(30)  # until the search has answered without it
        return 200, reversing(body)[1]

    with rerank_server(stalled) as (url, _):
        try:
            result = alice(es, alias, EndpointReranker(url=url, model="tiny", timeout_s=0.3))
        finally:
            release.set()
    assert ids(result) == fused
    assert result.notice is not None and "deadline" in result.notice


async def test_the_async_searcher_reranks_too(es: Elasticsearch, es_url: str, alias: str):
    fused = ids(alice(es, alias, None))
    client = AsyncElasticsearch(es_url, node_class="httpxasync")
    try:
        with rerank_server(reversing) as (url, _):
            reranker = EndpointReranker(url=url, model="tiny", timeout_s=10)
            searcher = AsyncMemorySearcher(client, user_id="alice", alias=alias, reranker=reranker)
            result = await searcher.search(QUESTION, mode="keyword", limit=4, context=0)
    finally:
        await client.close()
    assert ids(result) == fused[::-1]


def test_a_local_reranker_never_added_leaves_the_fused_order_and_says_how_to_add_it(
    es: Elasticsearch, alias: str, tmp_path: Path
):
    fused = ids(alice(es, alias, None))
    result = alice(es, alias, LocalReranker(tmp_path / "no-models"))
    assert ids(result) == fused
    assert result.notice is not None and "add-reranker" in result.notice


def test_the_cli_reranks_with_the_endpoint_the_settings_name(es_url: str, alias: str):
    command = ["--es-url", es_url, "--index", alias, "memory-search", "--user", "alice"]
    command += ["--mode", "keyword", "--limit", "4", "--context", "0", "--format", "json"]
    env = {"SESSION_RECALL_EMBEDDER": "none"}
    fused = json.loads(CliRunner().invoke(main, [*command, QUESTION], env=env).output)
    with rerank_server(reversing) as (url, received):
        env |= {
            "SESSION_RECALL_RERANKER": "endpoint",
            "SESSION_RECALL_RERANKER_URL": url,
            "SESSION_RECALL_RERANKER_MODEL": "tiny",
        }
        result = CliRunner().invoke(main, [*command, QUESTION], env=env)
    assert result.exit_code == 0, result.output
    texts = [hit["text"] for hit in json.loads(result.output)["hits"]]
    assert texts == [hit["text"] for hit in fused["hits"]][::-1]
    assert len(received) == 1 and received[0]["model"] == "tiny"
