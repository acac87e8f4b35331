"""Reads never starve writes: while every recall thread is held by searches heavier
than any deadline, events are still stored and answered, and /readyz answers."""

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.http.limits import ServeLimits
from session_recall.node import wait_until
from tests.support.ndjson import event, stored

pytestmark = pytest.mark.integration

# Long enough for any loaded machine; a failing test waits this long, a passing one not.
DEADLINE_S = 30
SEARCHES = 12


class _HeavySearches(Elasticsearch):
    """A seam: every search is held until `release` is set, as a search heavier than
    any deadline holds its thread; writes, reads of tombstones and probes go through.
    (`options()` copies keep the class, so the state lives on the class.)"""

    release = threading.Event()
    held = 0
    lock = threading.Lock()

    def _hold(self) -> None:
        cls = type(self)
        with cls.lock:
            cls.held += 1
        cls.release.wait(timeout=2 * DEADLINE_S)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self._hold()
        return super().search(*args, **kwargs)

    def msearch(self, *args: Any, **kwargs: Any) -> Any:
        self._hold()
        return super().msearch(*args, **kwargs)


def _in_thread(call: Callable[[], httpx.Response]) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []

    def run() -> None:
        try:
            answers.append(call())
        except BaseException as err:
            answers.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, answers


def test_events_are_stored_and_readyz_answers_while_heavy_searches_hold_every_read_thread(
    settings: Settings, es: Elasticsearch, alias: str
):
    _HeavySearches.release.clear()
    _HeavySearches.held = 0
    seam = _HeavySearches(settings.elasticsearch_url)
    # A read deadline longer than the test: the searches stay held until released.
    limits = ServeLimits(read_deadline=4 * DEADLINE_S)
    searches: list[tuple[threading.Thread, list[Any]]] = []
    with TestClient(create_app(settings, client=seam, limits=limits)) as web:
        try:
            for i in range(SEARCHES):
                searches.append(
                    _in_thread(
                        lambda i=i: web.post(
                            f"/v1/users/u{i}/tools/cross_session_search",
                            json={"innerThought": "...", "query": "weather, lisbon, offsite"},
                        )
                    )
                )
            assert wait_until(lambda: _HeavySearches.held >= 4, timeout=DEADLINE_S)

            body = [event(i) for i in range(10)]
            writer, written = _in_thread(lambda: web.post("/v1/events", json=body))
            writer.join(timeout=DEADLINE_S)
            probe, probed = _in_thread(lambda: web.get("/readyz"))
            probe.join(timeout=DEADLINE_S)
            # Taken now: once the searches are released, anything would get through.
            answered_while_held = not (writer.is_alive() or probe.is_alive())
        finally:
            # Before the app shuts down, which waits for the searches.
            _HeavySearches.release.set()
            for thread, _ in searches:
                thread.join(timeout=DEADLINE_S)
    seam.close()

    assert answered_while_held, "events or /readyz waited behind the searches"
    assert written and not isinstance(written[0], BaseException), written
    assert written[0].status_code == 200, "events waited behind the searches"
    assert probed and probed[0].status_code == 200, "/readyz waited behind the searches"
    assert stored(es, alias) == 10
    assert [answers[0].status_code for _, answers in searches] == [200] * SEARCHES
