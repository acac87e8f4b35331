"""Session events as the indexer's tests feed them: dicts, NDJSON files, counts."""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
from elasticsearch import Elasticsearch

from session_recall.indexer.checkpoint import load

BASE_SECOND = 1_782_864_000  # 2026-07-01T00:00:00Z


def event(i: int, *, user: str = "alice", session: str | None = None, **fields: Any) -> dict:
    """Event number `i`: a distinct id, timestamp and text for every `i`."""
    seconds, nanos = divmod(i, 1000)
    stamp = f"2026-07-01T00:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{nanos:03d}000001Z"
    return {
        "event_id": f"e-{i}",
        "user_id": user,
        "session_id": session or f"s-{i // 100}",
        "timestamp": stamp,
        "type": "user_message" if i % 2 else "assistant_message",
        "text": f"message {i} about the weather",
        **fields,
    }


def ndjson(events: Iterable[Any]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def write_ndjson(path: Path, events: Iterable[Any]) -> Path:
    path.write_bytes(ndjson(events))
    return path


def append_ndjson(path: Path, events: Iterable[Any]) -> None:
    with path.open("ab") as file:
        file.write(ndjson(events))


def stored(es: Elasticsearch, alias: str, **terms: str) -> int:
    """How many documents match `terms`, after a refresh."""
    es.indices.refresh(index=alias)
    query = {"bool": {"filter": [{"term": {k: v}} for k, v in terms.items()]}}
    return int(es.count(index=alias, query=query)["count"])


def duplicated_event_ids(es: Elasticsearch, alias: str) -> list[str]:
    """event_ids stored more than once (the tests give each event its own id)."""
    es.indices.refresh(index=alias)
    body = es.search(
        index=alias,
        size=0,
        aggs={"dupes": {"terms": {"field": "event_id", "min_doc_count": 2, "size": 100}}},
    ).body
    return [bucket["key"] for bucket in body["aggregations"]["dupes"]["buckets"]]


def checkpoint_offset(path: Path) -> int:
    """The offset an ingest's checkpoint file holds, 0 before there is one. A file
    that holds no position raises `UnreadableCheckpoint`: the checkpoint is replaced
    by a rename, so a reader never meets a partial one."""
    saved = load(path)
    return saved.offset if saved else 0
