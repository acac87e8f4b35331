"""No line stops a file: whatever bytes or JSON a line holds, both paths (the Python
path and the native core) answer it with a result, never an exception."""

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_recall.core import strict_json
from session_recall.indexer.filling import fill
from session_recall.indexer.parsing import Parsed, Rejected, parse_line, parse_object
from session_recall.indexer.writer import Writer, WriterOptions
from tests.support import native as native_core
from tests.support.ndjson import event

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


def _deep_line(depth: int) -> bytes:
    """An event whose metadata nests objects `depth` levels deep (the event is one),
    written by hand: no encoder writes that deep."""
    metadata = b'{"a":' * (depth - 2) + b"{}" + b"}" * (depth - 2)
    return orjson.dumps(event(1))[:-1] + b',"metadata":' + metadata + b"}"


def _nested(depth: int) -> dict:
    metadata: dict = {}
    for _ in range(depth - 2):
        metadata = {"a": metadata}
    return {**event(1), "metadata": metadata}


def _writer() -> Writer:
    # No request is made: the period is given, and only documents are asked for.
    options = WriterOptions(chunk_events=50, chunk_bytes=64 * 1024)
    return Writer(None, "events", options=options, granularity="month")  # type: ignore[arg-type]


def _answered(lines: list[bytes], path: str) -> None:
    """A result per line that is not blank, from the Python path ("0") or the native
    core ("1", which stops the test when the core is absent)."""
    expected = 0
    for line in lines:
        parsed = parse_line(line)
        assert parsed is None or isinstance(parsed, Parsed | Rejected)
        expected += parsed is not None
    if path == "1":
        filled = fill(_writer(), b"\n".join(lines), None)
        assert len(filled) == expected


@pytest.mark.parametrize("path", native_core.PATHS)
@given(st.lists(json_values.map(orjson.dumps), max_size=10))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_any_json_gets_a_result_per_line_on_each_path(path: str, lines: list[bytes]) -> None:
    _answered(lines, path)


@pytest.mark.parametrize("path", native_core.PATHS)
@given(st.lists(st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ")), max_size=10))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_any_bytes_get_a_result_per_line_on_each_path(path: str, lines: list[bytes]) -> None:
    _answered(lines, path)


@pytest.mark.parametrize("path", native_core.PATHS)
@given(st.integers(1, 3000))
@settings(max_examples=40)
def test_any_object_as_deep_as_it_likes_is_answered(path: str, depth: int) -> None:
    assert isinstance(parse_object(_nested(depth)), Parsed | Rejected)
    _answered([orjson.dumps(event(0)), _deep_line(depth), orjson.dumps(event(2))], path)


def test_a_line_nested_past_the_limit_is_refused_with_the_reason() -> None:
    assert isinstance(parse_line(_deep_line(strict_json.MAX_DEPTH)), Parsed)
    for depth in (strict_json.MAX_DEPTH + 1, 254, 1025, 5000):
        refused = parse_line(_deep_line(depth))
        assert isinstance(refused, Rejected), depth
        assert f"nests more than {strict_json.MAX_DEPTH} levels deep" in refused.reason, (
            depth,
            refused.reason,
        )
