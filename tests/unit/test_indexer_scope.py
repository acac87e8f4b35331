"""Erasure scopes: distinct ids per scope, and the right filter and routing."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from session_recall.indexer import Scope, parse_object
from session_recall.indexer.scope import scope_ids_of

_ids = st.text(min_size=1, max_size=8).filter(lambda s: s.strip())


@given(_ids, _ids, _ids, _ids)
def test_scope_ids_are_distinct_for_distinct_scopes(a, b, c, d):
    scopes = {Scope.user(a), Scope.session(a, b), Scope.contact(c, d), Scope.session(c, d)}
    assert len({s.id for s in scopes}) == len(scopes)


def test_scope_ids_do_not_collide_by_joining():
    assert Scope.session("a:b", "c").id != Scope.session("a", "b:c").id


def test_an_event_belongs_to_its_user_session_and_contact_scopes():
    parsed = parse_object(
        {
            "user_id": "u",
            "session_id": "s",
            "contact_id": "c",
            "inbox_id": "i",
            "timestamp": "2026-07-01T00:00:00Z",
            "type": "t",
            "text": "x",
        }
    )
    ids = scope_ids_of(parsed.event)
    assert set(ids) == {Scope.user("u").id, Scope.session("u", "s").id, Scope.contact("c", "i").id}


def test_user_scopes_are_routed_and_contact_scopes_are_not():
    assert Scope.session("u", "s").routing == "u"
    assert Scope.contact("c", "i").routing is None
    assert Scope.contact("c", "i").query() == {
        "bool": {"filter": [{"term": {"contact_id": "c"}}, {"term": {"inbox_id": "i"}}]}
    }


def test_an_incomplete_scope_is_refused():
    with pytest.raises(ValidationError, match="needs contact_id and inbox_id"):
        Scope(kind="contact", contact_id="c")
    with pytest.raises(ValidationError, match="must not be empty"):
        Scope.user("")
