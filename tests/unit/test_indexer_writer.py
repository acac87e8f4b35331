"""Writer behaviour that needs no cluster: sizes and refusals decided before sending."""

import orjson
import pytest
from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig
from elasticsearch import ApiError, Elasticsearch
from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer import (
    Status,
    Submission,
    WriteFailed,
    Writer,
    WriterOptions,
    parse_object,
    to_document,
)
from tests.support.ndjson import event


@given(
    st.text(max_size=300),
    st.dictionaries(st.text(max_size=5), st.integers(-(2**63), 2**63 - 1), max_size=3),
)
def test_a_document_size_is_exactly_its_share_of_the_bulk_body(text, metadata):
    document = to_document(parse_object(event(1, text=text, metadata=metadata)).event, index="a")
    sent = document.header_json + b"\n" + document.body + b"\n"
    assert document.size == len(sent)


@given(
    st.text(min_size=1, max_size=40).filter(str.strip),
    st.text(min_size=1, max_size=40).filter(str.strip),
    st.sampled_from(["a-2026.07", "my-events-1970", "x-2026.w27"]),
)
def test_a_create_header_is_the_json_of_its_action(user_id, event_id, index):
    """The header is joined from a cached start and the id: it must still be exactly
    the action, whatever characters the user id holds."""
    parsed = parse_object(event(1, user_id=user_id, event_id=event_id)).event
    document = to_document(parsed, index=index)
    assert orjson.loads(document.header_json) == document.header
    assert document.header == {"create": {"_index": index, "_id": document.id, "routing": user_id}}


def test_events_larger_than_a_chunk_are_refused_without_a_request():
    # Nothing listens on port 9: a request would fail, so none may be made.
    client = Elasticsearch("http://127.0.0.1:9", max_retries=0)
    writer = Writer(client, "alias", options=WriterOptions(chunk_bytes=2048), granularity="month")
    results = [
        w.result for w in writer.write([Submission(parse_object(event(1, text="x" * 4000)).event)])
    ]
    assert results[0].status is Status.REJECTED
    assert "over the 2048-byte limit" in (results[0].reason or "")
    client.close()


def test_the_callers_submissions_are_not_modified():
    client = Elasticsearch("http://127.0.0.1:9", max_retries=0)
    submissions = [Submission(parse_object(event(1, text="x" * 4000)).event, token="t")]
    before = [(s.event.model_dump(), s.token) for s in submissions]
    options = WriterOptions(chunk_bytes=2048)
    list(Writer(client, "a", options=options, granularity="month").write(submissions))
    assert [(s.event.model_dump(), s.token) for s in submissions] == before
    client.close()


class _Refusing:
    """A client whose reads are refused as a credential without the privilege is
    (a seam around the client: 403 security_exception, naming the action)."""

    class indices:
        @staticmethod
        def get_index_template(**_kwargs: object) -> None:
            meta = ApiResponseMeta(
                status=403,
                http_version="1.1",
                headers=HttpHeaders(),
                duration=0.0,
                node=NodeConfig("http", "localhost", 9200),
            )
            reason = "action [indices:admin/index_template/get] is unauthorized"
            body = {"error": {"type": "security_exception", "reason": reason}, "status": 403}
            raise ApiError("security_exception", meta, body)


def test_a_read_refused_for_good_is_a_write_failed_that_names_it():
    writer = Writer(_Refusing(), "events")  # type: ignore[arg-type]
    with pytest.raises(WriteFailed) as failed:
        list(writer.write([Submission(parse_object(event(1)).event)]))  # type: ignore[union-attr]
    message = str(failed.value)
    assert "refused to read the index template of 'events'" in message
    assert "403 security_exception: action [indices:admin/index_template/get]" in message
    assert "needs the ingest role" in message


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"payload": {"count": 2**64}}, "payload.count holds the integer 18446744073709551616"),
        ({"payload": [1, {"x": -(2**63) - 1}]}, "payload[1].x holds the integer"),
        ({"metadata": {"n": 2**70}}, "metadata.n holds the integer"),
        ({"metadata": {"tags": {"a"}}}, "metadata.tags cannot be stored as JSON"),
    ],
)
def test_what_json_cannot_hold_is_refused_naming_its_place_without_a_request(fields, named):
    client = Elasticsearch("http://127.0.0.1:9", max_retries=0)
    writer = Writer(client, "alias", granularity="month")
    [written] = list(writer.write([Submission(parse_object(event(1, **fields)).event)]))
    assert written.result.status is Status.REJECTED
    assert (written.result.reason or "").startswith(named), written.result.reason
    client.close()


def test_the_widest_integers_json_readers_keep_are_stored_as_they_are():
    edge = {"high": 2**64 - 1, "low": -(2**63)}
    document = to_document(parse_object(event(1, payload=edge, metadata=edge)).event, index="a")
    assert orjson.loads(document.body)["payload"] == edge
