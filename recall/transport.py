"""The one place recall talks to Elasticsearch: `search`, and nothing that writes.

Engine errors that a caller can act on become domain errors with a next step.
"""

from typing import Any

from elasticsearch import ApiError, ConnectionTimeout, Elasticsearch, NotFoundError
from elasticsearch import ConnectionError as ConnectionFailed

from recall.errors import IndexNotFound, SearchRefused
from session_recall.errors import ElasticsearchUnavailable


def search(
    client: Elasticsearch,
    *,
    alias: str,
    body: dict[str, Any],
    routing: str | None,
    filter_path: str | None = None,
) -> dict[str, Any]:
    try:
        response = client.search(index=alias, routing=routing, body=body, filter_path=filter_path)
    except NotFoundError as err:
        if err.error != "index_not_found_exception":
            raise
        raise IndexNotFound(
            f"There is no index or alias {alias!r} to search.",
            hint="Check SESSION_RECALL_INDEX, or run `session-recall setup`.",
        ) from None
    except (ConnectionFailed, ConnectionTimeout) as err:
        raise ElasticsearchUnavailable(
            f"Elasticsearch did not answer the search: {type(err).__name__}.",
            hint="Check ELASTICSEARCH_URL and that the node runs, then retry.",
        ) from None
    except ApiError as err:
        # Overload and server errors pass with time; anything else (a key without read
        # privilege, a rejected request) needs someone to act, and retrying will not help.
        if err.status_code == 429 or err.status_code >= 500:
            raise ElasticsearchUnavailable(
                f"Elasticsearch could not run the search now ({err.status_code} {err.error}).",
                hint="Retry in a few seconds.",
            ) from None
        raise SearchRefused(
            f"Elasticsearch refused the search ({err.status_code} {err.error}).",
            hint=f"Check that the credentials may read {alias!r} (privilege 'read').",
        ) from None
    body_out: dict[str, Any] = response.body
    return body_out


def hits(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The hits of a response; `filter_path` drops the key entirely when there are none."""
    found: list[dict[str, Any]] = response.get("hits", {}).get("hits", [])
    return found
