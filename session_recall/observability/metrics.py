"""The metrics a process exposes in Prometheus's format, through `prometheus-client`.

One `Metrics` per process, in a registry of its own: `serve` exposes it at `/metrics`,
`ingest --follow` and `embed --follow` on `--metrics-port`. Names follow Prometheus's
conventions: the `session_recall_` prefix, `_total` counters, `_seconds` histograms,
base units.

What the hot paths count costs an addition each: events are tallied in plain integers
(`EventTally`), and what the indexer already keeps (the writer's retries and 429s, the
batcher's queue, the enricher's lag) is read only when scraped (`watch`). Histograms
are observed once per request (a bulk request, an HTTP request).

No label ever holds a user, session, contact or event id: label values come from
bounded sets (route templates, tool names, search modes, refusal classes, status
codes), so the number of series does not grow with the users.
"""

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from session_recall import __version__
from session_recall.indexer import Enricher, EnrichmentSummary
from session_recall.indexer.batcher import Batcher
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.results import (
    REFUSAL_CLASSES,
    SCOPE_ERASED,
    EventResult,
    IngestSummary,
    RefusalClass,
    Status,
    refusal_class,
)
from session_recall.indexer.writer import Writer

PREFIX = "session_recall"
# Seconds: a bulk of a few events takes milliseconds, one of 5 MB or a retried one
# seconds; the write deadline (10 s by default) bounds them.
BULK_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# A recall takes milliseconds to tens of them; the read deadline bounds it.
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Error classes of a recall request, as `core.errors.ErrorKind` names them, by status.
ErrorClass = Literal["caller", "operator", "unavailable"]

_REJECTED = Status.REJECTED
ERROR_CLASSES: tuple[ErrorClass, ...] = ("caller", "operator", "unavailable")
# No `_created` series beside each counter and histogram: a series more per series, that
# no rule or dashboard here reads.
disable_created_metrics()


def error_class(status: int) -> ErrorClass:
    """The class of a failed request by its status: the caller's (4xx), Elasticsearch
    away (503), or the deployment's (any other 5xx)."""
    if status == 503:
        return "unavailable"
    return "caller" if status < 500 else "operator"


class EventTally:
    """Events received and what became of them: a run's `IngestSummary` (ingest's own,
    or one kept here for serve's requests), and the classes of the refusals. Updated by
    one thread at a time (serve's event loop, or ingest's), read at scrape time."""

    def __init__(self) -> None:
        self.summary = IngestSummary()
        self.dead_lettered = 0
        # By class, but for the events of an erased scope, which the summary counts.
        self.refused: dict[RefusalClass, int] = dict.fromkeys(REFUSAL_CLASSES, 0)

    def count(self, results: list[EventResult]) -> None:
        """One request's results (serve): every event of it was received."""
        summary = self.summary
        summary.count_read(events=len(results))
        before = summary.rejected - summary.erased
        summary.count_all(results)
        if summary.rejected - summary.erased == before:
            return  # nothing refused: most requests, each event looked at once
        refused = self.refused
        for result in results:
            if result.status is _REJECTED and result.reason != SCOPE_ERASED:
                refused[refusal_class(result.reason or "")] += 1

    def follow(self, summary: IngestSummary) -> None:
        """A run's counts so far (ingest's progress)."""
        self.summary = summary

    def dead_letter(self, reason: str) -> None:
        """An event went to the dead-letter file with `reason` (ingest)."""
        self.dead_lettered += 1
        self.refused[refusal_class(reason)] += 1

    def refusals(self) -> dict[RefusalClass, int]:
        return {**self.refused, "scope_erased": self.summary.erased}


@dataclass
class Readings:
    """What the indexer keeps that is read at scrape time, each summed over the
    readers registered for it (a `serve` has one of each; a reader answering None has
    nothing to say yet)."""

    counters: dict[str, list[Callable[[], float | None]]] = field(default_factory=dict)
    gauges: dict[str, list[Callable[[], float | None]]] = field(default_factory=dict)


class EnrichmentTally:
    """Enrichment passes as `follow`'s callbacks tell them: `passed` (on_pass),
    `progress` (on_progress) and `failed` (on_failure). Read at scrape time."""

    def __init__(self) -> None:
        self.passes = 0
        self.enriched = 0
        self.refused = 0
        self.pending: int | None = None
        self.embedder_error: str | None = None
        self.problem: str | None = None

    def passed(self, summary: EnrichmentSummary) -> None:
        self.passes += 1
        self.enriched += summary.enriched
        self.refused += summary.refused
        self.problem = None
        if summary.embedder_error is not None:
            self.embedder_error = summary.embedder_error
        elif summary.vectors:
            self.embedder_error = None

    def progress(self, summary: EnrichmentSummary) -> None:
        self.pending = max(summary.missing - summary.done, 0)

    def failed(self, err: Exception) -> None:
        self.problem = str(err)

    def then(
        self, after: Callable[[EnrichmentSummary], None] | None
    ) -> Callable[[EnrichmentSummary], None]:
        """`passed`, then `after` (another on_pass), for the one callback a pass has."""
        if after is None:
            return self.passed

        def both(summary: EnrichmentSummary) -> None:
            self.passed(summary)
            after(summary)

        return both


# name: (kind, help). Read at scrape time from what the indexer keeps.
LIVE: dict[str, tuple[Literal["counter", "gauge"], str]] = {
    "bulk_retries": ("counter", "Bulk items sent again after a 429, a 5xx or a lost connection."),
    "bulk_throttled": ("counter", "Bulk items Elasticsearch answered 429 (too many requests)."),
    "batcher_queued_events": ("gauge", "Events received by serve and not yet written."),
    "enrichment_pending": (
        "gauge",
        "Stored events awaiting their stems, context and vector (the enrichment lag).",
    ),
    "enrichment_events": ("counter", "Events enriched (stems, context, vector)."),
    "enrichment_passes": ("counter", "Enrichment passes completed."),
    "embedder_refused_texts": (
        "counter",
        "Texts the embedder's model refused: their events are kept without a vector.",
    ),
    "embedder_failing": ("gauge", "1 while the embedder fails (vectors wait for a later pass)."),
    "enrichment_failing": ("gauge", "1 while enrichment cannot work at all (passes fail)."),
    "partitions_refused": (
        "gauge",
        "Partitions Elasticsearch refused to create: their events are refused.",
    ),
    "writes_failing": ("gauge", "1 while writes to Elasticsearch fail."),
}


class Metrics:
    """A process's metrics and the registry `/metrics` exposes; `tools`, the recall
    tools served, whose error counts start at zero."""

    def __init__(self, *, encoder: str, model: str | None, tools: Iterable[str] = ()) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        self.events = EventTally()
        self._readings = Readings()
        self._lock = threading.Lock()
        build = Info(
            f"{PREFIX}_build",
            "The version, and the embedder that memory_search and enrichment use.",
            registry=registry,
        )
        build.info({"version": __version__, "encoder": encoder, "model": model or ""})
        self.bulk_seconds = Histogram(
            f"{PREFIX}_bulk_request_duration_seconds",
            "Bulk requests to Elasticsearch (events stored, enrichment written), by duration.",
            buckets=BULK_BUCKETS,
            registry=registry,
        )
        self.http_requests = Counter(
            f"{PREFIX}_http_requests",
            "HTTP requests served, by route template, method and status.",
            ["route", "method", "status"],
            registry=registry,
        )
        self.http_seconds = Histogram(
            f"{PREFIX}_http_request_duration_seconds",
            "HTTP requests served, by route template and method, by duration.",
            ["route", "method"],
            buckets=REQUEST_BUCKETS,
            registry=registry,
        )
        self.recall_requests = Counter(
            f"{PREFIX}_recall_requests",
            "Recall requests (the tools over HTTP), by tool and search mode.",
            ["tool", "mode"],
            registry=registry,
        )
        self.recall_seconds = Histogram(
            f"{PREFIX}_recall_duration_seconds",
            "Recall requests, by tool and search mode, by duration.",
            ["tool", "mode"],
            buckets=REQUEST_BUCKETS,
            registry=registry,
        )
        self.recall_errors = Counter(
            f"{PREFIX}_recall_errors",
            "Recall requests that failed, by tool and class: caller (4xx), unavailable "
            "(503: Elasticsearch away or late), operator (other 5xx).",
            ["tool", "class"],
            registry=registry,
        )
        for tool in tools:  # zero from the start, so that a rate of errors has a series
            for kind in ERROR_CLASSES:
                self.recall_errors.labels(tool, kind)
        self.elasticsearch_up = Gauge(
            f"{PREFIX}_elasticsearch_up",
            "1 when Elasticsearch answered serve's last probe (made at each scrape), else 0.",
            registry=registry,
        )
        registry.register(_Live(self.events, self._readings))

    def bulk_stats(self) -> BulkStats:
        """Stats for a writer: each bulk request timed here, its retries and 429s read
        at scrape time."""
        stats = BulkStats(timed=self.bulk_seconds.observe)
        self.watch("bulk_retries", lambda: stats.retries)
        self.watch("bulk_throttled", lambda: stats.throttled)
        return stats

    def watch(self, name: str, read: Callable[[], float | None]) -> None:
        """Expose `read()` as the live metric `name` (one of `LIVE`), read when scraped."""
        kind, _ = LIVE[name]
        table = self._readings.counters if kind == "counter" else self._readings.gauges
        with self._lock:
            table.setdefault(name, []).append(read)

    def watch_writes(self, writer: Writer, batcher: Batcher | None = None) -> None:
        """A writer's bulk requests timed, its retries, 429s and refused partitions, and
        a batcher's queue and failing writes, read at scrape time."""
        writer.stats.timed = self.bulk_seconds.observe
        stats = writer.stats
        self.watch("bulk_retries", lambda: stats.retries)
        self.watch("bulk_throttled", lambda: stats.throttled)
        self.watch("partitions_refused", lambda: len(writer.refused_partitions))
        if batcher is not None:
            self.watch("batcher_queued_events", lambda: batcher.pending)
            self.watch("writes_failing", lambda: batcher.failing() is not None)

    def watch_enrichment(self, tally: "EnrichmentTally", enricher: Enricher | None = None) -> None:
        """The enrichment's throughput (`tally`, given `follow`'s callbacks), and its lag
        and failures: read from `enricher` when there is one (serve, ingest --follow),
        else from the tally (embed --follow)."""
        self.watch("enrichment_passes", lambda: tally.passes)
        self.watch("enrichment_events", lambda: tally.enriched)
        self.watch("embedder_refused_texts", lambda: tally.refused)
        source: Enricher | EnrichmentTally = enricher if enricher is not None else tally
        self.watch("enrichment_pending", lambda: source.pending)
        self.watch("embedder_failing", lambda: source.embedder_error is not None)
        self.watch("enrichment_failing", lambda: source.problem is not None)

    def names(self) -> set[str]:
        """Every metric name this registry exposes now, as a scrape shows them."""
        found: set[str] = set()
        for family in self.registry.collect():
            found.update(sample.name for sample in family.samples)
        return found


class _Live(Collector):
    """The event tally and the readings, made into metric families at scrape time."""

    def __init__(self, events: EventTally, readings: Readings) -> None:
        self._events = events
        self._readings = readings

    def collect(self) -> Iterator[Metric]:
        events = self._events
        summary = events.summary
        yield _counter("events_received", "Events received (read, or posted).", summary.read)
        acknowledged = CounterMetricFamily(
            f"{PREFIX}_events_acknowledged",
            "Events acknowledged as stored: indexed now, or already present (a replay).",
            labels=["result"],
        )
        acknowledged.add_metric(["indexed"], summary.indexed)
        acknowledged.add_metric(["already_present"], summary.already_present)
        yield acknowledged
        refused = CounterMetricFamily(
            f"{PREFIX}_events_refused",
            "Events refused, by class: invalid, scope_erased, partition (it could not be "
            "created), forbidden (the credential may not store it), elasticsearch.",
            labels=["reason"],
        )
        for reason, count in events.refusals().items():
            refused.add_metric([reason], count)
        yield refused
        yield _counter("events_dead_lettered", "Events dead-lettered.", events.dead_lettered)
        for name, reads in list(self._readings.counters.items()):
            values = [value for read in reads if (value := read()) is not None]
            if values:
                yield _counter(name, LIVE[name][1], sum(values))
        for name, reads in list(self._readings.gauges.items()):
            values = [value for read in reads if (value := read()) is not None]
            if values:
                yield GaugeMetricFamily(f"{PREFIX}_{name}", LIVE[name][1], value=sum(values))


def _counter(name: str, documentation: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(f"{PREFIX}_{name}", documentation, value=value)
