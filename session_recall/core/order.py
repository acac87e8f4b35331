"""The one total order of stored events, shared by recall's pages and erasure's passes.

event_id breaks ties between events of the same instant, and user_id ties between two
users' events with the same event_id (event ids are unique per user only; a contact's
conversations span users). The order is total, so search_after never skips or
repeats. (`_id` cannot be sorted on, and `_doc` is not stable without a PIT.)
"""

from typing import Any

EVENT_ORDER: tuple[dict[str, Any], ...] = (
    {"timestamp": "asc"},
    {"event_id": "asc"},
    {"user_id": "asc"},
)


def event_order() -> list[dict[str, Any]]:
    """The order as a request's `sort`, a fresh list each time."""
    return [dict(key) for key in EVENT_ORDER]
