"""Deterministic ids from tuples of values.

An id is the SHA-256 of a JSON array, never of a separator-joined string: with
`f"{a}:{b}"`, ("a:b", "c") and ("a", "b:c") collide, and a user could then write into
or erase another user's scope. JSON quotes and escapes every member, so two different
tuples always give two different texts.
"""

import hashlib
import json

import orjson

Part = str | int | None


def canonical(parts: tuple[Part, ...]) -> bytes:
    """The one text of `parts`: a compact JSON array, UTF-8, no ASCII escaping, exactly
    as `json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))` writes it.

    orjson writes the same bytes for strings, integers and null, several times faster
    (a unit test holds the two equal); it refuses lone surrogates, which the standard
    library then encodes.
    """
    try:
        return orjson.dumps(parts)
    except TypeError:
        text = json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8", "surrogatepass")


def digest(*parts: Part) -> str:
    """64 hex digits naming `parts`; equal only for equal tuples (barring SHA-256)."""
    return hashlib.sha256(canonical(parts)).hexdigest()
