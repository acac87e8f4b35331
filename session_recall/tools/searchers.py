"""The searchers of the configured alias, for the CLI, HTTP and MCP adapters."""

from elasticsearch import Elasticsearch

from session_recall.config import Settings
from session_recall.recall import Searchers


def searchers_for(client: Elasticsearch, settings: Settings) -> Searchers:
    return Searchers(client=client, alias=settings.index, cursor_key=settings.signing_key())
