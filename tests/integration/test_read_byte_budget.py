"""A read's pages are bounded by bytes as well as by count (issue 57, item 4): ten events
of 4 MB payloads made `GET .../sessions/pays/events` a 40 MB answer, and on a shared
node such reads tripped the parent circuit breaker. Now a page ends where the next
event would not fit, its cursor going on, and every event comes exactly once."""

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.http.limits import ServeLimits
from session_recall.recall import DEFAULT_PAGE_BYTES, Searchers
from tests.support.events import event, write_events

pytestmark = pytest.mark.integration

KEY = b"read-byte-budget-cursor-key-32by"
PAYLOAD_BYTES = 4_000_000
EVENTS = 10
# What a page holds besides its events' stored fields: the JSON around them, the cursor.
SLACK = 64 * 1024


def _tripped(es: Elasticsearch) -> int:
    stats = es.nodes.stats(metric="breaker").body
    return sum(
        breaker["tripped"]
        for node in stats["nodes"].values()
        for breaker in node["breakers"].values()
    )


class Measured:
    """A seam around the client: it notes the bytes of each answer Elasticsearch gives
    (what the node builds in its heap for it) and passes it on unchanged."""

    def __init__(self, es: Elasticsearch) -> None:
        self._es = es
        self.answers: list[int] = []

    def search(self, **request: Any) -> Any:
        return self._noted(self._es.search(**request))

    def msearch(self, **request: Any) -> Any:
        return self._noted(self._es.msearch(**request))

    def _noted(self, response: Any) -> Any:
        self.answers.append(len(orjson.dumps(response.body)))
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._es, name)


@pytest.fixture(scope="module")
def pays(es: Elasticsearch, module_alias: str) -> Iterator[str]:
    events = []
    for i in range(EVENTS):
        stored = event(
            f"pay-{i}",
            user_id="erin",
            session_id="pays",
            text=f"payment {i}",
            timestamp=f"2026-03-01T10:00:{i:02d}Z",
            type="tool_result",
        )
        stored["payload"] = {"blob": chr(ord("a") + i) * PAYLOAD_BYTES}
        events.append(stored)
    write_events(es, module_alias, events)
    yield module_alias


def test_ten_4_mb_payloads_read_page_by_page_over_http_stay_within_the_budget(
    es: Elasticsearch, es_url: str, pays: str, tmp_path
):
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=pays, SESSION_RECALL_HOME=tmp_path
    )
    tripped = _tripped(es)
    seen: list[str] = []
    sizes: list[int] = []
    with TestClient(create_app(settings, enrich=False)) as web:
        cursor = None
        for _ in range(EVENTS + 1):
            query = {"page_size": 10} | ({"cursor": cursor} if cursor else {})
            page = web.get("/v1/users/erin/sessions/pays/events", params=query)
            assert page.status_code == 200, page.text[:500]
            sizes.append(len(page.content))
            items = page.json()["items"]
            seen += [item["event_id"] for item in items]
            for item in items:
                i = int(item["event_id"].removeprefix("pay-"))
                assert item["payload"]["blob"] == chr(ord("a") + i) * PAYLOAD_BYTES
            cursor = page.json().get("next_cursor")
            if cursor is None:
                break
    assert max(sizes) <= DEFAULT_PAGE_BYTES + SLACK, sizes
    assert len(sizes) > 1  # the page was shortened, and its cursor went on
    assert seen == [f"pay-{i}" for i in range(EVENTS)]  # each once, in order
    assert _tripped(es) == tripped


def test_serve_takes_its_page_bytes(es_url: str, pays: str, tmp_path):
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=pays, SESSION_RECALL_HOME=tmp_path
    )
    limits = ServeLimits(max_page_bytes=3 * PAYLOAD_BYTES + 3000)
    with TestClient(create_app(settings, enrich=False, limits=limits)) as web:
        page = web.get("/v1/users/erin/sessions/pays/events", params={"page_size": 10})
    assert [item["event_id"] for item in page.json()["items"]] == ["pay-0", "pay-1", "pay-2"]


@pytest.mark.parametrize("page_bytes", [1, PAYLOAD_BYTES + 1000, 3 * PAYLOAD_BYTES + 3000])
def test_every_event_comes_once_whatever_the_budget(es: Elasticsearch, pays: str, page_bytes: int):
    client = Measured(es)
    reader = Searchers(client, pays, KEY, page_bytes=page_bytes).conversation(  # type: ignore[arg-type]
        user_id="erin", session_id="pays", page_size=4
    )
    seen: list[str] = []
    page = reader.read()
    while True:
        assert page.items  # an event larger than the budget comes alone, never none
        stored = sum(len(item.model_dump_json()) for item in page.items)
        assert len(page.items) == 1 or stored <= page_bytes + SLACK
        assert len(page.items) <= 4
        seen += [item.event_id for item in page.items]
        if page.next_cursor is None:
            break
        page = reader.read(cursor=page.next_cursor)
    assert seen == [f"pay-{i}" for i in range(EVENTS)]
    # No answer of Elasticsearch holds much more than the budget, or one event.
    assert max(client.answers) <= max(page_bytes, PAYLOAD_BYTES + 1000) + SLACK, client.answers


def test_a_search_leaves_the_payloads_out(es: Elasticsearch, pays: str):
    """The payloads are not fetched by a search, which never shows them."""
    page = Searchers(es, pays, KEY).cross_session(user_id="erin").search("payment")
    assert [item.event_id for item in page.items] == [f"pay-{i}" for i in range(EVENTS)]
    assert all(item.payload is None for item in page.items)
