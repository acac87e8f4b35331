"""What every stored context should be, computed here from the stored turns alone: the
stems of an event's text and of the `CONTEXT_REACH` turns before it in its session."""

from elasticsearch import Elasticsearch

from session_recall.core.order import event_order
from session_recall.core.stems import stems
from session_recall.indexer.enrichment.context_rule import CONTEXT_MARK, CONTEXT_REACH


def assert_contexts_complete(es: Elasticsearch, alias: str, *, user: str | None = None) -> int:
    """Every event of `alias` (of `user`) is enriched and its context holds exactly the
    turns before it that are stored; how many events were checked."""
    es.indices.refresh(index=alias)
    query = {"term": {"user_id": user}} if user else {"match_all": {}}
    hits = es.search(index=alias, query=query, size=10_000, sort=event_order())["hits"]["hits"]
    sessions: dict[tuple[str, str], list[dict]] = {}
    for hit in hits:
        source = hit["_source"]
        sessions.setdefault((source["user_id"], source["session_id"]), []).append(hit)
    for turns in sessions.values():
        for i, turn in enumerate(turns):
            source = turn["_source"]
            before = turns[max(i - CONTEXT_REACH, 0) : i]
            expected = " ".join(
                part for part in (stems(t["_source"]["text"]) for t in [*before, turn]) if part
            )
            assert CONTEXT_MARK in source.get("enriched", []), source["event_id"]
            assert source.get("context") == expected, (source["event_id"], source.get("context"))
            assert source.get("context_of") == [t["_id"] for t in before], source["event_id"]
    return len(hits)
