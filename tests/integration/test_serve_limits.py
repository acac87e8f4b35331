"""What a client may send is bounded, and a refusal names the limit: a request of too
many events gets 413 (sending it again cannot work), a sidecar whose queue is full gets
503 saying so (sending it again later works)."""

import threading
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.http.limits import ServeLimits
from session_recall.node import wait_until
from tests.support.ndjson import event, ndjson, stored

pytestmark = pytest.mark.integration

DEADLINE_S = 30
NDJSON = {"content-type": "application/x-ndjson"}


@pytest.mark.parametrize("content_type", ["application/x-ndjson", "application/json"])
def test_a_request_of_more_events_than_allowed_gets_413_naming_the_limit(
    settings: Settings, es: Elasticsearch, alias: str, content_type: str
):
    # 100,001 events, 14 MB: under the body limit, over every queue.
    events = [event(i, user=f"u{i % 50}") for i in range(100_001)]
    if content_type == "application/json":
        import orjson

        body = orjson.dumps(events)
    else:
        body = ndjson(events)
    assert len(body) < ServeLimits().max_body_bytes
    with TestClient(create_app(settings)) as web:
        response = web.post("/v1/events", content=body, headers={"content-type": content_type})

    assert response.status_code == 413, response.text
    assert "retry-after" not in response.headers
    assert "100001 events" in response.json()["error"]
    assert "10000 per request" in response.json()["error"]
    assert "at most 10000" in response.json()["hint"]
    assert stored(es, alias) == 0


class _HeldBulk(Elasticsearch):
    """A seam: bulk requests wait until `release` is set (a slow cluster)."""

    release = threading.Event()
    entered = threading.Event()

    def bulk(self, *args: Any, **kwargs: Any) -> Any:
        type(self).entered.set()
        type(self).release.wait(timeout=2 * DEADLINE_S)
        return super().bulk(*args, **kwargs)


def test_a_full_queue_answers_503_saying_what_is_happening(
    settings: Settings, es: Elasticsearch, alias: str
):
    _HeldBulk.release.clear()
    _HeldBulk.entered.clear()
    seam = _HeldBulk(settings.elasticsearch_url)
    limits = ServeLimits(
        max_events_per_request=10, max_pending_events=20, write_deadline=4 * DEADLINE_S
    )
    answers: list[Any] = []
    with TestClient(create_app(settings, client=seam, limits=limits)) as web:

        def post(first: int) -> None:
            batch = [event(i) for i in range(first, first + 10)]
            answers.append(web.post("/v1/events", json=batch))

        threads = [threading.Thread(target=post, args=(0,))]
        threads[0].start()
        try:
            # 10 events being written; 10 more fit in the queue, 10 after them do not.
            assert _HeldBulk.entered.wait(DEADLINE_S)
            threads += [threading.Thread(target=post, args=(n,)) for n in (10, 20)]
            for thread in threads[1:]:
                thread.start()
            assert wait_until(lambda: len(answers) == 1, timeout=DEADLINE_S)
        finally:
            _HeldBulk.release.set()
            for thread in threads:
                thread.join(DEADLINE_S)
    seam.close()

    statuses = sorted(r.status_code for r in answers)
    assert statuses == [200, 200, 503], [r.text for r in answers]
    (full,) = [r for r in answers if r.status_code == 503]
    assert int(full.headers["retry-after"]) > 0
    error = full.json()["error"]
    assert "20 events are already waiting to be written, and 10 more" in error, error
    assert "limit of 20" in error
    assert stored(es, alias) == 20
