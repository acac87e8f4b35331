"""The options that make a long-running command observable: its log format, and for
the followers (`ingest --follow`, `embed --follow`) the port of their metrics."""

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from session_recall.config import Settings
from session_recall.factories import embedder_for
from session_recall.observability.logs import LOG_FORMATS
from session_recall.observability.metrics import Metrics

F = TypeVar("F", bound=Callable[..., Any])


def log_format_option(func: F) -> F:
    return click.option(
        "--log-format", type=click.Choice(LOG_FORMATS), default="text", show_default=True,
        envvar="SESSION_RECALL_LOG_FORMAT", show_envvar=True,
        help="text, or json: one JSON object per line (time, level, logger, message, "
        "request_id).",
    )(func)  # fmt: skip


def metrics_port_options(func: F) -> F:
    func = click.option(
        "--metrics-host", default="127.0.0.1", show_default=True,
        envvar="SESSION_RECALL_METRICS_HOST", show_envvar=True,
        help="Address the metrics are served on (with --metrics-port).",
    )(func)  # fmt: skip
    return click.option(
        "--metrics-port", type=click.IntRange(0, 65535), default=None,
        envvar="SESSION_RECALL_METRICS_PORT", show_envvar=True, metavar="PORT",
        help="Serve Prometheus metrics at http://HOST:PORT/metrics while the command runs.",
    )(func)  # fmt: skip


def metrics_for(settings: Settings, *, tools: Iterable[str] = ()) -> Metrics:
    """The process's metrics, its build info naming the configured embedder; `tools`,
    the recall tools it serves."""
    embedder = embedder_for(settings)
    model = embedder.model_id if embedder else None
    return Metrics(encoder=settings.embedder, model=model, tools=tools)
