"""The background enricher the settings ask for: the one way `serve`, `ingest --follow`
and the adapters' stores build one.

Every enricher built here shares its alias with the others by leases on slices of the
sessions (`enrichment.leases`): serve's replicas, `embed --follow` on other machines
and the adapters' processes split the work among themselves, without configuration.
"""

from types import EllipsisType
from typing import Unpack

from elasticsearch import Elasticsearch

from session_recall.config import Settings
from session_recall.embeddings import Embedder
from session_recall.factories.embedder import embedder_for
from session_recall.indexer.enrichment import Enricher, FollowOptions, Leased


def enricher_for(
    settings: Settings,
    client: Elasticsearch,
    *,
    embedder: Embedder | EllipsisType | None = ...,
    **options: Unpack[FollowOptions],
) -> Enricher:
    """An `Enricher` of `settings.index` (not started: enter it). `embedder`: the one
    the caller already built (None for none), else the settings' (`embedder_for`).
    `options` as `follow` takes them; `share` defaults to the alias's leases."""
    chosen = embedder_for(settings) if isinstance(embedder, EllipsisType) else embedder
    if "share" not in options:
        options["share"] = Leased(client, settings.index)
    return Enricher(client, settings.index, chosen, **options)
