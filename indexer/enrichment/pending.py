"""What awaits enrichment: the events that lack the context rule's mark or a model's
vectors, in the order a pass looks for them, and their counts."""

from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from session_recall.embeddings import MODELS_FIELD, Embedder
from session_recall.indexer.enrichment.context_rule import CONTEXT_MARK, ENRICHED_FIELD
from session_recall.indexer.enrichment.vector_models import REFUSED_FIELD


def _lacking_context() -> dict[str, Any]:
    return {"bool": {"must_not": [{"term": {ENRICHED_FIELD: CONTEXT_MARK}}]}}


def _lacking_vectors(model_id: str) -> dict[str, Any]:
    return {"bool": {"must_not": [{"term": {MODELS_FIELD: model_id}}]}}


def pending_query(model_id: str | None) -> dict[str, Any]:
    """Events that lack the context rule's mark, or the model's vectors."""
    lacking = [_lacking_context()]
    if model_id is not None:
        lacking.append(_lacking_vectors(model_id))
    return {"bool": {"should": lacking, "minimum_should_match": 1}}


def phases(model_id: str | None) -> list[dict[str, Any]]:
    """What a pass looks for, in order: events without stems and context (fresh ones,
    or all of them after a new context rule), then those that have them and lack the
    model's vectors (a new model's backfill)."""
    found = [_lacking_context()]
    if model_id is not None:
        marked = {"term": {ENRICHED_FIELD: CONTEXT_MARK}}
        found.append({"bool": {"filter": [marked, _lacking_vectors(model_id)]}})
    return found


def pending(
    client: Elasticsearch,
    alias: str,
    embedder: Embedder | None,
    *,
    within: dict[str, Any] | None = None,
) -> int:
    """How many events of `alias` (of the slices `within` selects) await enrichment
    (0 when the alias does not exist).

    Not lenient about the indices (`ignore_unavailable`): with it, Elasticsearch
    leaves out the indices a credential may not read and answers 0, as if nothing
    waited; without it, such a credential is refused (403) and told which role it
    needs."""
    query = among(pending_query(embedder.model_id if embedder else None), within)
    try:
        answer = client.count(index=alias, query=query)
    except NotFoundError:
        return 0
    return int(answer["count"])


def among(query: dict[str, Any], slices: dict[str, Any] | None) -> dict[str, Any]:
    """`query` among the events of `slices` (a filter; all events with None)."""
    return query if slices is None else {"bool": {"filter": [query, slices]}}


def refused(client: Elasticsearch, alias: str, embedder: Embedder | None) -> int:
    """How many events' texts `embedder`'s model refused: kept without its vector."""
    if embedder is None:
        return 0
    query = {"term": {REFUSED_FIELD: embedder.model_id}}
    try:  # as lenient as `pending`, no more: a credential that cannot read is told so
        return int(client.count(index=alias, query=query)["count"])
    except NotFoundError:
        return 0
