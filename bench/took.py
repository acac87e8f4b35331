"""Elasticsearch's own `took` for the searches an engine makes, seen at a seam.

`TookRecorder` stands in for the client: it passes every call through, and adds up the
`took` of each search (or msearch) response. Elasticsearch reports `took` in whole milliseconds,
truncated, so the overhead computed from it is overstated by up to 1 ms per request.
"""

from typing import Any

from elasticsearch import Elasticsearch


class TookRecorder:
    """A client wrapper; `take()` returns and resets the sum of `took` and the count."""

    def __init__(self, client: Elasticsearch) -> None:
        self._client = client
        self._took_ms = 0
        self._requests = 0
        self.last_requests: list[dict[str, Any]] = []

    def search(self, **kwargs: Any) -> Any:
        filter_path = kwargs.get("filter_path")
        if filter_path:
            # A filtered response drops `took`; ask for it back (a few bytes more).
            kwargs["filter_path"] = f"{filter_path},took"
        response = self._client.search(**kwargs)
        self._took_ms += int(response.body.get("took", 0))
        self._requests += 1
        self.last_requests.append(kwargs)
        return response

    def msearch(self, **kwargs: Any) -> Any:
        """Several searches in one round trip: one request, and the batch's `took`."""
        response = self._client.msearch(**kwargs)
        self._took_ms += int(response.body.get("took", 0))
        self._requests += 1
        self.last_requests.append(kwargs)
        return response

    def field_caps(self, **kwargs: Any) -> Any:
        return self._client.field_caps(**kwargs)

    def take(self) -> tuple[int, int]:
        took, requests = self._took_ms, self._requests
        self._took_ms = self._requests = 0
        self.last_requests = []
        return took, requests

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)
