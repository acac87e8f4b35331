"""The metrics of a process that serves no HTTP API of its own (`ingest --follow`,
`embed --follow`), on a port of their own: prometheus-client's own server, in a
thread, for as long as the command runs."""

from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import start_http_server

from session_recall.core.errors import ConfigurationError
from session_recall.observability.metrics import Metrics


@contextmanager
def exposed(metrics: Metrics | None, *, host: str, port: int | None) -> Iterator[None]:
    """`metrics` at http://host:port/metrics while the block runs (nothing without a
    port). A port that cannot be bound is a `ConfigurationError`, before any work."""
    if metrics is None or port is None:
        yield
        return
    try:
        server, thread = start_http_server(port, addr=host, registry=metrics.registry)
    except OSError as err:
        raise ConfigurationError(
            f"Cannot serve metrics on {host}:{port}: {err.strerror}.",
            hint="Choose another --metrics-port, or stop what listens there.",
        ) from None
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
