"""The `cursor`: an opaque, signed token that carries a search from one page to the next.

A token is `base64url(mac || payload)`, where the payload is a small JSON object and the
mac is HMAC-SHA256 over it with the engine's key. The payload holds:

- `scope` and `query`: digests of what the cursor is bound to (the scope's key tuple,
  the terms, match mode, `since` and page size). A cursor only ever moves a position
  inside the searcher's own scope, so a foreign one could not leak anything; the check
  is there so that a model which changed its query gets told, instead of a page of
  something else.
- `as_of`: the frozen upper time bound (epoch nanoseconds) of the whole chain.
- `after`: the sort values of the last hit served, for `search_after`: its timestamp,
  event_id and user_id.
- `window_end`: for cross-conversation search, the instant its lookback window was
  measured from, so the set of conversations stays the same on every page.

The token is signed, not encrypted: whoever holds it can decode `after`, and so the
event_id and user_id of the last event of the page.
"""

import base64
import binascii
import hashlib
import hmac
import re

from pydantic import BaseModel, ConfigDict, ValidationError

from session_recall.recall.errors import CursorMismatch, InvalidCursor, InvalidScope
from session_recall.recall.query import SortPosition

_DOMAIN = b"session-recall cursor v1\x00"
_MAC_BYTES = 32
# A real token is a few hundred characters; anything much longer is not one of ours.
_MAX_TOKEN_CHARS = 2048
_TOKEN = re.compile(r"[A-Za-z0-9_-]+")
MIN_KEY_BYTES = 16

_START_OVER = "Repeat the search without a cursor to start from the first page."


class CursorState(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    scope: str
    query: str
    as_of: int
    after: SortPosition
    window_end: int | None = None
    # Said in the clear (the query digest binds it too), to name what differs.
    page_size: int | None = None


class CursorCodec:
    """Signs and checks cursors with one key."""

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes) or len(key) < MIN_KEY_BYTES:
            raise InvalidScope(
                f"The cursor key must be at least {MIN_KEY_BYTES} bytes.",
                hint="Use load_cursor_key(home) to get one.",
            )
        self._key = key

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, _DOMAIN + payload, hashlib.sha256).digest()

    def encode(self, state: CursorState) -> str:
        payload = state.model_dump_json().encode("utf-8")
        token = base64.urlsafe_b64encode(self._mac(payload) + payload)
        return token.rstrip(b"=").decode("ascii")

    def decode(
        self,
        token: str,
        *,
        scope: str,
        query: str,
        page_size: int | None = None,
        searching: bool = True,
    ) -> CursorState:
        """The state in `token`, once it is shown to be ours and bound to this search:
        its scope, its `query` digest (terms, match, since and page size). A mismatch
        names what differs: the page size when the cursor says it, else the query, or
        for a read (`searching` False) its filters."""
        raw = _unwrap(token)
        mac, payload = raw[:_MAC_BYTES], raw[_MAC_BYTES:]
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise InvalidCursor("The cursor is invalid or was altered.", hint=_START_OVER)
        try:
            state = CursorState.model_validate_json(payload)
        except ValidationError:
            raise InvalidCursor("The cursor is invalid.", hint=_START_OVER) from None
        if state.scope != scope:
            raise CursorMismatch(
                "The cursor belongs to a search in another scope.", hint=_START_OVER
            )
        if state.query != query:
            if state.page_size is not None and state.page_size != page_size:
                raise CursorMismatch(
                    f"The cursor is for pages of {state.page_size} results; this call asks "
                    f"for {page_size}.",
                    hint=f"Ask for pages of {state.page_size} with this cursor, or drop it.",
                )
            if not searching:
                raise CursorMismatch(
                    "The cursor belongs to another read (another since or filter).",
                    hint="Repeat the first page's arguments, or drop the cursor.",
                )
            raise CursorMismatch(
                "The cursor belongs to another query.",
                hint="Repeat the query, match and since of the first page, or drop the cursor.",
            )
        return state


def _unwrap(token: str) -> bytes:
    if not isinstance(token, str) or len(token) > _MAX_TOKEN_CHARS or not _TOKEN.fullmatch(token):
        raise InvalidCursor("The cursor is not one this engine issued.", hint=_START_OVER)
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        raise InvalidCursor("The cursor is not one this engine issued.", hint=_START_OVER) from None
    # One token per byte string: re-encoding must give the token back, so two spellings
    # of the same bytes (unused trailing bits) are not both accepted.
    if len(raw) <= _MAC_BYTES or base64.urlsafe_b64encode(raw).rstrip(b"=") != token.encode():
        raise InvalidCursor("The cursor is not one this engine issued.", hint=_START_OVER)
    return raw
