"""JSON text in, a value out, refusing what a lenient parser would take silently.

- A key given twice is refused at any depth: `{"userId": "alice", "userId": "bob"}`
  would otherwise be stored as bob's, by whichever value the parser kept.
- A leading UTF-8 byte order mark (some editors write one) is skipped.
- Bytes that are not UTF-8 are named as such, not as a decoder's internals.
- A value nested deeper than `MAX_DEPTH` is refused: orjson renders at most 254
  levels and Python's parser stops at its recursion limit, so deeper values could
  neither be checked nor stored.

orjson parses first: it is several times faster. Duplicate keys are looked for only
when the text is not exactly orjson's own rendering of the value: a text that is (any
compact producer's) holds each key once, since a dropped duplicate would make the
rendering shorter than the text.

An integer beyond 64 bits is kept exact: orjson would read it as the nearest float
(`18446744073709551616` as `1.8446744073709552e+19`), so a text with a number of 19
digits or more, where such an integer can be, is read again by Python's parser, which
keeps every integer as it is. Whatever stores the value then refuses it by name
(`writer`): no JSON reader downstream (Elasticsearch's, the client's) keeps it exact.
"""

import json
import re
from typing import Any

import orjson

BOM = b"\xef\xbb\xbf"
# Deeper than any event's metadata needs, and within what orjson can render (254).
MAX_DEPTH = 200
_TOO_DEEP = f"the value nests more than {MAX_DEPTH} levels deep"
_CONTAINERS = (dict, list)  # a tuple: `dict | list` would build a union per call
# Where an integer orjson cannot hold may be: 19 digits reach below -2**63, 20 past 2**64,
# where a number starts (the text's start, or after `:`, `[` or `,`). A string's digits
# rarely match (an id as `"1234567890123456789"` does not), and cost only a slower parse.
_LONG_DIGITS = re.compile(rb"(?:^|[:\[,])\s*-?\d{19}")


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
    if _LONG_DIGITS.search(data) is not None:
        # Keys checked on the way, and the value is Python's: its integers exact.
        value = _python_loads(data)
        if isinstance(value, _CONTAINERS) and _depth(value) > MAX_DEPTH:
            raise InvalidJson(_TOO_DEEP)
        return value
    # Whitespace around the value holds no key: a line's `\r`, say, changes nothing.
    if isinstance(value, _CONTAINERS):
        try:
            rendered = orjson.dumps(value)
        except orjson.JSONEncodeError:  # orjson's own nesting limit (254 levels)
            raise InvalidJson(_TOO_DEEP) from None
        if rendered != data and rendered != data.strip():
            _python_loads(data)
        if rendered.count(b"[") + rendered.count(b"{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
            raise InvalidJson(_TOO_DEEP)
    return value


def _python_loads(data: bytes) -> Any:
    """`data` read by Python's parser, a key given twice refused: text orjson took, so
    valid JSON (Python's would also take `NaN`, which orjson refused before)."""
    try:
        return json.loads(data, object_pairs_hook=_unique)
    except RecursionError:
        raise InvalidJson(_TOO_DEEP) from None


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


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact UTF-8 JSON of `value`, exactly as `json.dumps(value, ensure_ascii=False,
    separators=(",", ":"), sort_keys=sort_keys)` writes it: by orjson, several times
    faster, or by the standard library for what orjson refuses (lone surrogates,
    integers past 64 bits, tuple subclasses)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
        return text.encode("utf-8", "surrogatepass")
