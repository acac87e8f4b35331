"""Spans around the library's own units of work (an enrichment page), for traces.

Nothing is imported or recorded here: until a tracer is installed (`install`, which
`observability.tracing` does when OpenTelemetry is configured), `span` is a shared
do-nothing context manager, so the work it wraps costs what it did without it.
"""

import contextlib
from contextlib import AbstractContextManager
from typing import Any

_NOTHING = contextlib.nullcontext()
_tracer: Any = None


def install(tracer: Any) -> None:
    """From now on `span` makes spans with `tracer` (an OpenTelemetry `Tracer`); None
    turns them off again."""
    global _tracer
    _tracer = tracer


def span(name: str) -> AbstractContextManager[Any]:
    """A span named `name`, current while the block runs (the Elasticsearch client's
    own spans nest under it), or nothing when no tracer is installed."""
    if _tracer is None:
        return _NOTHING
    manager: AbstractContextManager[Any] = _tracer.start_as_current_span(name)
    return manager
