"""The filter that keeps a user's documents to that user: the one place a query names
`user_id` (and, narrower, a session, a contact in an inbox, an event of that user).

Every search, count and bulk-by-query of a user's documents takes its scope clauses
from `user_filter`, so that no new query can forget the user: a unit test
(`test_user_filter_is_the_only_owner_of_scope`) fails when a query body elsewhere in
the product names the user's field. Contact and inbox ids repeat across users
(tenants): they narrow a user's scope, never replace it.
"""

from typing import Any

USER_FIELD = "user_id"
# The fields that narrow a user's scope, in the order their clauses are written.
NARROWING = ("session_id", "contact_id", "inbox_id", "event_id")


def user_filter(
    user_id: str,
    *,
    session_id: str | None = None,
    contact_id: str | None = None,
    inbox_id: str | None = None,
    event_id: str | None = None,
) -> list[dict[str, Any]]:
    """The `term` clauses (for a `bool` query's `filter`) that bind a query to the
    documents of `user_id`, and of the session, contact, inbox or event given."""
    if not isinstance(user_id, str) or not user_id:
        # A caller validated its scope before (`recall.scope.required`, `Scope`): an
        # empty user here is a bug, and a query without one would read every user's.
        raise ValueError(f"a user's scope needs a non-empty user_id, not {user_id!r}")
    narrowing = (session_id, contact_id, inbox_id, event_id)
    clauses: list[dict[str, Any]] = [{"term": {USER_FIELD: user_id}}]
    clauses += [
        {"term": {field: value}}
        for field, value in zip(NARROWING, narrowing, strict=True)
        if value is not None
    ]
    return clauses
