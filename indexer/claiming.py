"""Taking one event away for a caller: a delete conditional on the version read, so
that of two callers racing for it, exactly one gets it (a pop of the latest item)."""

import threading
from typing import Any

from elasticsearch import ApiError, ConflictError, Elasticsearch, NotFoundError, TransportError

from session_recall.indexer.deadline import Deadline
from session_recall.indexer.errors import IndexerError


def claim(
    client: Elasticsearch,
    hit: dict[str, Any],
    *,
    routing: str,
    deadline: Deadline,
    stop: threading.Event,
    what: str,
    timeout: float,
) -> bool:
    """Delete `hit`'s event if it is still there: True when this call deleted it,
    False when another caller did, or `stop` was set before it was sent. The delete is
    conditional on the version read, and never sent twice by the client: a resend
    after a lost answer would find it gone and pass it over as taken, losing the
    event. It refreshes the event's shard as part of it, so the event is gone for reads
    when the call returns, with no second request that could fail after the delete.
    `what` names the event's place in the errors ("session 's1'")."""
    client = client.options(max_retries=0)
    where = {"index": hit["_index"], "id": hit["_id"], "routing": routing}
    version = {"if_seq_no": hit["_seq_no"], "if_primary_term": hit["_primary_term"]}
    while deadline.allows() and not stop.is_set():
        try:
            client.delete(**where, **version, refresh=True)
            return True
        except NotFoundError:
            return False
        except ConflictError:  # changed since it was read: by a pop, or enrichment
            try:
                current = client.get(**where, source=False)
            except NotFoundError:
                return False
            version = {
                "if_seq_no": current["_seq_no"],
                "if_primary_term": current["_primary_term"],
            }
        except (ApiError, TransportError) as err:
            raise IndexerError(
                f"Elasticsearch did not confirm the removal of the latest item of "
                f"{what} ({type(err).__name__}): it may or may not have been removed.",
                hint="Read the session (get_items) to see whether it is still there, "
                "then pop again if it is; check the node and the credentials' "
                "privileges (delete on the alias).",
            ) from None
    if stop.is_set():
        return False
    raise IndexerError(
        f"Popping from {what} did not finish within {timeout:g} s: other writers kept "
        "changing its latest items.",
        hint="Nothing was popped; pop again.",
    )
