"""JSON text in, a value out, refusing what a lenient parser would take silently.

- A key given twice is refused at any depth: `{"userId": "alice", "userId": "bob"}`
  would otherwise be stored as bob's, by whichever value the parser kept.
- A leading UTF-8 byte order mark (some editors write one) is skipped.
- Bytes that are not UTF-8 are named as such, not as a decoder's internals.
- A value nested deeper than `MAX_DEPTH` is refused: orjson renders at most 254
  levels and Python's parser stops at its recursion limit, so deeper values could
  neither be checked nor stored.

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
# Deeper than any event's metadata needs, and within what orjson can render (254).
MAX_DEPTH = 200
_TOO_DEEP = f"the value nests more than {MAX_DEPTH} levels deep"
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
        if "depth limit" in str(err):
            raise InvalidJson(_TOO_DEEP) from None
        raise InvalidJson(str(err)) from None
    # Whitespace around the value holds no key: a line's `\r`, say, changes nothing.
    if isinstance(value, _CONTAINERS):
        try:
            rendered = orjson.dumps(value)
        except orjson.JSONEncodeError:  # orjson's own nesting limit (254 levels)
            raise InvalidJson(_TOO_DEEP) from None
        if rendered != data and rendered != data.strip():
            try:
                json.loads(data, object_pairs_hook=_unique)
            except RecursionError:
                raise InvalidJson(_TOO_DEEP) from None
        if rendered.count(b"[") + rendered.count(b"{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
            raise InvalidJson(_TOO_DEEP)
    return value


def _depth(value: Any) -> int:
    """How deep containers nest in `value` (1 for a flat object), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            return depth
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, _CONTAINERS))
    return deepest


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise InvalidJson(f"the key {key!r} is given twice")
        value[key] = item
    return value
