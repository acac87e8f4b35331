"""Tool output over the text limit is kept cut, not refused.

An agent's long tool output (a file read, a command's log) is the event most likely to
pass `EventLimits.max_text_bytes`, and losing it loses the memory of what the agent
saw. So events of the types in `CUT_TYPES` (and those a deployment adds, with
`--truncate-types`) whose text is over the limit are stored with their text cut to
it: the head and the tail, each half of what the limit leaves beside a mark of the
cut, and `truncated`, the size in bytes of the text as it was sent. The words of the
kept parts are found as any other's. Events of other types over the limit are
refused, as before: a user's or an assistant's message that long is a producer's bug.
"""

from session_recall.indexer.event import Event

# The types agent frameworks give tool calls and their outputs.
CUT_TYPES = frozenset({"tool_call", "tool_result", "tool_response"})


def cut(event: Event, limit: int) -> Event:
    """`event` with its text cut to `limit` bytes (UTF-8), head and tail kept, and the
    size it had in `truncated`. Its id stays the one it came with (or was derived from
    its whole text), so a replay meets the stored copy."""
    data = event.text.encode("utf-8", "surrogatepass")
    mark = f"\n…[truncated, {len(data):,} bytes]…\n"
    room = max(limit - len(mark.encode("utf-8")), 0)
    head, tail = room - room // 2, room // 2
    # A cut inside a character drops that character; the rest decodes as it was.
    kept = data[:head].decode("utf-8", "ignore") + mark
    if tail:
        kept += data[len(data) - tail :].decode("utf-8", "ignore")
    return event.model_copy(update={"text": kept, "truncated": len(data)})
