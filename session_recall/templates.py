"""`setup`: install the index templates and bootstrap the first index behind the alias."""

from dataclasses import dataclass

from elasticsearch import BadRequestError, Elasticsearch

from session_recall.mappings import index_templates, mapping_update


@dataclass(frozen=True)
class SetupResult:
    alias: str
    write_index: str
    created_index: bool


def install(client: Elasticsearch, alias: str) -> SetupResult:
    """Install (or update) the templates, then make sure `alias` has a write index.

    Safe to run any number of times: templates are PUT as they are in `mappings/`, and
    the bootstrap index is created only when the alias does not exist yet.
    """
    templates = index_templates(alias)
    for name, body in templates.components.items():
        client.cluster.put_component_template(name=name, **body)
    client.indices.put_index_template(
        name=templates.index_template_name, **templates.index_template
    )

    existing = _write_index(client, alias)
    if existing is not None:
        # Indices made by an earlier release gain the fields added since.
        client.indices.put_mapping(index=alias, **mapping_update())
        return SetupResult(alias=alias, write_index=existing, created_index=False)
    try:
        client.indices.create(
            index=templates.first_index,
            aliases={alias: {"is_write_index": True}},
            wait_for_active_shards="1",
        )
    except BadRequestError as err:
        # Another `setup` won the race: that is the outcome we wanted.
        if err.error != "resource_already_exists_exception":
            raise
        return SetupResult(alias=alias, write_index=templates.first_index, created_index=False)
    return SetupResult(alias=alias, write_index=templates.first_index, created_index=True)


def _write_index(client: Elasticsearch, alias: str) -> str | None:
    if not client.indices.exists_alias(name=alias):
        return None
    for index, entry in client.indices.get_alias(name=alias).body.items():
        if entry["aliases"][alias].get("is_write_index"):
            return index
    return None
