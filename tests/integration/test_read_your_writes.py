"""Read-your-writes: `POST /v1/events?refresh=wait_for` answers once the events are
searchable, so a search sent right after the answer finds them."""

import asyncio
import os
import signal
import subprocess
from typing import Any

import httpx
import pytest
from elasticsearch import ConnectionError as ConnectionFailed
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.indexer import (
    Batcher,
    BatchingOptions,
    RetryPolicy,
    Writer,
    WriterOptions,
    WriteUnavailable,
    parse_object,
)
from session_recall.node import wait_until
from tests.support.ndjson import event
from tests.support.network import free_port

pytestmark = pytest.mark.integration

ROUNDS = 5


def _search(web: TestClient | httpx.Client, word: str) -> str:
    response = web.post(
        "/v1/users/alice/tools/cross_session_search",
        json={"innerThought": "t", "query": word},
    )
    assert response.status_code == 200, response.text
    return response.text


def _post_then_search(web: TestClient | httpx.Client, path: str) -> list[bool]:
    """Whether each of ROUNDS events, posted to `path`, was found by the search sent
    the moment the post was answered."""
    found = []
    for n in range(ROUNDS):
        word = f"zebra{n}"
        posted = web.post(path, json={**event(n), "text": f"remember {word}"})
        assert posted.status_code == 200, posted.text
        found.append(word in _search(web, word))
    return found


def _searchable(es: Elasticsearch, alias: str, **terms: str) -> int:
    """How many documents a search sees now: no refresh first, unlike `stored`."""
    query = {"bool": {"filter": [{"term": {k: v}} for k, v in terms.items()]}}
    return int(es.count(index=alias, query=query)["count"])


# "-1": no scheduled refresh at all, so only the answer's own refresh can make the
# events searchable; "1s": a fixed interval (the template leaves it unset, see below).
@pytest.mark.parametrize("interval", ["1s", "-1"])
def test_with_refresh_wait_for_a_search_right_after_the_answer_finds_the_event(
    es: Elasticsearch, settings: Settings, alias: str, interval: str
):
    es.indices.put_settings(index=alias, settings={"index.refresh_interval": interval})
    with TestClient(create_app(settings)) as web:
        assert _post_then_search(web, "/v1/events?refresh=wait_for") == [True] * ROUNDS


def _search_idle(es: Elasticsearch, alias: str) -> bool:
    stats = es.indices.stats(index=alias, level="shards", filter_path="indices.*.shards")
    shards = [s for i in stats["indices"].values() for c in i["shards"].values() for s in c]
    return bool(shards) and all(shard["search_idle"] for shard in shards)


def test_a_partition_nobody_searched_for_a_while_still_shows_every_write_to_the_next_search(
    es: Elasticsearch, settings: Settings, alias: str
):
    """The template leaves `refresh_interval` unset, so a shard nobody searches stops
    its scheduled refreshes (a bulk load makes fewer segments to merge). A search wakes
    it: what was acknowledged before is found once the next scheduled refresh has run
    (within a second; the search that woke it may still miss it, as any search may in
    the second after a write), and at once with `refresh=wait_for`."""
    with TestClient(create_app(settings)) as web:
        assert web.post("/v1/events", json={**event(0), "text": "remember zebra"}).is_success
        es.indices.put_settings(index=alias, settings={"index.search.idle.after": "1s"})
        assert wait_until(lambda: _search_idle(es, alias), timeout=60), "never search-idle"
        plain = web.post("/v1/events", json={**event(1), "text": "remember okapi"})
        assert plain.status_code == 200, plain.text
        assert wait_until(lambda: "okapi" in _search(web, "okapi"), timeout=30)
        assert wait_until(lambda: _search_idle(es, alias), timeout=60), "never search-idle"
        waited = web.post("/v1/events?refresh=wait_for", json={**event(2), "text": "ibex"})
        assert waited.status_code == 200, waited.text
        assert _searchable(es, alias, event_id=event(2)["event_id"]) == 1


def test_serve_refresh_wait_for_makes_it_the_default_and_a_request_can_opt_out(
    es: Elasticsearch, settings: Settings, alias: str
):
    es.indices.put_settings(index=alias, settings={"index.refresh_interval": "-1"})
    with TestClient(create_app(settings, refresh="wait_for")) as web:
        assert _post_then_search(web, "/v1/events") == [True] * ROUNDS
        opted_out = web.post("/v1/events?refresh=false", json={**event(99), "text": "quagga"})
        assert opted_out.status_code == 200, opted_out.text
        assert _search(web, "quagga") == "No results found."


@pytest.mark.parametrize("value", ["true", "WAIT_FOR", ""])
def test_an_unknown_refresh_policy_is_refused_before_anything_is_stored(
    es: Elasticsearch, settings: Settings, alias: str, value: str
):
    with TestClient(create_app(settings)) as web:
        response = web.post(f"/v1/events?refresh={value}", json=event(1))
    assert response.status_code == 422  # a refused value, as every other
    assert "refresh=wait_for" in response.json()["hint"]
    es.indices.refresh(index=alias)
    assert _searchable(es, alias) == 0


def test_a_wait_for_caller_batched_with_others_is_answered_after_a_refresh(
    es: Elasticsearch, alias: str
):
    es.indices.put_settings(index=alias, settings={"index.refresh_interval": "-1"})
    writer = Writer(es, alias)
    # A long linger: both requests land in one batch.
    batcher = Batcher(writer, BatchingOptions(linger=1.0))

    async def run() -> None:
        async with batcher:
            plain = asyncio.create_task(batcher.submit([_event(1, "bob")]))
            waiting = asyncio.create_task(batcher.submit([_event(2, "alice")], refresh="wait_for"))
            await waiting
            assert _searchable(es, alias, user_id="alice") == 1
            await plain

    asyncio.run(run())
    assert batcher.batches == 1


class _RefreshFails(Elasticsearch):
    """A seam: every call passes through, except refreshes, which fail as a node gone
    between the write and the refresh would make them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        real = self.indices

        class Indices:
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            def refresh(self, **_params: Any) -> Any:
                raise ConnectionFailed("the node went away")

        self.indices = Indices()  # type: ignore[assignment]


def test_a_failed_refresh_fails_only_the_callers_that_asked_for_it(es_url: str, alias: str):
    client = _RefreshFails(es_url)
    writer = Writer(client, alias, options=WriterOptions(retry=RetryPolicy(max_attempts=1)))
    batcher = Batcher(writer, BatchingOptions(linger=1.0))

    async def run() -> tuple[Any, Any]:
        async with batcher:
            plain = batcher.submit([_event(1, "bob")])
            waiting = batcher.submit([_event(2, "alice")], refresh="wait_for")
            return tuple(await asyncio.gather(plain, waiting, return_exceptions=True))

    plain, waiting = asyncio.run(run())
    client.close()
    assert batcher.batches == 1
    assert [r.status.value for r in plain] == ["indexed"]
    # Stored but maybe not searchable: the caller is told to retry, which is harmless.
    assert isinstance(waiting, WriteUnavailable), waiting
    assert "refresh the alias" in str(waiting)


def _event(i: int, user: str) -> Any:
    return parse_object(event(i, user=user)).event  # type: ignore[union-attr]


def test_serve_takes_its_refresh_default_from_the_environment(
    es: Elasticsearch, es_url: str, alias: str, tmp_path
):
    es.indices.put_settings(index=alias, settings={"index.refresh_interval": "-1"})
    port = free_port()
    env = {
        **os.environ,
        "ELASTICSEARCH_URL": es_url,
        "SESSION_RECALL_INDEX": alias,
        "SESSION_RECALL_HOME": str(tmp_path),
        "SESSION_RECALL_REFRESH": "wait_for",
    }
    env.pop("SESSION_RECALL_TOKEN", None)
    process = subprocess.Popen(
        ["session-recall", "serve", "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as web:

            def ready() -> bool:
                try:
                    return web.get("/readyz").status_code == 200
                except httpx.HTTPError:
                    return False

            assert wait_until(lambda: process.poll() is None and ready(), timeout=60)
            assert _post_then_search(web, "/v1/events") == [True] * ROUNDS
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert process.stderr is not None
        process.stderr.close()
