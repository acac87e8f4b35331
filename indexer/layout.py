"""The partitioned layout as the writer meets it in Elasticsearch: which period the
alias partitions by (the index template's `_meta`, written by `setup`), and making a
partition from the template ahead of its first bulk."""

from elasticsearch import BadRequestError, Elasticsearch, NotFoundError

from session_recall.indexer.partitions import GRANULARITIES, Granularity

# Where `setup` records the period in the index template's `_meta`.
META_KEY = "partition"


def granularity(client: Elasticsearch, alias: str) -> Granularity | None:
    """The period `alias` is partitioned by; None when `setup` has not installed the
    partitioned layout (no template, or one of the single-index layout)."""
    try:
        found = client.indices.get_index_template(name=alias).body["index_templates"]
    except NotFoundError:
        return None
    value = found[0]["index_template"].get("_meta", {}).get(META_KEY)
    for known in GRANULARITIES:
        if value == known:
            return known
    return None


def ensure_partition(client: Elasticsearch, index: str) -> bool:
    """Create `index` from the template unless it exists; True if this call made it.

    Made explicitly rather than by the bulk's auto-creation, which a cluster may have
    turned off (`action.auto_create_index`); the template gives it the mappings,
    the settings and the read alias either way.
    """
    if client.indices.exists(index=index):
        return False
    try:
        client.indices.create(index=index, wait_for_active_shards="1")
    except BadRequestError as err:
        # Another writer won the race: that is the outcome we wanted.
        if err.error != "resource_already_exists_exception":
            raise
        return False
    return True
