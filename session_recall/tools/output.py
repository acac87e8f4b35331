"""Tool output exactly as the reference tools give it.

A compact JSON array of `{"sessionId","timestamp","type","text"}` objects in
chronological order (`conversation_search` leaves out `sessionId`), or the sentence
"No results found." Timestamps are rendered like Java's `Instant.toString`. A row whose
text was cut (`tools.bounds`) carries its `eventId` too, by which the whole event is read;
so does every row of a tool the application builds for an agent that saves memories
(`with_event_id`), as save_memory takes event ids as sources.
"""

import json
from collections.abc import Iterable
from typing import Any

import orjson

from session_recall.recall import RecallItem

NO_RESULTS = "No results found."


def render_items(
    items: Iterable[RecallItem], *, with_session: bool = True, with_event_id: bool = False
) -> str:
    rows: list[dict[str, Any]] = []
    for item in items:
        row: dict[str, Any] = {"sessionId": item.session_id} if with_session else {}
        row |= {"timestamp": item.timestamp.isoformat(), "type": item.type, "text": item.text}
        if with_event_id or item.full_length is not None:
            row["eventId"] = item.event_id
        rows.append(row)
    if not rows:
        return NO_RESULTS
    # Compact separators and raw UTF-8, as Jackson writes them in the reference. orjson
    # writes strings and nulls exactly as json.dumps does below, several times faster;
    # it refuses a lone surrogate, which json.dumps writes as is.
    try:
        return orjson.dumps(rows).decode()
    except orjson.JSONEncodeError:
        return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
