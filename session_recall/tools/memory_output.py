"""memory_search's output: hits in rank order, each with its neighbours and score.

    [{"sessionId": ..., "timestamp": ..., "type": ..., "text": ...,
      "before": [{"timestamp": ..., "type": ..., "text": ...}], "after": [...],
      "score": {"keywordRank": 3, "vectorRank": 1, "fused": 0.0323}}]

Neighbours come from the hit's own session, so they carry no sessionId. An event whose
text was cut (`tools.bounds`) carries its `eventId` too, by which the whole event is read.
"""

import json
from typing import Any

from session_recall.recall import MemoryHit, MemorySearchResult, RecallItem
from session_recall.tools.output import NO_RESULTS


def memory_rows(result: MemorySearchResult, *, with_event_id: bool = False) -> list[dict[str, Any]]:
    """The hits' rows; `with_event_id` adds each hit's `eventId` (for save_memory)."""
    rows = [_row(hit) for hit in result.hits]
    if with_event_id:
        for row, hit in zip(rows, result.hits, strict=True):
            row["eventId"] = hit.event.event_id
    return rows


def memory_document(result: MemorySearchResult) -> dict[str, Any]:
    """The `--format json` document: the rows, and how the search ran."""
    return {
        "mode": result.mode,
        "requestedMode": result.requested_mode,
        "notice": result.notice,
        "hits": memory_rows(result),
    }


def render_memory(result: MemorySearchResult, *, with_event_id: bool = False) -> str:
    """What a model reads: the rows as compact JSON, or "No results found."."""
    rows = memory_rows(result, with_event_id=with_event_id)
    if not rows:
        return NO_RESULTS
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


def _event(item: RecallItem) -> dict[str, Any]:
    row = {"timestamp": item.timestamp.isoformat(), "type": item.type, "text": item.text}
    return row if item.full_length is None else row | {"eventId": item.event_id}


def _row(hit: MemoryHit) -> dict[str, Any]:
    score = hit.score
    return {
        "sessionId": hit.event.session_id,
        **_event(hit.event),
        "before": [_event(item) for item in hit.before],
        "after": [_event(item) for item in hit.after],
        "score": {
            "keywordRank": score.keyword_rank,
            "vectorRank": score.vector_rank,
            "fused": round(score.fused, 6),
        },
    }
