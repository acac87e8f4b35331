"""`--show-query`: a stand-in client that records the request bodies instead of sending them.

The searchers build their requests exactly as they would for Elasticsearch; this
client answers every search with no hits, so nothing reaches a server and nothing is
needed to run it.
"""

from types import SimpleNamespace
from typing import Any

_EMPTY: dict[str, Any] = {"hits": {"hits": []}, "aggregations": {}}


class QueryRecorder:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def search(self, *, index: str, body: dict[str, Any], routing: str | None = None,
               **params: Any) -> SimpleNamespace:  # fmt: skip
        request: dict[str, Any] = {"index": index, "routing": routing, "body": body}
        request |= {k: v for k, v in params.items() if v is not None}
        self.requests.append(request)
        return SimpleNamespace(body=_EMPTY)

    def field_caps(self, **_: Any) -> SimpleNamespace:
        """No partitions known: the first page is shown as one search."""
        return SimpleNamespace(body={"indices": []})

    def msearch(self, *, index: str, searches: list[dict[str, Any]], routing: str | None = None,
                **params: Any) -> SimpleNamespace:  # fmt: skip
        bodies = searches[1::2]  # header, body, header, body...
        for header, body in zip(searches[0::2], bodies, strict=True):
            self.search(index=index, body=body, routing=routing, **params, **header)
        return SimpleNamespace(body={"responses": [_EMPTY for _ in bodies]})
