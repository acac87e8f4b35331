"""JSON input as producers write it: compact or pretty, with or without a byte order
mark; a key given twice is refused at any depth, whichever path the parser takes."""

import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.strict_json import BOM, InvalidJson, loads
from session_recall.indexer import Parsed, Rejected, parse_line
from tests.support.ndjson import event

keys = st.text(max_size=8)
values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=12,
)
documents = st.dictionaries(keys, values, max_size=5)


@given(documents)
def test_every_rendering_of_a_document_without_duplicates_is_taken(document: dict):
    for text in (orjson.dumps(document), json.dumps(document, indent=2).encode()):
        assert loads(text) == document
        assert loads(BOM + text) == document


@given(documents, keys, values, values)
def test_a_key_given_twice_is_refused_at_any_depth(document: dict, key: str, first, second):
    pairs = ", ".join(
        [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in document.items() if k != key]
        + [f"{json.dumps(key)}: {json.dumps(first)}", f"{json.dumps(key)}: {json.dumps(second)}"]
    )
    for text in ("{" + pairs + "}", '{"metadata": {' + pairs + "}}", "[{" + pairs + "}]"):
        with pytest.raises(InvalidJson, match="given twice"):
            loads(text.encode())


def test_a_duplicate_user_id_is_refused_not_stored_as_the_last_one():
    line = (
        b'{"userId": "alice", "userId": "bob", "sessionId": "s", '
        b'"timestamp": "2026-07-01T00:00:00Z", "type": "user_message", "text": "hi"}'
    )
    parsed = parse_line(line)
    assert isinstance(parsed, Rejected)
    assert parsed.reason == "not valid JSON: the key 'userId' is given twice"


def test_a_byte_order_mark_on_the_first_line_is_skipped():
    parsed = parse_line(BOM + orjson.dumps(event(1)))
    assert isinstance(parsed, Parsed) and parsed.event.user_id == "alice"


@pytest.mark.parametrize(
    "garbage", [b"\xff\xfe\x00\x01", b"\x89PNG\r\x1a\x00\xde\xad", b"\xed\xa0\x80"]
)
def test_binary_garbage_is_named_as_not_utf8(garbage: bytes):
    parsed = parse_line(garbage)
    assert isinstance(parsed, Rejected)
    assert "not UTF-8" in parsed.reason and "surrogates" not in parsed.reason


wide = st.integers(2**64, 2**80) | st.integers(-(2**80), -(2**63) - 1)


@given(
    st.dictionaries(
        keys,
        wide | st.integers(-(2**63), 2**64 - 1) | st.lists(wide, min_size=1, max_size=3),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([None, 2]),
)
def test_integers_are_read_exactly_beyond_64_bits_too(document: dict, indent: int | None):
    """orjson reads an integer past 64 bits as the nearest float: the value read is
    the one written, compact or pretty, so that whatever stores it can refuse it by
    name."""
    text = json.dumps(document, indent=indent)
    # Compared as text: 2**64 == float(2**64), but they are written differently.
    assert json.dumps(loads(text.encode()), indent=indent) == text


def test_a_long_id_in_a_string_reads_as_it_is():
    document = {"event_id": "12345678901234567890123", "n": 1.5, "k": None}
    assert loads(json.dumps(document).encode()) == document
