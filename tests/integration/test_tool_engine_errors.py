"""Engine errors reach a model as one actionable line, and only overload reads as
'try again': a refusal that retrying cannot fix says what to check instead."""

import pytest
from elasticsearch import Elasticsearch

from session_recall.recall import CrossSessionSearcher
from session_recall.tools import cross_session_tool

pytestmark = pytest.mark.integration


def test_a_refused_search_is_not_reported_as_unavailable(es: Elasticsearch, alias: str):
    # A closed index is a real refusal (400 index_closed_exception), as a key without
    # read privilege (403) would be.
    es.indices.close(index=f"{alias}-*")
    searcher = CrossSessionSearcher(es, alias=alias, user_id="alice", cursor_key=b"k" * 32)
    result = cross_session_tool(searcher).call({"innerThought": "t", "query": "x"})
    output = result.text
    assert result.is_error and output.startswith("Error: Elasticsearch refused the search (400")
    assert "privilege" in output and "try again" not in output


def test_an_unreachable_node_reads_as_unavailable():
    client = Elasticsearch("http://127.0.0.1:9", max_retries=0, request_timeout=2)
    searcher = CrossSessionSearcher(client, alias="any", user_id="alice", cursor_key=b"k" * 32)
    result = cross_session_tool(searcher).call({"innerThought": "t", "query": "x"})
    output = result.text
    assert result.is_error and output.startswith("Error: Elasticsearch did not answer the search")
    assert "retry" in output
