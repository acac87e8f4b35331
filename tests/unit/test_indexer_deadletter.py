"""The dead-letter file: created on the first refusal, one JSON object per line."""

import base64

import orjson

from session_recall.indexer import DeadLetter, Rejected, parse_line


def test_nothing_refused_leaves_no_file(tmp_path):
    with DeadLetter(tmp_path / "dead.ndjson"):
        pass
    assert not (tmp_path / "dead.ndjson").exists()


def test_each_refusal_is_a_line_with_the_event_as_received_and_the_reason(tmp_path):
    path = tmp_path / "dead.ndjson"
    with DeadLetter(path) as sink:
        sink.write({"userId": "u"}, "line 1: session_id is required")
        sink.write("{broken", "line 2: not valid JSON")
        sink.sync()
        assert sink.count == 2
    with DeadLetter(path) as sink:  # a later run appends
        sink.write([1], "line 1: an event must be a JSON object, not an array")
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert lines == [
        {"event": {"userId": "u"}, "reason": "line 1: session_id is required"},
        {"event": "{broken", "reason": "line 2: not valid JSON"},
        {"event": [1], "reason": "line 1: an event must be a JSON object, not an array"},
    ]


def test_a_line_that_is_not_utf8_keeps_its_bytes(tmp_path):
    line = b'{"user_id": "caf\xe9", "text": "\xff\xfe"}'
    parsed = parse_line(line)
    assert isinstance(parsed, Rejected) and "not UTF-8" in parsed.reason
    path = tmp_path / "dead.ndjson"
    with DeadLetter(path) as sink:
        sink.write(parsed.original, f"line 1: {parsed.reason}")
    [entry] = [orjson.loads(raw) for raw in path.read_bytes().splitlines()]
    assert base64.b64decode(entry["event_base64"]) == line
    assert "event" not in entry
