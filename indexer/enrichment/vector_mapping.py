"""The enrichment's vector fields on the indices: whether an alias takes a model's
vectors (`check_index`, asked by the writer before its first write), which models are
mapped, and the mapping of a new model's field, with its dimensions.

Each model's vectors go to a field of their own (`embeddings.<model>`): a model
change maps a new field, and the backfill fills it.
"""

import warnings
from typing import Any

from elasticsearch import BadRequestError, Elasticsearch, ElasticsearchWarning, NotFoundError

from session_recall.core.partitions import parse_partition
from session_recall.embeddings import VECTORS_FIELD, Embedder, vector_key
from session_recall.indexer.enrichment.context_rule import CONTEXT_FIELD, CONTEXT_OF_FIELD
from session_recall.indexer.errors import IndexerError, VectorFieldsMissing


def check_index(client: Elasticsearch, alias: str, embedder: Embedder) -> str | None:
    """Whether `embedder`'s vectors may be written to `alias`: None when they may, else
    why not (an index events go to predates the vector fields; events then go without).

    The alias may hold vectors of other models only (the model was changed): the new
    model's field is made by the enrichment pass (its backfill maps it), so until then
    events go without vectors, and the pass adds them. An alias that does not exist
    passes: the bulk request says what is wrong with it.
    """
    try:
        aliases = client.indices.get_alias(name=alias).body
        mappings = client.indices.get_mapping(index=alias).body
    except NotFoundError:
        return None
    models: set[str] = set()
    for entry in mappings.values():
        properties = entry.get("mappings", {}).get("properties", {})
        models.update(properties.get(VECTORS_FIELD, {}).get("properties", {}))
    mine = vector_key(embedder.model_id)
    if models and mine not in models:
        return (
            f"{alias!r} holds vectors of {', '.join(sorted(models))}, not yet of the "
            f"configured model {embedder.model_id!r}: the enrichment pass adds them "
            "(`session-recall embed`, or serve's in the background)"
        )
    for index in _written_indices(aliases, alias):
        properties = mappings.get(index, {}).get("mappings", {}).get("properties", {})
        if VECTORS_FIELD not in properties:
            return (
                f"the index {index} has no vector fields (an earlier release made it): "
                "run `session-recall setup`, then `session-recall embed`"
            )
    return None


def mapped_models(client: Elasticsearch, alias: str) -> set[str]:
    """The vector fields (model keys) mapped on the alias's indices; none when the
    alias does not exist. Raises `VectorFieldsMissing` for an index that predates them."""
    try:
        mappings = client.indices.get_mapping(index=alias).body
    except NotFoundError:
        return set()
    models: set[str] = set()
    for index, entry in sorted(mappings.items()):
        properties = entry.get("mappings", {}).get("properties", {})
        if VECTORS_FIELD not in properties:
            raise VectorFieldsMissing(
                f"The index {index} has no vector fields: it was made by an earlier release.",
                hint="Run `session-recall setup` once; it adds them to the existing indices.",
            )
        models.update(properties[VECTORS_FIELD].get("properties", {}))
    return models


def _written_indices(aliases: dict[str, Any], alias: str) -> list[str]:
    """The indices events go to: every partition behind the alias (an event goes to
    its own period's, however old), and the write index of a single-index layout."""
    indices = sorted(aliases)
    written = [index for index in indices if parse_partition(alias, index) is not None]
    for index in indices:
        if aliases[index].get("aliases", {}).get(alias, {}).get("is_write_index"):
            written.append(index)
    if not written and len(indices) == 1:
        written = indices
    return written


def check_fields(client: Elasticsearch, alias: str) -> None:
    """Raise `IndexerError` when an index of `alias` lacks the enriched fields: it was
    made by an earlier release, and every update would be refused (strict mapping)."""
    try:
        mappings = client.indices.get_mapping(index=alias).body
    except NotFoundError:
        return  # nothing to enrich: the pass finds no event
    for index, entry in sorted(mappings.items()):
        properties = entry.get("mappings", {}).get("properties", {})
        if CONTEXT_FIELD not in properties or CONTEXT_OF_FIELD not in properties:
            raise IndexerError(
                f"The index {index} lacks fields of the context rule: an earlier release made it.",
                hint="Run `session-recall setup` once; it adds them to the existing indices.",
            )


def map_vector_field(client: Elasticsearch, alias: str, embedder: Embedder) -> None:
    """Map the model's vector field on every index of the alias, with its dimensions.

    Done before the first update, so that a model whose first events have nothing to
    embed still has its field, and ingestion with it is allowed (see `check_index`).
    The field is mapped as the index's own dynamic template for vectors says (the
    mapping `setup` installed), with the dimensions made explicit.
    """
    mapped_models(client, alias)  # raises for an index that predates the vector fields
    mappings = client.indices.get_mapping(index=alias).body
    key = vector_key(embedder.model_id)
    for index, entry in sorted(mappings.items()):
        found = entry.get("mappings", {})
        template = _vector_template(found)
        vectors = found.get("properties", {}).get(VECTORS_FIELD, {}).get("properties", {})
        if vectors.get(key, {}).get("dims") == embedder.dims:
            continue  # mapped by an earlier pass
        field = {**template, "dims": embedder.dims}
        properties = {VECTORS_FIELD: {"properties": {key: field}}}
        try:
            with warnings.catch_warnings():
                # The enrich role maps it through its `index` privilege, which 9.x still
                # allows with a deprecation notice, and no user can act on.
                warnings.simplefilter("ignore", ElasticsearchWarning)
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
        hint="Run `session-recall setup` once; it adds them to the existing indices.",
    )
