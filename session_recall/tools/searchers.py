"""The searchers of the configured alias, for the CLI, HTTP and MCP adapters."""

from elasticsearch import Elasticsearch

from session_recall.config import Settings
from session_recall.factories import embedder_for, reranker_for
from session_recall.recall import Searchers


def searchers_for(
    client: Elasticsearch,
    settings: Settings,
    *,
    search_timeout: float | None = None,
    page_bytes: int | None = None,
) -> Searchers:
    """`search_timeout`: seconds Elasticsearch may spend on each search; None: no limit.
    `page_bytes`: the bytes of a read's page; None: the library's default."""
    return Searchers(
        client=client,
        alias=settings.index,
        cursor_key=settings.signing_key(),
        embedder=embedder_for(settings),
        search_timeout=search_timeout,
        page_bytes=page_bytes,
        reranker=reranker_for(settings),
        rerank_candidates=settings.reranker_candidates,
    )
