"""Traces, optional: with the `otel` extra installed (the OpenTelemetry SDK and its
OTLP exporter) and the standard variables set, `serve` makes a span per request and
the enrichment pass a span per page; the Elasticsearch client's own spans (which
elasticsearch-py makes by itself) nest under them.

Traces are on when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
is set, or `OTEL_TRACES_EXPORTER` names an exporter (`otlp`, or `console`); the
exporter reads the other `OTEL_EXPORTER_OTLP_*` variables itself (it speaks
http/protobuf), and `OTEL_SERVICE_NAME` names the service (default `session-recall`).
Otherwise nothing of OpenTelemetry is imported here, and no span is made.

Spans carry no event text nor query words: serve's name the route's template (never
the path, which holds user ids), and the client's leave search bodies out (its
default, `OTEL_PYTHON_INSTRUMENTATION_ELASTICSEARCH_CAPTURE_SEARCH_QUERY=omit`).
"""

import logging
import os
from collections.abc import Mapping
from typing import Any

from session_recall.core import spans

log = logging.getLogger(__name__)

SERVICE = "session-recall"
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
EXPORTERS = ("otlp", "console")
_MISSING_EXTRA = (
    "traces are configured (%s) but the OpenTelemetry SDK is not installed: serving "
    "without them; install the `otel` extra (pip install -e '.[otel]')"
)


def wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """The standard variables ask for traces."""
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return exporter != "none"
    return any(environ.get(name) for name in ENDPOINT_VARIABLES)


def configure(
    environ: Mapping[str, str] = os.environ, *, exporter: Any = None, sampler: Any = None
) -> Any:
    """Install a tracer provider as OpenTelemetry's global one (the client's spans go
    to it) when the variables ask for traces, or for `exporter` (an SDK `SpanExporter`,
    a test's in-memory one, with the test's `sampler` if any); returns the tracer for
    serve's requests, or None when traces are off (not asked for, or the SDK is
    missing: said once in the log)."""
    if exporter is None and not wanted(environ):
        return None
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        log.warning(_MISSING_EXTRA, ", ".join(sorted(_set_variables(environ))))
        return None
    name = environ.get("OTEL_SERVICE_NAME") or SERVICE
    resource = Resource.create({"service.name": name})
    provider = TracerProvider(resource=resource, sampler=sampler)
    if exporter is not None:  # a test's: each span at once, in this thread
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        chosen = _exporter(environ)
        if chosen is None:
            return None
        provider.add_span_processor(BatchSpanProcessor(chosen))
    trace.set_tracer_provider(provider)
    tracer = provider.get_tracer("session_recall")
    spans.install(tracer)
    return tracer


def flush(timeout_s: float = 5.0) -> None:
    """Export the spans not sent yet (a process stopping: uvicorn ends itself with the
    signal it got, which skips the provider's own flush at exit)."""
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    force_flush = getattr(provider, "force_flush", None)  # the SDK's, not the API's
    if force_flush is not None:
        force_flush(int(timeout_s * 1000))


def _exporter(environ: Mapping[str, str]) -> Any:
    kind = environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if kind == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if kind != "otlp":
        log.warning(
            "OTEL_TRACES_EXPORTER=%s is not one this build exports to (%s): no traces",
            kind[:40],
            ", ".join(EXPORTERS),
        )
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        log.warning(_MISSING_EXTRA, "OTEL_TRACES_EXPORTER=otlp")
        return None
    return OTLPSpanExporter()


def _set_variables(environ: Mapping[str, str]) -> set[str]:
    return {name for name in (*ENDPOINT_VARIABLES, "OTEL_TRACES_EXPORTER") if environ.get(name)}
