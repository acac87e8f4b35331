"""`backfill`: vectors for stored events that lack the embedder's, added in place.

Events lack a vector when they were stored while the embedder was down, before an
embedder was configured, or before a model change. This distribution has no
`_update_by_query`, so the backfill pages through the events that the model has not
processed yet (`embedding_models` lacks it), in the events' total order with
`search_after`, embeds each page and sends it back as bulk `update`s, routed like the
events. It is idempotent and resumable by construction: an event is found only until
its update lands, so a second run, or a run after a crash, starts where the first left
off. An event erased meanwhile is not brought back (an update never creates).

A model's first backfill maps its vector field, with the model's dimensions; a
model change is handled this way: the new model's vectors go to a field of their own,
and once the backfill is done, ingestion and search use it.
"""

import functools
from collections.abc import Callable
from typing import Any

import orjson
from elasticsearch import BadRequestError, Elasticsearch
from pydantic import BaseModel

from session_recall.core.order import event_order
from session_recall.embeddings import MODELS_FIELD, VECTORS_FIELD, Embedder, vector_key
from session_recall.indexer import bulk
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.errors import IndexerError, VectorFieldsMissing
from session_recall.indexer.retry import RetryPolicy, call_with_retries
from session_recall.indexer.vectors import mapped_models, vector_fields

# A page's texts are embedded in one call and its updates sent in one bulk request:
# a few hundred keeps both well under a second and a retry cheap.
DEFAULT_PAGE = 500


class BackfillSummary(BaseModel):
    """Counts of a run. `missing` is how many events lacked the model at the start."""

    model: str
    missing: int = 0
    embedded: int = 0
    no_vector: int = 0  # nothing to embed in the text (punctuation alone, say)
    gone: int = 0  # erased while the backfill ran
    failed: int = 0

    @property
    def done(self) -> int:
        return self.embedded + self.no_vector + self.gone + self.failed

    def line(self) -> str:
        text = (
            f"Model {self.model}: {self.missing} event(s) lacked its vectors; "
            f"{self.embedded} embedded"
        )
        if self.no_vector:
            text += f", {self.no_vector} with nothing to embed"
        if self.gone:
            text += f", {self.gone} erased meanwhile"
        if self.failed:
            text += f", {self.failed} failed (run it again)"
        return text + "."


def missing_query(model_id: str) -> dict[str, Any]:
    """Events the model has not processed yet."""
    return {"bool": {"must_not": [{"term": {MODELS_FIELD: model_id}}]}}


def backfill(
    client: Elasticsearch,
    alias: str,
    embedder: Embedder,
    *,
    page_size: int = DEFAULT_PAGE,
    policy: RetryPolicy | None = None,
    on_progress: Callable[[BackfillSummary], None] | None = None,
) -> BackfillSummary:
    """Add `embedder`'s vectors to every event of `alias` that lacks them.

    Raises an `EmbeddingError` when the embedder fails (what was done stays done: run
    it again later), `WriteUnavailable` when Elasticsearch does.
    """
    policy = policy or RetryPolicy()
    retrying = functools.partial(call_with_retries, policy=policy)
    retrying(lambda: map_vector_field(client, alias, embedder), what="map the vector field")
    query = missing_query(embedder.model_id)
    summary = BackfillSummary(model=embedder.model_id)
    summary.missing = int(
        retrying(lambda: client.count(index=alias, query=query), what="count the events")["count"]
    )
    if on_progress is not None:
        on_progress(summary)
    after: list[Any] | None = None
    stats = BulkStats()
    while True:
        page = functools.partial(
            client.search,
            index=alias,
            query=query,
            sort=event_order(),
            size=page_size,
            source_includes=["text", MODELS_FIELD],
            track_total_hits=False,
            search_after=after,
            # A page missing a shard would end the backfill early, as if all were done.
            allow_partial_search_results=False,
        )
        hits = retrying(page, what="find events without vectors").body["hits"]["hits"]
        if not hits:
            return summary
        after = hits[-1]["sort"]
        vectors = embedder.embed([hit["_source"].get("text", "") for hit in hits])
        actions = [
            _update(hit, embedder, vector) for hit, vector in zip(hits, vectors, strict=True)
        ]
        responses = bulk.send(client, actions, policy=policy, stats=stats)
        for vector, response in zip(vectors, responses, strict=True):
            if 200 <= response.status < 300:
                if vector is None:
                    summary.no_vector += 1
                else:
                    summary.embedded += 1
            elif response.status == 404:
                summary.gone += 1
            else:
                summary.failed += 1
        if on_progress is not None:
            on_progress(summary)


def map_vector_field(client: Elasticsearch, alias: str, embedder: Embedder) -> None:
    """Map the model's vector field on every index of the alias, with its dimensions.

    Done before the first update, so that a model whose first events have nothing to
    embed still has its field, and ingestion with it is allowed (see `check_index`).
    The field is mapped as the index's own dynamic template for vectors says (the
    mapping `setup` installed), with the dimensions made explicit.
    """
    mapped_models(client, alias)  # raises for an index that predates the vector fields
    mappings = client.indices.get_mapping(index=alias).body
    for index, entry in sorted(mappings.items()):
        template = _vector_template(entry.get("mappings", {}))
        field = {**template, "dims": embedder.dims}
        properties = {VECTORS_FIELD: {"properties": {vector_key(embedder.model_id): field}}}
        try:
            client.indices.put_mapping(index=index, properties=properties)
        except BadRequestError as err:
            raise IndexerError(
                f"The vector field of {embedder.model_id!r} exists in {index} with another "
                f"shape: {err.error}.",
                hint="The model's output size changed: give it another model id.",
            ) from None


def _vector_template(mappings: dict[str, Any]) -> dict[str, Any]:
    for entry in mappings.get("dynamic_templates", []):
        for template in entry.values():
            if template.get("path_match") == f"{VECTORS_FIELD}.*":
                return dict(template["mapping"])
    raise VectorFieldsMissing(
        "The index has no template for vector fields: it was made by an earlier release.",
        hint="Run `session-recall setup` once; it adds it to the existing indices.",
    )


def _update(hit: dict[str, Any], embedder: Embedder, vector: Any) -> bulk.Action:
    target = {"_index": hit["_index"], "_id": hit["_id"], "retry_on_conflict": 3}
    if hit.get("_routing") is not None:
        target["routing"] = hit["_routing"]
    fields = vector_fields(embedder, vector)
    processed = hit["_source"].get(MODELS_FIELD) or []
    if isinstance(processed, str):
        processed = [processed]
    fields[MODELS_FIELD] = sorted({*processed, embedder.model_id})
    return {"update": target}, orjson.dumps({"doc": fields}, option=orjson.OPT_SERIALIZE_NUMPY)
