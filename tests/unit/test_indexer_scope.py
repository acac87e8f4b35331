"""Erasure scopes: distinct ids per scope, and the right filter and routing."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from session_recall.indexer import Parsed, Scope, parse_object
from session_recall.indexer.scope import scope_ids_of

_ids = st.text(min_size=1, max_size=8).filter(lambda s: s.strip())


@given(_ids, _ids, _ids, _ids)
def test_scope_ids_are_distinct_for_distinct_scopes(a, b, c, d):
    scopes = {
        Scope.user(a),
        Scope.session(a, b),
        Scope.contact(a, c, d),
        Scope.contact(b, c, d),
        Scope.session(c, d),
        Scope.event(a, b),
        Scope.event(b, a),
    }
    assert len({s.id for s in scopes}) == len(scopes)


@given(user=_ids, session=_ids, contact=_ids, inbox=_ids, other=_ids)
def test_an_events_scope_ids_are_those_its_own_scopes_are_erased_under(
    user, session, contact, inbox, other
):
    """What the writer checks is what an erasure writes; another user's contact of the
    same ids is another scope."""
    parsed = parse_object(
        {
            "user_id": user,
            "session_id": session,
            "contact_id": contact,
            "inbox_id": inbox,
            "timestamp": "2026-07-01T00:00:00Z",
            "type": "t",
            "text": "x",
        }
    )
    assert isinstance(parsed, Parsed), parsed
    ids = scope_ids_of(parsed.event)
    own = (
        Scope.user(user),
        Scope.session(user, session),
        Scope.contact(user, contact, inbox),
        Scope.event(user, parsed.event.event_id),
    )
    assert set(ids) == {scope.id for scope in own}
    if other != user:
        assert Scope.contact(other, contact, inbox).id not in ids


def test_scope_ids_do_not_collide_by_joining():
    assert Scope.session("a:b", "c").id != Scope.session("a", "b:c").id


def test_every_scope_is_routed_to_and_pinned_by_its_user():
    assert Scope.session("u", "s").routing == "u"
    assert Scope.contact("u", "c", "i").routing == "u"
    assert Scope.contact("u", "c", "i").query() == {
        "bool": {
            "filter": [
                {"term": {"user_id": "u"}},
                {"term": {"contact_id": "c"}},
                {"term": {"inbox_id": "i"}},
            ]
        }
    }


def test_an_incomplete_scope_is_refused():
    with pytest.raises(ValidationError, match="needs user_id, contact_id and inbox_id"):
        Scope(kind="contact", contact_id="c", inbox_id="i")
    with pytest.raises(ValidationError, match="must not be empty"):
        Scope.user("")
