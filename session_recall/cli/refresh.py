"""The refresh at the end of a command that stored or enriched events."""

import click
from elasticsearch import ApiError, AuthorizationException, Elasticsearch, TransportError


def refresh(client: Elasticsearch, alias: str) -> None:
    """One refresh, so that what was just stored is searchable when the command returns
    (a search right after an ingest would otherwise miss up to 1 s of it). Everything is
    stored by then: a node gone at the last moment is worth a warning, not a failed run.
    The ingest role may not refresh: without it, what was stored becomes searchable
    within the index's refresh interval (1 s), as it would anyway."""
    try:
        client.indices.refresh(index=alias)
    except AuthorizationException:
        return
    except (ApiError, TransportError) as err:
        reason = f"{err.status_code}: {err.error}" if isinstance(err, ApiError) else err.message
        click.echo(
            f"Warning: the events are stored, but the final refresh failed ({reason}); "
            "they may take a second to become searchable.",
            err=True,
        )
