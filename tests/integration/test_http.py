"""The HTTP sidecar in process (Starlette's test client) against the real node."""

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import orjson
import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.indexer import (
    Batcher,
    BatchingOptions,
    Event,
    Status,
    Writer,
)
from session_recall.indexer.filling import fill
from tests.support import native as native_core
from tests.support.ndjson import event, ndjson, stored

pytestmark = pytest.mark.integration

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
T = TypeVar("T")


@pytest.fixture
def web(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, token=TOKEN)) as client:
        yield client


def test_one_event_is_stored_before_the_answer(web: TestClient, es: Elasticsearch, alias: str):
    response = web.post("/v1/events", json=event(1), headers=AUTH)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "results": [{"status": "indexed", "event_id": "e-1"}],
        "indexed": 1,
        "already_present": 0,
        "rejected": 0,
        "erased": 0,
    }
    assert stored(es, alias) == 1


def test_an_array_gets_one_result_per_event_in_order(
    web: TestClient, es: Elasticsearch, alias: str
):
    web.post("/v1/events", json=event(1), headers=AUTH)
    body = [event(0), event(1), {**event(2), "colour": "red"}]
    response = web.post("/v1/events", json=body, headers=AUTH)
    assert response.status_code == 422, "a refused event is never answered 2xx"
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["indexed", "already_present", "rejected"]
    assert results[2]["event_id"] == "e-2"
    assert "unknown field 'colour'" in results[2]["reason"]
    assert stored(es, alias) == 2


def test_ndjson_bodies_are_read_line_by_line(web: TestClient, es: Elasticsearch, alias: str):
    body = ndjson([event(1), event(2)]) + b"{broken\n\n"
    response = web.post(
        "/v1/events", content=body, headers={**AUTH, "content-type": "application/x-ndjson"}
    )
    assert [r["status"] for r in response.json()["results"]] == ["indexed", "indexed", "rejected"]
    assert stored(es, alias) == 2


@pytest.mark.parametrize("core", native_core.PATHS)
def test_an_ndjson_body_is_answered_alike_on_either_path(
    settings: Settings, es: Elasticsearch, alias: str, monkeypatch: pytest.MonkeyPatch, core: str
):
    monkeypatch.setenv("SESSION_RECALL_NATIVE", core)
    camel = {"eventId": "e-9", "userId": "bob", "sessionId": "s-9", "contactId": "c"}
    camel |= {k: event(9)[k] for k in ("timestamp", "type", "text")}
    lines = [
        ndjson([event(1)]),
        b"\n   \n",
        ndjson([event(2, text='caf\u00e9 "quoted"\n', metadata={"k": [1, None]})]),
        ndjson([event(1)]),  # the same event again: stored once
        b"{broken\n",
        ndjson([{**event(3), "colour": "red"}]),
        ndjson([{**event(4), "timestamp": "2026-02-30T00:00:00Z"}]),
        ndjson([camel]),
        b'{"event_id":"e-5","event_id":"e-6"}\n',
    ]
    with TestClient(create_app(settings)) as web:
        response = web.post(
            "/v1/events?refresh=wait_for",
            content=b"".join(lines),
            headers={"content-type": "application/x-ndjson"},
        )
    assert response.status_code == 422, response.text
    results = response.json()["results"]
    assert [(r["status"], r.get("event_id")) for r in results] == [
        ("indexed", "e-1"),
        ("indexed", "e-2"),
        ("already_present", "e-1"),
        ("rejected", None),
        ("rejected", "e-3"),
        ("rejected", "e-4"),
        ("indexed", "e-9"),
        ("rejected", None),
    ]
    assert "not valid JSON" in results[3]["reason"]
    assert "unknown field 'colour'" in results[4]["reason"]
    assert "timestamp" in results[5]["reason"]
    hits = es.search(index=alias, size=10, sort=["event_id"])["hits"]["hits"]
    assert [(h["_source"]["event_id"], h["_source"]["user_id"]) for h in hits] == [
        ("e-1", "alice"),
        ("e-2", "alice"),
        ("e-9", "bob"),
    ]
    assert hits[1]["_source"]["text"] == 'café "quoted"\n'


def test_readyz_reflects_elasticsearch(settings: Settings, alias: str):
    with TestClient(create_app(settings, token=TOKEN)) as web:
        assert web.get("/readyz").status_code == 200  # a probe needs no token
    down = settings.with_overrides(elasticsearch_url="http://127.0.0.1:9")
    with TestClient(create_app(down)) as web:
        assert web.get("/healthz").status_code == 200
        response = web.get("/readyz")
    assert response.status_code == 503
    assert "does not answer" in response.json()["reason"]
    missing = settings.with_overrides(index=f"{alias}-absent")
    with TestClient(create_app(missing)) as web:
        assert f"session-recall --index {alias}-absent setup" in web.get("/readyz").json()["reason"]


def test_elasticsearch_down_means_503_with_retry_after(settings: Settings):
    down = settings.with_overrides(elasticsearch_url="http://127.0.0.1:9")
    with TestClient(create_app(down)) as web:
        response = web.post("/v1/events", json=[event(1), event(2)])
    assert response.status_code == 503
    assert int(response.headers["retry-after"]) > 0
    assert response.json()["error"].startswith("Elasticsearch could not")


def test_the_openapi_document_describes_the_routes(web: TestClient):
    document = web.get("/openapi.json").json()
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) >= {
        "/v1/events",
        "/healthz",
        "/readyz",
        "/v1/users/{user}",
        "/v1/users/{user}/sessions/{session}",
        "/v1/users/{user}/contacts/{contact}/inboxes/{inbox}",
        "/v1/users/{user}/events/{event}",
    }
    assert not any(path.startswith("/v1/contacts") for path in document["paths"])
    event_schema = document["components"]["schemas"]["Event"]
    assert {"userId", "sessionId", "timestamp", "type", "text"} <= set(event_schema["required"])
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_delete_endpoints_erase_and_count(web: TestClient, es: Elasticsearch, alias: str):
    events = [event(i, session=f"s{i % 2}", contact_id="c", inbox_id="i") for i in range(6)]
    web.post("/v1/events", json=events, headers=AUTH)

    first = web.delete("/v1/users/alice/sessions/s0", headers=AUTH)
    second = web.delete("/v1/users/alice/contacts/c/inboxes/i", headers=AUTH)

    assert first.json()["removed"] == 3 and second.json()["removed"] == 3
    assert stored(es, alias) == 0
    again = web.post("/v1/events", json=events[:1], headers=AUTH)
    assert again.status_code == 422, "an event that is not stored is never answered 2xx"
    assert again.json()["results"][0] == {
        "status": "rejected",
        "event_id": "e-0",
        "reason": "scope erased",
    }
    assert again.json()["erased"] == 1


class _CountingBulk(Elasticsearch):
    """A seam that counts bulk requests (shared by the copies `options()` makes)."""

    calls = 0

    def bulk(self, *args: Any, **kwargs: Any) -> Any:
        type(self).calls += 1
        return super().bulk(*args, **kwargs)


def test_concurrent_requests_are_all_answered_and_stored(
    settings: Settings, es: Elasticsearch, alias: str
):
    requests = 20
    start = threading.Barrier(requests)
    statuses: list[int] = []
    with TestClient(create_app(settings)) as web:

        def post(i: int) -> None:
            start.wait()
            statuses.append(web.post("/v1/events", json=event(i)).status_code)

        threads = [threading.Thread(target=post, args=(i,)) for i in range(requests)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)

    assert statuses == [200] * requests
    assert stored(es, alias) == requests


def test_concurrent_submissions_share_one_bulk_request(
    settings: Settings, es: Elasticsearch, alias: str
):
    # Deterministic: `gather` queues every caller in one turn of the event loop, before
    # the batcher's worker runs; the batch then holds exactly `max_batch_events`, so it
    # is written at once, whole (the linger would only matter for a batch not full).
    # The seam counts the bulk requests that carry it.
    callers = 20
    _CountingBulk.calls = 0
    client = _CountingBulk(settings.elasticsearch_url)
    writer = Writer(client, alias)
    options = BatchingOptions(linger=1.0, max_batch_events=callers)

    answers, batches = _together(
        writer, options, lambda batcher: [batcher.submit([_event(i)]) for i in range(callers)]
    )

    assert [[r.status for r in a] for a in answers] == [[Status.INDEXED]] * callers
    assert batches == 1
    assert _CountingBulk.calls == 1, "the submissions were not batched together"
    assert stored(es, alias) == callers
    client.close()


def test_concurrent_native_batches_share_one_bulk_request(
    settings: Settings, es: Elasticsearch, alias: str
):
    native_core.require_core()
    # As above, for the bodies `serve` reads into native batches: each caller's
    # results come back to it, by position, from the one merged bulk.
    callers = 10
    _CountingBulk.calls = 0
    client = _CountingBulk(settings.elasticsearch_url)
    writer = Writer(client, alias)
    writer.check_layout()
    bodies = [ndjson([event(2 * i), event(2 * i + 1)]) for i in range(callers)]
    bodies[3] = ndjson([event(6), event(1)])  # e-1 is caller 0's too
    filled = [fill(writer, body, None) for body in bodies]
    options = BatchingOptions(linger=1.0, max_batch_events=2 * callers)

    answers, _ = _together(
        writer, options, lambda batcher: [batcher.submit_batches(f.batches) for f in filled]
    )

    results = [f.results(a) for f, a in zip(filled, answers, strict=True)]
    assert [[r.event_id for r in rs] for rs in results] == [
        [f"e-{2 * i}", f"e-{2 * i + 1}"] if i != 3 else ["e-6", "e-1"] for i in range(callers)
    ]
    # One bulk, in the callers' order: caller 0 stores e-1, caller 3 finds it there.
    assert [r.status for r in results[3]] == [Status.INDEXED, Status.ALREADY_PRESENT]
    statuses = [r.status for i, rs in enumerate(results) if i != 3 for r in rs]
    assert statuses == [Status.INDEXED] * (2 * callers - 2)
    assert _CountingBulk.calls == 1, "the batches were not merged into one bulk"
    assert stored(es, alias) == 2 * callers - 1
    client.close()


def _together(
    writer: Writer, options: BatchingOptions, calls: Callable[[Batcher], list[Awaitable[T]]]
) -> tuple[list[T], int]:
    """The answers of `calls(batcher)`, all queued in one turn of the event loop (by
    `gather`), and the number of batches the batcher wrote."""

    async def run() -> tuple[list[T], int]:
        async with Batcher(writer, options) as batcher:
            answers = await asyncio.wait_for(asyncio.gather(*calls(batcher)), timeout=60)
        return answers, batcher.batches

    return asyncio.run(run())


def _event(i: int) -> Event:
    return Event.model_validate(event(i))


def test_responses_are_plain_json(web: TestClient):
    response = web.post("/v1/events", json=event(1), headers=AUTH)
    assert response.headers["content-type"] == "application/json"
    assert orjson.loads(response.content)["indexed"] == 1
