"""The HTTP client of a served model (the embeddings endpoint, a `/rerank` endpoint),
kept for its owner's life: its pool keeps a connection to the server between calls
(closed after 5 s idle), so a query pays the server's time, not a new connection's
(40 to 45 ms a query with a client per call)."""

import httpx


class PooledHttp:
    """A base for the clients of one endpoint: `_http`, their pooled client, closed by
    `close` or when the owner goes, whoever held it."""

    _http: httpx.Client

    def _open_http(
        self, *, timeout_s: float, api_key: str | None, transport: httpx.BaseTransport | None
    ) -> None:
        self._http = httpx.Client(
            timeout=timeout_s,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            transport=transport,
        )

    def close(self) -> None:
        """Close the pooled connections (the client is not used afterwards)."""
        self._http.close()

    def __del__(self) -> None:
        http = getattr(self, "_http", None)
        if http is not None:
            http.close()
