"""The dead-letter file: created on the first refusal, one JSON object per line."""

import orjson

from session_recall.indexer import DeadLetter


def test_nothing_refused_leaves_no_file(tmp_path):
    with DeadLetter(tmp_path / "dead.ndjson"):
        pass
    assert not (tmp_path / "dead.ndjson").exists()


def test_each_refusal_is_a_line_with_the_event_as_received_and_the_reason(tmp_path):
    path = tmp_path / "sub" / "dead.ndjson"
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
