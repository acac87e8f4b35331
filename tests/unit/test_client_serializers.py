"""The client's NDJSON serializer: orjson for values, prebuilt bodies as they are."""

import json

from elasticsearch.serializer import NdjsonSerializer
from hypothesis import given
from hypothesis import strategies as st

from session_recall.client import _OrjsonNdjson

_TEXT = st.text(st.characters(exclude_categories=("Cs",)))
_VALUES = st.dictionaries(_TEXT, st.one_of(_TEXT, st.integers(-(2**53), 2**53), st.none()))


@given(st.lists(_VALUES, min_size=1))
def test_values_make_the_lines_the_client_would_send(values):
    ours = _OrjsonNdjson().dumps(values)
    theirs = NdjsonSerializer().dumps(values)
    assert ours.endswith(b"\n")
    assert [json.loads(line) for line in ours.splitlines()] == [
        json.loads(line) for line in theirs.splitlines()
    ]


@given(st.lists(st.binary(min_size=1).filter(lambda b: b"\n" not in b), min_size=1))
def test_a_prebuilt_body_goes_out_unchanged(lines):
    body = b"\n".join(lines) + b"\n"
    assert _OrjsonNdjson().dumps(body) is body
    # Without its final newline, it gets one, as the client's own serializer adds it.
    assert _OrjsonNdjson().dumps(body[:-1]) == NdjsonSerializer().dumps(body[:-1])
