"""The native core takes only what the Python path takes, and makes the same bytes of it."""

import shutil
from datetime import datetime
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_recall.indexer import native
from session_recall.indexer.event import WHITESPACE
from session_recall.indexer.filling import fill
from session_recall.indexer.lines import DEFAULT_MAX_LINE_BYTES
from session_recall.indexer.parsing import EventLimits, Parsed, parse_line
from session_recall.indexer.results import EventResult, Status, refusal
from session_recall.indexer.scope import scope_ids_of
from session_recall.indexer.writer import Writer, WriterOptions

if not native.installed():
    if shutil.which("cargo"):  # the test command builds it wherever Rust is
        pytest.fail("cargo is here but the native core is not installed: run scripts/test")
    pytest.skip("the native core is not built here (no Rust toolchain)", allow_module_level=True)

ALIAS = "events"
LIMITS = EventLimits(max_text_bytes=200)
OPTIONS = WriterOptions(chunk_events=50, chunk_bytes=4096)


def _writer(options: WriterOptions = OPTIONS) -> Writer:
    # No request is made: the period is given, and only documents are asked for.
    return Writer(None, ALIAS, options=options, granularity="month")  # type: ignore[arg-type]


def _native(line: bytes) -> dict[str, Any] | None:
    """What the core made of one line, or None when it declined it."""
    builder = _writer().batch_builder(limits=LIMITS, max_line_bytes=DEFAULT_MAX_LINE_BYTES)
    what, *_ = builder.feed(line, 0, len(line))
    if what != native.DONE:
        return None
    batch = builder.take()
    if len(batch) == 0:
        return {"blank": True}
    header = batch.header(0)
    return {
        "header": header,
        "body": batch.body()[len(header) + 1 : -1],
        "event_id": batch.event_id(0),
        "scopes": sorted(batch.scopes()),
        "indices": batch.indices(),
        "source": batch.source(0),
    }


def _python(line: bytes) -> dict[str, Any] | None:
    parsed = parse_line(line, LIMITS)
    if parsed is None:
        return {"blank": True}
    if not isinstance(parsed, Parsed):
        return None
    document = _writer().document(parsed.event)
    if not hasattr(document, "header_json"):
        return None
    return {
        "header": document.header_json,
        "body": document.body,
        "event_id": parsed.event.event_id,
        "scopes": sorted(scope_ids_of(parsed.event)),
        "indices": [document.index],
        "source": line,
    }


identifiers = st.one_of(
    st.sampled_from(["alice", "bob", "s-1", "inbox", "ü", "a b", "\t", " ", "", "x" * 513]),
    st.text(max_size=8),
    st.text(alphabet=WHITESPACE, max_size=3),
)
stamps = st.one_of(
    st.sampled_from(
        [
            "2026-07-01T12:00:00Z",
            "2026-07-01T12:00:00.5Z",
            "2026-07-01T12:00:00.123456789Z",
            "2026-07-01T12:00:00.1234567890Z",
            "2026-02-30T12:00:00Z",
            "2026-07-01T24:00:00Z",
            "2026-07-01T12:00:00+02:00",
            "2026-07-01t12:00:00z",
            "1970-01-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2262-04-10T23:59:59.999999999Z",
            "2262-04-11T00:00:00Z",
            "2026-07-01T12:00:00.Z",
            "٢٠٢٦-07-01T12:00:00Z",
        ]
    ),
    st.text(max_size=30),
)
metadata_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
# ASCII texts as often as any: the core declines any other (see the test below).
texts = st.text(alphabet=st.characters(max_codepoint=127), max_size=60) | st.text(max_size=60)
FIELDS = {
    "user_id": identifiers,
    "userId": identifiers,
    "session_id": identifiers,
    "sessionId": identifiers,
    "timestamp": stamps,
    "type": identifiers,
    "text": texts,
    "contact_id": st.none() | identifiers,
    "inboxId": st.none() | identifiers,
    "conversation_type": st.none() | identifiers,
    "metadata": st.none() | metadata_values | st.floats(),
    "event_id": identifiers,
    "eventId": identifiers,
    "extra": st.text(max_size=3),
}
REQUIRED = {
    "user_id": st.sampled_from(["alice", 'bob\n"x"', "ü\u2028", "a\\b"]),
    "session_id": st.sampled_from(["s-1", "s\x01"]),
    "timestamp": st.sampled_from(["2026-07-01T12:00:00Z", "2024-02-29T23:59:59.25Z"]),
    "type": st.just("user_message"),
    "text": texts,
}


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    event = draw(st.fixed_dictionaries(REQUIRED))
    optional = draw(st.dictionaries(st.sampled_from(sorted(FIELDS)), st.none(), max_size=4))
    for key in optional:
        event[key] = draw(FIELDS[key])
    return event


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    event = draw(events())
    line = orjson.dumps(event)
    change = draw(st.sampled_from(["none", "spaces", "bom", "cr", "twice", "cut", "array"]))
    if change == "spaces":
        line = b"  " + line.replace(b'":', b'" : ') + b" "
    elif change == "bom":
        line = b"\xef\xbb\xbf" + line
    elif change == "cr":
        line += b"\r"
    elif change == "twice":
        line = line[:-1] + b',"user_id":"mallory"}'
    elif change == "cut":
        line = line[: draw(st.integers(0, len(line)))]
    elif change == "array":
        line = b"[" + line + b"]"
    return line


def test_a_line_the_core_takes_is_taken_the_same_by_the_python_path() -> None:
    taken = []

    @given(lines())
    @settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
    def same(line: bytes) -> None:
        made = _native(line)
        if made is not None:
            taken.append(line)
            assert made == _python(line)

    same()
    # A core that declined every line would compare nothing: it takes about 110 of
    # them (100 to 120 in runs); 50 is far below what chance leaves it.
    assert len(taken) >= 50, f"the core took {len(taken)} of 600 lines"


def test_the_core_takes_the_events_producers_send() -> None:
    for event in [
        {"user_id": "u", "session_id": "s", "timestamp": "2026-07-01T12:00:00Z", "type": "t",
         "text": "hi"},
        {"userId": "u", "sessionId": "s", "timestamp": "2026-07-01T12:00:00.5Z", "type": "t",
         "text": "e\n\"\u0001", "contactId": "c", "inboxId": "i", "eventId": "e-1",
         "metadata": {"a": [1, True, None, "x"], "b": {"c": -3}}},
    ]:  # fmt: skip
        line = orjson.dumps(event)
        assert _native(line) is not None
        assert _native(line) == _python(line)


def test_a_text_not_plain_ascii_is_left_to_the_python_path_which_gives_its_words() -> None:
    for text in ["é", "我喜欢机器学习", "Cafe\u0301", "zero\u200bwidth"]:
        line = orjson.dumps({"user_id": "ü", "session_id": "s", "type": "t", "text": text,
                             "timestamp": "2026-07-01T12:00:00Z"})  # fmt: skip
        assert _native(line) is None
        made = _python(line)
        assert made is not None and b'"words":' in made["body"]
    ascii_line = orjson.dumps({"user_id": "ü", "session_id": "s", "type": "t", "text": "plain",
                               "timestamp": "2026-07-01T12:00:00Z"})  # fmt: skip
    plain = _python(ascii_line)
    assert plain is not None and b'"words":' not in plain["body"]


def test_a_batch_covers_its_lines_and_stops_at_its_count() -> None:
    roomy = OPTIONS.model_copy(update={"chunk_bytes": 1024 * 1024})
    builder = _writer(roomy).batch_builder(limits=LIMITS, max_line_bytes=DEFAULT_MAX_LINE_BYTES)
    event = {"user_id": "u", "session_id": "s", "type": "t", "text": "hi"}
    data = b"".join(
        orjson.dumps({**event, "timestamp": f"2026-07-01T12:00:{i:02d}Z"}) + b"\n"
        for i in range(OPTIONS.chunk_events + 1)
    )
    what, _, _, after = builder.feed(data, 0, len(data))
    assert what == native.FULL
    batch = builder.take()
    assert len(batch) == OPTIONS.chunk_events
    assert batch.end == after == builder.position
    assert builder.number == OPTIONS.chunk_events
    assert builder.feed(data, after, len(data))[0] == native.DONE
    assert len(builder.take()) == 1


def test_a_batch_stops_before_the_line_that_would_pass_its_bytes() -> None:
    builder = _writer().batch_builder(limits=LIMITS, max_line_bytes=DEFAULT_MAX_LINE_BYTES)
    line = orjson.dumps(
        {"user_id": "u", "session_id": "s", "timestamp": "2026-07-01T12:00:00Z", "type": "t",
         "text": "x" * 150}
    ) + b"\n"  # fmt: skip
    data = line * 40
    what, start, _, after = builder.feed(data, 0, len(data))
    batch = builder.take()
    assert what == native.FULL and after == start  # that line is read again, into the next
    assert len(batch.body()) <= OPTIONS.chunk_bytes < len(batch.body()) + 2 * len(line)
    assert batch.end == after == len(batch) * len(line)


@given(st.lists(lines() | st.just(b"") | st.just(b"  "), max_size=40))
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_a_filled_body_answers_every_line_as_the_python_path_would(body_lines: list[bytes]) -> None:
    body = b"\n".join(body_lines)
    writer = _writer()
    filled = fill(writer, body, LIMITS)
    expected, documents = [], []
    for line in body_lines:
        parsed = parse_line(line, LIMITS)
        if parsed is None:
            continue
        if not isinstance(parsed, Parsed):
            expected.append(refusal(parsed.original, parsed.reason))
            continue
        document = writer.document(parsed.event)
        if isinstance(document, EventResult):
            expected.append(refusal(parsed.original, str(document.reason), parsed.event.event_id))
            continue
        expected.append(EventResult(Status.INDEXED, parsed.event.event_id))
        documents.append(document.header_json + b"\n" + document.body + b"\n")

    assert len(filled) == len(expected)
    assert b"".join(batch.body() for batch in filled.batches) == b"".join(documents)
    assert all(
        len(b) <= OPTIONS.chunk_events and b.size <= OPTIONS.chunk_bytes for b in filled.batches
    )
    assert filled.results([{} for _ in filled.batches]) == expected
    # What the write answers of a batch's events lands on their lines.
    present = [{0: EventResult(Status.ALREADY_PRESENT, b.event_id(0))} for b in filled.batches]
    firsts = {sum(len(b) for b in filled.batches[:k]) for k in range(len(filled.batches))}
    indexed = iter(range(len(expected)))  # the indexed events' positions, batches end to end
    assert filled.results(present) == [
        EventResult(Status.ALREADY_PRESENT, r.event_id)
        if r.status is Status.INDEXED and next(indexed) in firsts
        else r
        for r in expected
    ]


def _batch_of(events: list[dict[str, Any]]) -> Any:
    roomy = OPTIONS.model_copy(update={"chunk_bytes": 1024 * 1024})
    builder = _writer(roomy).batch_builder(limits=LIMITS, max_line_bytes=DEFAULT_MAX_LINE_BYTES)
    data = b"".join(orjson.dumps(event) + b"\n" for event in events)
    assert builder.feed(data, 0, len(data))[0] == native.DONE
    batch = builder.take()
    assert len(batch) == len(events)
    return batch


stored_events = st.builds(
    lambda user, session, day, second: {
        "user_id": user,
        "session_id": session,
        "timestamp": f"2026-0{day}-01T12:00:{second:02d}Z",
        "type": "user_message",
        "text": f"{user} {session}",
    },
    st.sampled_from(["alice", "bob", "carol"]),
    st.sampled_from(["s-1", "s-2"]),
    st.integers(1, 3),
    st.integers(0, 59),
)


@given(st.lists(st.lists(stored_events, min_size=1, max_size=6), min_size=1, max_size=4), st.data())
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
def test_merged_batches_are_their_parts_end_to_end(parts: list[list[dict[str, Any]]], data) -> None:
    batches = [_batch_of(events) for events in parts]
    merged = native.merged(batches)

    assert len(merged) == sum(len(batch) for batch in batches)
    assert merged.body() == b"".join(batch.body() for batch in batches)
    assert merged.size == sum(batch.size for batch in batches)
    assert merged.event_ids() == [i for batch in batches for i in batch.event_ids()]
    assert merged.lines() == [n for batch in batches for n in batch.lines()]
    assert merged.end == batches[-1].end
    assert set(merged.indices()) == {i for batch in batches for i in batch.indices()}
    assert sorted(merged.scopes()) == sorted({s for batch in batches for s in batch.scopes()})
    offsets = [sum(len(b) for b in batches[:k]) for k in range(len(batches))]
    for offset, batch in zip(offsets, batches, strict=True):
        for position in range(len(batch)):
            assert merged.header(offset + position) == batch.header(position)
            assert merged.source(offset + position) == batch.source(position)
    # A tombstone covers in the merged batch exactly what it covers in the parts.
    scopes = sorted({s for batch in batches for s in batch.scopes()})
    erased = data.draw(st.dictionaries(st.sampled_from(scopes), st.sampled_from(ERASED_AT)))
    assert merged.covered(erased) == [
        offset + p
        for offset, batch in zip(offsets, batches, strict=True)
        for p in batch.covered(erased)
    ]


def _nanos(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp).timestamp()) * 1_000_000_000


# Erasure instants around the events' days: before all, between, on one, after all.
ERASED_AT = [
    _nanos(stamp)
    for stamp in [
        "2025-12-31T00:00:00+00:00",
        "2026-02-01T12:00:30+00:00",
        "2026-03-01T00:00:00+00:00",
        "2026-04-01T00:00:00+00:00",
    ]
]


@pytest.mark.parametrize("identity", ["user-event-time", "user-event"])
def test_the_core_makes_the_ids_of_either_identity(identity: str) -> None:
    writer = Writer(None, ALIAS, options=OPTIONS, granularity="month", identity=identity)  # type: ignore[arg-type]
    line = orjson.dumps(
        {"user_id": "alice", "session_id": "s", "event_id": "msg-1", "type": "user_message",
         "timestamp": "2026-07-01T12:00:00.5Z", "text": "hello"}
    )  # fmt: skip
    builder = writer.batch_builder(limits=LIMITS, max_line_bytes=DEFAULT_MAX_LINE_BYTES)
    builder.feed(line, 0, len(line))
    parsed = parse_line(line, LIMITS)
    assert isinstance(parsed, Parsed)
    document = writer.document(parsed.event)
    assert not isinstance(document, EventResult)
    assert builder.take().header(0) == document.header_json
