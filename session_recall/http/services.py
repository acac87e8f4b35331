"""What the app gives its route groups (`Services`), what a group gives the app
(`RouteGroup`), and what the write path tells `/readyz` of its health (`WriteHealth`):
their own module, so that the app and its groups both import it and not each other."""

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import Elasticsearch
from pydantic import BaseModel
from starlette.routing import BaseRoute

from session_recall.config import Settings
from session_recall.http.auth import Needs
from session_recall.http.bodies import InflightBytes
from session_recall.http.lanes import Lanes
from session_recall.http.limits import ServeLimits
from session_recall.indexer import Refresh
from session_recall.observability.metrics import Metrics


@dataclass(frozen=True)
class Services:
    """What every route group may use. `client` writes events (from the batcher's own
    thread); everything else runs in a lane of `lanes`, with a client of its own."""

    settings: Settings
    client: Elasticsearch
    limits: ServeLimits
    lanes: Lanes
    bodies: InflightBytes
    # The events endpoint's default; a request's `?refresh=` overrides it.
    refresh: Refresh = "false"
    # What the write path knows of its own health, registered by the events group
    # and read by `/readyz`: why writes fail (None while they work), and the
    # partitions Elasticsearch refused to create, each with its reason.
    write_health: list[Callable[[], "WriteHealth"]] = field(default_factory=list)
    # Whether stored events are enriched in the background (stems, context, vectors).
    enrich: bool = True
    # Whether users' events are mined into kept memories in the background.
    consolidate: bool = False
    # The process's metrics (`/metrics`), which route groups feed; None: none kept.
    metrics: Metrics | None = None


@dataclass(frozen=True)
class WriteHealth:
    failing: str | None
    refused_partitions: Mapping[str, str]
    # How many stored events await enrichment (None until first counted).
    enrichment_pending: int | None = None
    # Texts the embedder refused (kept without a vector), its last failure, and why
    # enrichment cannot work at all (not ready), as the enricher last saw them.
    enrichment_refused: int = 0
    embedder_error: str | None = None
    enrichment_failing: str | None = None
    enrichment_problem: str | None = None


@dataclass(frozen=True)
class RouteGroup:
    routes: Sequence[BaseRoute]
    # OpenAPI path items, keyed by path, and the models their `$ref`s point to.
    paths: Mapping[str, Any] = field(default_factory=dict)
    models: Sequence[tuple[type[BaseModel], str]] = ()  # (model, "validation"|"serialization")
    lifespan: Callable[[], contextlib.AbstractAsyncContextManager[None]] | None = None
    # Paths reachable without the bearer token (probes).
    open_paths: frozenset[str] = frozenset()
    # What a signed token needs to reach each route, by (path, method): a route
    # missing here takes the operator token alone (`http.auth`).
    needs: Mapping[tuple[str, str], Needs] = field(default_factory=dict)


GroupFactory = Callable[[Services], RouteGroup]
