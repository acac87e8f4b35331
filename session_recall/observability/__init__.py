"""What a running process tells of itself: Prometheus metrics (`metrics`, exposed by
`serve` at /metrics and by the followers on `--metrics-port`, `exposition`), JSON log
lines with the request id (`logs`), and optional OpenTelemetry traces (`tracing`)."""

from session_recall.observability.exposition import exposed
from session_recall.observability.logs import LOG_FORMATS, REQUEST_ID, LogFormat
from session_recall.observability.metrics import EnrichmentTally, EventTally, Metrics

__all__ = [
    "LOG_FORMATS",
    "REQUEST_ID",
    "EnrichmentTally",
    "EventTally",
    "LogFormat",
    "Metrics",
    "exposed",
]
