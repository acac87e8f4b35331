"""Adapters only adapt: no module under `session_recall.integrations` builds an
Elasticsearch request body; they call the libraries for that."""

import ast
import os
from pathlib import Path

import pytest

import session_recall.integrations

ADAPTERS = Path(session_recall.integrations.__file__).parent
# Keys that only a search, count or delete-by-query body has.
BODY_KEYS = {"query", "sort", "search_after", "collapse", "aggs", "knn", "track_total_hits"}


def body_keys(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and key.value in BODY_KEYS:
                    found.add(key.value)
        if isinstance(node, ast.keyword) and node.arg in BODY_KEYS - {"query"}:
            found.add(str(node.arg))  # client.search(sort=...): a body by its keywords
    return found


def test_no_adapter_builds_a_query_body():
    offenders = {
        str(path.relative_to(ADAPTERS)): keys
        for folder, _, names in os.walk(ADAPTERS)
        for path in (Path(folder) / name for name in names if name.endswith(".py"))
        if (keys := body_keys(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, f"Build these bodies in a library, not an adapter: {offenders}"


@pytest.mark.parametrize(
    "source",
    [
        'body = {"query": {"match_all": {}}, "size": 1}',
        "client.search(index=alias, sort=order, size=10)",
    ],
)
def test_the_check_finds_a_body(source):
    assert body_keys(source)
