"""The user filter has one owner: `core.user_filter`. Every query of a user's documents
takes its scope clauses from it, so a new query cannot forget the user."""

import ast
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import session_recall
from session_recall.core.user_filter import user_filter

PACKAGE = Path(session_recall.__file__).parent
OWNER = PACKAGE / "core" / "user_filter.py"
# The fields that scope a query to a tenant's documents: contact and inbox ids repeat
# across users, so they are part of a user's scope, never one on their own.
SCOPE_FIELDS = {"user_id", "contact_id", "inbox_id"}
# Query clauses that match a field's value (`{"term": {FIELD: value}}`). Not `range`:
# on the user's field, it is a position in the event order (a cursor), not a scope.
CLAUSES = {
    "term", "terms", "match", "match_phrase", "match_phrase_prefix", "prefix", "wildcard",
    "regexp", "fuzzy",
}  # fmt: skip


def _product_files() -> Iterator[Path]:
    # The libraries are linked into the package: walk through the links.
    for folder, _, names in os.walk(PACKAGE, followlinks=True):
        for name in sorted(names):
            if name.endswith(".py"):
                yield Path(folder) / name


def _constant(node: ast.AST | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def scope_clauses(source: str) -> list[int]:
    """The lines of `source` where a query clause names a scope field."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        for k, v in zip(node.keys, node.values, strict=True):
            if not isinstance(v, ast.Dict):
                continue
            fields = {_constant(key) for key in v.keys}
            if _constant(k) == "exists":  # {"exists": {"field": FIELD}}
                fields = {_constant(value) for value in v.values}
            elif _constant(k) not in CLAUSES:
                continue
            if fields & SCOPE_FIELDS:
                found.append(node.lineno)
    return found


def test_user_filter_is_the_only_owner_of_scope():
    offenders = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in _product_files()
        if path.resolve() != OWNER.resolve()
        for line in scope_clauses(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], (
        "These build a user's scope by hand; take it from "
        "session_recall.core.user_filter.user_filter instead: " + ", ".join(offenders)
    )


@pytest.mark.parametrize(
    "source",
    [
        'filters = [{"term": {"user_id": user_id}}]',
        'body = {"query": {"bool": {"filter": [{"terms": {"contact_id": ids}}]}}}',
        'clause = {"exists": {"field": "inbox_id"}}',
        'query = {"match": {"user_id": {"query": user_id}}}',
    ],
)
def test_the_check_finds_a_scope_written_by_hand(source):
    assert scope_clauses(source) == [1]


@pytest.mark.parametrize(
    "source",
    [
        'source = {"user_id": user_id, "text": text}',  # a document, not a query
        'order = [{"user_id": "asc"}]',
        'sessions = {"terms": {"session_id": ids}}',
        'include = ["text", "user_id"]',
        'after = {"range": {"user_id": {"gt": position.user_id}}}',  # a cursor's position
    ],
)
def test_the_check_leaves_documents_and_other_fields_alone(source):
    assert scope_clauses(source) == []


def test_a_user_filter_names_the_user_first_then_what_narrows_it():
    assert user_filter("u") == [{"term": {"user_id": "u"}}]
    assert user_filter("u", inbox_id="i", contact_id="c") == [
        {"term": {"user_id": "u"}},
        {"term": {"contact_id": "c"}},
        {"term": {"inbox_id": "i"}},
    ]
    assert user_filter("u", session_id="s", event_id="e") == [
        {"term": {"user_id": "u"}},
        {"term": {"session_id": "s"}},
        {"term": {"event_id": "e"}},
    ]


@pytest.mark.parametrize("user_id", ["", None, 3])
def test_a_user_filter_refuses_a_missing_user(user_id):
    with pytest.raises(ValueError, match="non-empty user_id"):
        user_filter(user_id)
