"""Traces with the OpenTelemetry SDK's in-memory exporter: one recall is a request span
with the Elasticsearch client's search span as its child; an enrichment page is a span
with the client's bulk request under it; no span holds an event's text or a query's
words."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.core import spans
from session_recall.http import create_app
from session_recall.indexer import enrich
from session_recall.observability import tracing
from tests.support.ndjson import event
from tests.support.serve import serving

pytestmark = pytest.mark.integration

SECRET_WORDS = ("zanzibar", "quokka", "periwinkle")


class _WhileTested(Sampler):
    """Samples while this module's tests run, drops every span after: OpenTelemetry
    takes one global provider per process, and the rest of the suite should not pay
    for spans nobody reads."""

    on = True

    def should_sample(
        self, _context: Any, _trace_id: int, _name: str, _kind: Any = None,
        attributes: Any = None, *_rest: Any,
    ) -> SamplingResult:  # fmt: skip
        if not self.on:
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    def get_description(self) -> str:
        return "while tested"


@pytest.fixture(scope="module")
def traced() -> Iterator[tuple[object, InMemorySpanExporter]]:
    """The process's tracer provider, set once (OpenTelemetry allows one), exporting
    to memory while this module runs."""
    exporter = InMemorySpanExporter()
    sampler = _WhileTested()
    tracer = tracing.configure({}, exporter=exporter, sampler=sampler)
    yield tracer, exporter
    sampler.on = False
    spans.install(None)
    exporter.clear()


def _text(span: ReadableSpan) -> str:
    values = [span.name, *(str(v) for v in (span.attributes or {}).values())]
    values += [str(v) for e in span.events for v in (e.attributes or {}).values()]
    return " ".join(values).lower()


def _children(found: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in found if s.parent is not None and s.parent.span_id == parent.context.span_id]


def test_a_recall_is_a_request_span_with_the_clients_search_under_it(
    settings: Settings, traced: tuple[object, InMemorySpanExporter]
):
    tracer, exporter = traced
    stored = event(1, user="ana", text="Zanzibar quokka sightings")
    with TestClient(create_app(settings, tracer=tracer, enrich=False)) as web:
        assert web.post("/v1/events?refresh=wait_for", json=stored).status_code == 200
        exporter.clear()
        answer = web.post(
            "/v1/users/ana/tools/cross_session_search",
            json={"innerThought": "periwinkle", "query": "zanzibar quokka"},
            headers={"x-request-id": "trace-me-1"},
        )
    assert answer.status_code == 200 and "Zanzibar" in answer.text
    found = list(exporter.get_finished_spans())

    [request] = [s for s in found if s.name == "POST /v1/users/{user}/tools/cross_session_search"]
    assert request.attributes is not None
    assert request.attributes["http.route"] == "/v1/users/{user}/tools/cross_session_search"
    assert request.attributes["http.response.status_code"] == 200
    assert request.attributes["session_recall.request_id"] == "trace-me-1"
    searches = [s for s in _children(found, request) if s.name == "search"]
    assert searches, [(s.name, s.parent) for s in found]
    assert all(s.attributes and s.attributes["db.system.name"] == "elasticsearch" for s in searches)
    mine = [s for s in found if s.context.trace_id == request.context.trace_id]
    assert not [s.name for s in mine if any(w in _text(s) for w in SECRET_WORDS)]


def test_a_callers_traceparent_makes_the_request_part_of_its_trace(
    settings: Settings, traced: tuple[object, InMemorySpanExporter]
):
    tracer, exporter = traced
    caller_trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = f"00-{caller_trace}-00f067aa0ba902b7-01"
    with TestClient(create_app(settings, tracer=tracer, enrich=False)) as web:
        exporter.clear()
        assert web.get("/healthz", headers={"traceparent": parent}).status_code == 200
    [request] = [s for s in exporter.get_finished_spans() if s.name == "GET /healthz"]
    assert format(request.context.trace_id, "032x") == caller_trace


def test_an_enrichment_page_is_a_span_with_its_bulk_under_it(
    settings: Settings, es: Elasticsearch, traced: tuple[object, InMemorySpanExporter]
):
    _tracer, exporter = traced
    with TestClient(create_app(settings, enrich=False)) as web:
        body = [event(i, user="ana", text=f"zanzibar note {i}") for i in range(3)]
        assert web.post("/v1/events?refresh=wait_for", json=body).status_code == 200
    exporter.clear()
    summary = enrich(es, settings.index, None, page_size=2)
    assert summary.enriched == 3
    found = list(exporter.get_finished_spans())
    pages = [s for s in found if s.name == "session_recall.enrichment.page"]
    assert len(pages) == 2  # 3 events, 2 a page
    for page in pages:
        assert "bulk" in [s.name for s in _children(found, page)]
    assert not [s.name for s in found if any(w in _text(s) for w in SECRET_WORDS)]


def test_serve_exports_its_last_spans_when_it_stops(es_url: str, alias: str, tmp_path: Path):
    """uvicorn ends the process with the signal it got, which skips the provider's own
    flush at exit: the app's shutdown sends what is left (here, to stdout)."""
    env = {"OTEL_TRACES_EXPORTER": "console", "SESSION_RECALL_ENRICH": "false"}
    with serving(es_url=es_url, alias=alias, folder=tmp_path, env=env, stdout_too=True) as served:
        answer = httpx.get(f"{served.url}/healthz", headers={"x-request-id": "last-span"})
        assert answer.status_code == 200
    assert '"session_recall.request_id": "last-span"' in served.log_text()
