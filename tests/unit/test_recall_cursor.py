"""Cursors: round trip, and a clear error for anything else."""

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.recall.cursor import CursorCodec, CursorState
from session_recall.recall.errors import CursorMismatch, InvalidCursor, InvalidScope
from session_recall.recall.query import SortPosition

KEY = b"k" * 32
STATE = CursorState(
    scope="scope-digest",
    query="query-digest",
    as_of=1_782_907_200_500_000_000,
    after=SortPosition(1_782_907_200_000_000_000, "e-中", "user"),
)


def test_a_cursor_round_trips_and_is_opaque():
    codec = CursorCodec(KEY)
    token = codec.encode(STATE)
    assert codec.decode(token, scope="scope-digest", query="query-digest") == STATE
    assert token.isascii() and "=" not in token
    assert "scope-digest" not in token  # not readable as it stands


def test_a_cursor_from_another_scope_is_refused():
    token = CursorCodec(KEY).encode(STATE)
    with pytest.raises(CursorMismatch, match="another scope"):
        CursorCodec(KEY).decode(token, scope="other", query="query-digest")


def test_a_cursor_for_another_query_is_refused():
    token = CursorCodec(KEY).encode(STATE)
    with pytest.raises(CursorMismatch, match="another query"):
        CursorCodec(KEY).decode(token, scope="scope-digest", query="other")


def test_a_cursor_signed_with_another_key_is_refused():
    token = CursorCodec(b"x" * 32).encode(STATE)
    with pytest.raises(InvalidCursor, match="altered") as raised:
        CursorCodec(KEY).decode(token, scope="scope-digest", query="query-digest")
    assert not isinstance(raised.value, CursorMismatch)
    assert "without a cursor" in str(raised.value)


def test_a_forged_payload_with_the_old_mac_is_refused():
    raw = base64.urlsafe_b64decode(CursorCodec(KEY).encode(STATE) + "==")
    forged = raw[:32] + raw[32:].replace(b"500000000", b"900000000")
    token = base64.urlsafe_b64encode(forged).rstrip(b"=").decode()
    with pytest.raises(InvalidCursor, match="altered"):
        CursorCodec(KEY).decode(token, scope="scope-digest", query="query-digest")


@given(position=st.integers(min_value=0), replacement=st.sampled_from("AQgw_-9z"))
def test_changing_any_character_invalidates_the_cursor(position, replacement):
    token = CursorCodec(KEY).encode(STATE)
    index = position % len(token)
    if token[index] == replacement:
        return
    tampered = token[:index] + replacement + token[index + 1 :]
    with pytest.raises(InvalidCursor):
        CursorCodec(KEY).decode(tampered, scope="scope-digest", query="query-digest")


@given(st.one_of(st.text(max_size=400), st.binary(max_size=300).map(lambda b: b.hex())))
def test_garbage_is_always_an_invalid_cursor_error(garbage):
    with pytest.raises(InvalidCursor):
        CursorCodec(KEY).decode(garbage, scope="scope-digest", query="query-digest")


@pytest.mark.parametrize("token", ["", "a" * 5000, "abc=", "not a cursor", "é"])
def test_malformed_tokens_are_refused_before_decoding(token):
    with pytest.raises(InvalidCursor, match="not one this engine issued"):
        CursorCodec(KEY).decode(token, scope="scope-digest", query="query-digest")


def test_a_short_key_is_refused():
    with pytest.raises(InvalidScope, match="16 bytes"):
        CursorCodec(b"short")


def test_a_cursor_for_another_page_size_names_the_page_size():
    token = CursorCodec(KEY).encode(STATE.model_copy(update={"page_size": 10}))
    with pytest.raises(CursorMismatch, match="pages of 10 results; this call asks for 20"):
        CursorCodec(KEY).decode(token, scope="scope-digest", query="other", page_size=20)


def test_a_cursor_of_another_read_does_not_speak_of_a_query():
    token = CursorCodec(KEY).encode(STATE.model_copy(update={"page_size": 10}))
    with pytest.raises(CursorMismatch, match="another read") as refused:
        CursorCodec(KEY).decode(
            token, scope="scope-digest", query="other", page_size=10, searching=False
        )
    assert "query" not in str(refused.value)
