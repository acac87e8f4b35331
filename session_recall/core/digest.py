"""Deterministic digests of JSON values: document ids, scope ids, cursor bindings.

A digest is the SHA-256 of a value's canonical JSON, never of a separator-joined
string: with `f"{a}:{b}"`, ("a:b", "c") and ("a", "b:c") collide, and a user could
then write into or erase another user's scope. JSON quotes and escapes every member,
so two different values always give two different texts.
"""

import hashlib
from typing import Any

from session_recall.core import strict_json


def canonical(value: Any) -> bytes:
    """The one text of `value`: compact JSON, UTF-8, no ASCII escaping, keys sorted,
    exactly as `json.dumps(value, ensure_ascii=False, separators=(",", ":"),
    sort_keys=True)` writes it (`strict_json.dumps`; a unit test holds the two equal).
    """
    return strict_json.dumps(value, sort_keys=True)


def digest(value: Any) -> str:
    """64 hex digits naming `value`; equal only for equal values (barring SHA-256)."""
    return hashlib.sha256(canonical(value)).hexdigest()
