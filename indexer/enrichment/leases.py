"""Leases on slices: how enrichers that nobody configured (serve's replicas behind a
load balancer, `embed --follow` on several machines, the adapters) share one alias by
themselves.

The sessions are cut into `SLICES` slices (`slices.Slice`); each has a lease, a
document of `ALIAS-leases` naming its holder and when the lease ends. Each enricher
also keeps a membership document there, renewed as its leases are. At the start of
each pass an enricher counts the members, and takes its share of the slices: free or
lapsed leases up to its share, giving back what it holds beyond it. So a new enricher
is counted at once and gets its share within a pass or two of the others, and one
that stops loses its slices when its leases lapse (`TTL_S`). A thread renews the
leases and the membership every third of `TTL_S`, whatever a page takes. Every change
of a lease is a conditional write (`if_seq_no`), so two enrichers never both hold
one; one that finds a lease of its own taken stops its pass (`keeps`).

Nothing here is a queue: a lease only says who looks at a slice; the events
themselves say what is left to do (`pending.pending_query`).
"""

import logging
import math
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elasticsearch import ConflictError, Elasticsearch, NotFoundError

from session_recall.core.index_names import lease_index
from session_recall.indexer.enrichment.slices import Slice, slices_query
from session_recall.indexer.tombstones import create_unless_exists

log = logging.getLogger(__name__)

SLICES = 16
# A lease lasts this long unless renewed: an enricher that stops, or hangs, gives its
# slices up this long after. Clocks of the hosts sharing an alias must agree far better.
TTL_S = 30.0
_MAPPING = {
    "dynamic": "strict",
    "properties": {
        "kind": {"type": "keyword"},  # "lease" or "member"
        "holder": {"type": "keyword"},
        "expires": {"type": "long"},  # epoch milliseconds
    },
}
_SETTINGS = {"number_of_shards": 1, "auto_expand_replicas": "0-1"}


@dataclass
class _Lease:
    slice: Slice
    holder: str | None = None
    expires: float = 0.0
    seq_no: int | None = None
    primary_term: int | None = None


class Leased:
    """The slices this enricher holds leases on (a `slices.Share`)."""

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        *,
        ttl_s: float = TTL_S,
        clock: Callable[[], float] = time.time,
        holder: str | None = None,
        work: str = "",
    ) -> None:
        # `work`: which work the slices are of ("": the enrichment's; "consolidation"):
        # each has leases and members of its own in the one leases index.
        self._prefix = f"{work}-" if work else ""
        self._client = client
        self._index = lease_index(alias)
        self._ttl = ttl_s
        self._clock = clock
        self.holder = holder or uuid.uuid4().hex
        self.held: set[Slice] = set()
        self._mine: dict[Slice, _Lease] = {}
        self._lost = False
        self._lock = threading.Lock()
        self._ready = False
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def take(self) -> dict[str, Any] | None:
        """Count the members, then take this enricher's share of the slices; their
        filter (one that matches nothing while it holds none)."""
        self._ensure_index()
        with self._lock:
            now = self._clock()
            self._heartbeat(now)
            leases = self._read()
            holders = {lease.holder for lease in leases if lease.expires > now}
            live = self._members(now) | holders | {self.holder}
            share = math.ceil(SLICES / len(live))
            mine = [
                lease for lease in leases if lease.holder == self.holder and lease.expires > now
            ]
            for lease in mine[share:]:  # beyond its share: given back for a newcomer to take
                self._write(lease, 0.0)
            mine = mine[:share]
            for lease in leases:
                if len(mine) >= share:
                    break
                if lease.expires <= now and self._write(lease, now + self._ttl):
                    mine.append(lease)
            self._mine = {lease.slice: lease for lease in mine}
            self.held = set(self._mine)
            self._lost = False
        self._start_renewer()
        return slices_query(self.held)

    def keeps(self) -> bool:
        """Between two pages: False when a lease of this enricher's was taken (it
        lapsed, unrenewed), and the pass must stop."""
        with self._lock:
            return not self._lost

    def leave(self) -> None:
        """Give every lease back (at shutdown): the others take the slices at once."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=self._ttl)
        if not self._ready:
            return
        with self._lock:
            for lease in self._mine.values():
                self._write(lease, 0.0)
            self._mine, self.held = {}, set()
            # A membership that ended, no longer counted: at once, so that a pass that
            # starts right after this one's (a one-off run's) takes the whole share.
            self._heartbeat(-self._ttl, refresh=True)

    def _start_renewer(self) -> None:
        if self._renewer is None:
            self._renewer = threading.Thread(
                target=self._renew, name="session-recall-leases", daemon=True
            )
            self._renewer.start()

    def _renew(self) -> None:
        """Every third of a lease's life: the membership and each lease, renewed; a
        lease someone took since is lost."""
        while not self._stop.wait(self._ttl / 3):
            try:
                with self._lock:
                    now = self._clock()
                    self._heartbeat(now)
                    for piece, lease in list(self._mine.items()):
                        if not self._write(lease, now + self._ttl):
                            del self._mine[piece]
                            self._lost = True
                    self.held = set(self._mine)
            except Exception as err:  # a renewal missed: the next one tries again
                log.debug("renewing the enrichment leases failed: %s", err)

    def _heartbeat(self, now: float, *, refresh: bool = False) -> None:
        expires = int((now + self._ttl) * 1000)
        body = {"kind": f"{self._prefix}member", "holder": self.holder, "expires": expires}
        self._client.index(index=self._index, id=self._prefix + _member_id(self.holder),
                           document=body, refresh=refresh)  # fmt: skip

    def _members(self, now: float) -> set[str]:
        """The enrichers whose membership has not lapsed (as last refreshed)."""
        query = {"bool": {"filter": [{"term": {"kind": f"{self._prefix}member"}},
                                     {"range": {"expires": {"gt": int(now * 1000)}}}]}}  # fmt: skip
        hits = self._client.search(
            index=self._index, query=query, size=1000, source_includes=["holder"]
        ).body["hits"]["hits"]
        return {hit["_source"]["holder"] for hit in hits}

    def _read(self) -> list[_Lease]:
        ids = [self._prefix + _lease_id(k) for k in range(SLICES)]
        docs = self._client.mget(index=self._index, ids=ids, realtime=True).body["docs"]
        leases = []
        for k, doc in enumerate(docs):
            lease = _Lease(Slice(k, SLICES))
            if doc.get("found"):
                lease.holder = doc["_source"]["holder"]
                lease.expires = doc["_source"]["expires"] / 1000
                lease.seq_no, lease.primary_term = doc["_seq_no"], doc["_primary_term"]
            leases.append(lease)
        return leases

    def _write(self, lease: _Lease, expires: float) -> bool:
        """Hold `lease` until `expires` (0: give it back), if nobody wrote it since it was
        read; whether it was written."""
        body = {"kind": f"{self._prefix}lease", "holder": self.holder,
                "expires": int(expires * 1000)}  # fmt: skip
        where: dict[str, Any] = {
            "index": self._index,
            "id": self._prefix + _lease_id(lease.slice.index),
        }
        try:
            if lease.seq_no is None:
                answer = self._client.index(**where, document=body, op_type="create")
            else:
                answer = self._client.index(
                    **where, document=body,
                    if_seq_no=lease.seq_no, if_primary_term=lease.primary_term,
                )  # fmt: skip
        except ConflictError:
            return False
        lease.holder, lease.expires = self.holder, expires
        lease.seq_no, lease.primary_term = answer["_seq_no"], answer["_primary_term"]
        return True

    def _ensure_index(self) -> None:
        if self._ready:
            return
        try:
            self._client.indices.get(index=self._index)
        except NotFoundError:
            create_unless_exists(self._client, self._index, mappings=_MAPPING, settings=_SETTINGS)
        self._ready = True


def _lease_id(k: int) -> str:
    return f"slice-{k}-of-{SLICES}"


def _member_id(holder: str) -> str:
    return f"member-{holder}"
