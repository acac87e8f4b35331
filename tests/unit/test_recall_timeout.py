"""Every search carries its timeout to Elasticsearch, and a search that ran out of time
(some hits may be missing) is an error to retry, never a short page."""

from types import SimpleNamespace
from typing import Any

import pytest

from session_recall.core.errors import ElasticsearchUnavailable
from session_recall.recall import CrossSessionSearcher


class _Engine:
    """Stands in for the client: records every search body, answers with no hits."""

    def __init__(self, *, timed_out: bool = False) -> None:
        self.bodies: list[dict[str, Any]] = []
        self._answer = {"hits": {"hits": []}, "aggregations": {}, "timed_out": timed_out}

    def search(self, *, body: dict[str, Any], **_: Any) -> SimpleNamespace:
        self.bodies.append(body)
        return SimpleNamespace(body=self._answer)

    def field_caps(self, **_: Any) -> SimpleNamespace:
        return SimpleNamespace(body={"indices": []})

    def msearch(self, *, searches: list[dict[str, Any]], **_: Any) -> SimpleNamespace:
        bodies = searches[1::2]
        self.bodies += bodies
        return SimpleNamespace(body={"responses": [self._answer for _ in bodies]})


def _searcher(engine: _Engine, **options: Any) -> CrossSessionSearcher:
    return CrossSessionSearcher(
        engine,  # type: ignore[arg-type]
        alias="events",
        user_id="alice",
        cursor_key=b"k" * 32,
        **options,
    )


@pytest.mark.parametrize("page", [0, 2_000])  # one msearch; window hops, then the msearch
def test_every_search_carries_the_timeout(page: int):
    engine = _Engine()
    _searcher(engine, search_timeout=2.5).search("lisbon", page=page)
    assert engine.bodies
    assert all(body["timeout"] == "2500ms" for body in engine.bodies)


def test_without_a_timeout_none_is_sent():
    engine = _Engine()
    _searcher(engine).search("lisbon")
    assert all("timeout" not in body for body in engine.bodies)


def test_a_search_that_ran_out_of_time_is_unavailable_not_a_short_page():
    with pytest.raises(ElasticsearchUnavailable, match=r"ran past its 2\.5 s limit") as raised:
        _searcher(_Engine(timed_out=True), search_timeout=2.5).search("lisbon")
    assert "Retry" in (raised.value.hint or "")
