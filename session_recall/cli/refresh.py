"""The refresh at the end of a command that stored or enriched events."""

import click
from elasticsearch import ApiError, Elasticsearch, TransportError


def refresh(client: Elasticsearch, alias: str) -> None:
    """One refresh, so that what was just stored is searchable when the command returns
    (a search right after an ingest would otherwise miss up to 1 s of it). Everything is
    stored by then: a refusal (a credential narrower than the ingest role, which has
    `maintenance`) or a node gone at the last moment is worth a warning, not a failed run."""
    try:
        client.indices.refresh(index=alias)
    except (ApiError, TransportError) as err:
        reason = f"{err.status_code}: {err.error}" if isinstance(err, ApiError) else err.message
        click.echo(
            f"Warning: the events are stored, but the final refresh failed ({reason}); "
            "they may take a second to become searchable.",
            err=True,
        )
