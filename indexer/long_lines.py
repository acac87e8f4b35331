"""A line too long to be an event (`lines.DEFAULT_MAX_LINE_BYTES`): skipped without
being read whole, and dead-lettered with where it starts and the ids its start holds,
so that whoever reads the dead-letter file can tell whose event it was.

The ids are read from the line's first `lines.HEAD_BYTES`, one top-level member at a
time with the standard JSON decoder: up to the first member whose value runs past
them (the long text, most often), or anything that is not JSON.
"""

import json
import re
from dataclasses import dataclass

from session_recall.core.echo import echoed
from session_recall.core.limits import MAX_ID_CHARS
from session_recall.indexer.event import Event

_ID_FIELDS = ("event_id", "user_id", "session_id", "contact_id", "inbox_id")
# Each id by the names a producer may give it (snake_case or camelCase).
_NAMES = {
    name: field
    for field in _ID_FIELDS
    for name in (field, Event.model_fields[field].alias or field)
}
_SPACE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class LongLine:
    """What the dead-letter file keeps of a line too long: the input offset where it
    starts, and its first bytes."""

    offset: int
    head: bytes

    def ids(self) -> dict[str, str]:
        """The ids the line's start gives, by their field names (none if unreadable)."""
        return ids_in(self.head)


def ids_in(head: bytes) -> dict[str, str]:
    """The ids among the top-level members of the JSON object that `head` begins."""
    # A cut may split the last character: it is dropped with what follows.
    text = head.decode("utf-8", "ignore")
    found: dict[str, str] = {}
    position = _skip(text, 0)
    if not text.startswith("{", position):
        return found
    position += 1
    while True:
        try:
            key, position = _DECODER.raw_decode(text, _skip(text, position))
            position = _skip(text, position)
            if not isinstance(key, str) or not text.startswith(":", position):
                return found
            value, position = _DECODER.raw_decode(text, _skip(text, position + 1))
        except ValueError:  # runs past the head, or is no JSON
            return found
        field = _NAMES.get(key)
        if field is not None and isinstance(value, str):
            found[field] = value if len(value) <= MAX_ID_CHARS else echoed(value)
        position = _skip(text, position)
        if not text.startswith(",", position):
            return found
        position += 1


def _skip(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return position if match is None else match.end()
