"""JSON text in, a value out, refusing what a lenient parser would take silently.

- A key given twice is refused at any depth: `{"userId": "alice", "userId": "bob"}`
  would otherwise be stored as bob's, by whichever value the parser kept.
- A leading UTF-8 byte order mark (some editors write one) is skipped.
- Bytes that are not UTF-8 are named as such, not as a decoder's internals.

orjson parses first: it is several times faster, and what it refuses (integers past 64
bits, invalid UTF-8) the client could not send on anyway. Duplicate keys are looked
for only when the text is not exactly orjson's own rendering of the value: a text that
is (any compact producer's) holds each key once, since a dropped duplicate would make
the rendering shorter than the text.
"""

import json
from typing import Any

import orjson

BOM = b"\xef\xbb\xbf"
_CONTAINERS = (dict, list)  # a tuple: `dict | list` would build a union per call


class InvalidJson(ValueError):
    """The text is not one JSON value this project takes; `str()` says why."""


def loads(data: bytes) -> Any:
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if "UTF-8" in str(err):
            raise InvalidJson(
                "the text is not UTF-8 (a binary file, or another encoding?)"
            ) from None
        raise InvalidJson(str(err)) from None
    # Whitespace around the value holds no key: a line's `\r`, say, changes nothing.
    if isinstance(value, _CONTAINERS):
        rendered = orjson.dumps(value)
        if rendered != data and rendered != data.strip():
            json.loads(data, object_pairs_hook=_unique)
    return value


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise InvalidJson(f"the key {key!r} is given twice")
        value[key] = item
    return value
