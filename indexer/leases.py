"""Leases on slices: how enrichers that nobody configured (serve's replicas behind a
load balancer, `embed --follow` on several machines) share one alias by themselves.

The sessions are cut into `SLICES` slices (`slices.Slice`); each has a lease, a
document of `ALIAS-leases` naming its holder and when the lease ends. At the start of
each pass an enricher renews its leases, counts the enrichers holding a live one, and
takes its share of the slices: free or lapsed leases up to its share, giving back what
it holds beyond it, so a new enricher gets work within a pass or two and one that stops
loses its slices when its leases lapse (`TTL_S`). Every change of a lease is a
conditional write (`if_seq_no`), so two enrichers never both take one; the pass keeps
its leases fresh between pages, and stops when it lost one.

Nothing here is a queue: a lease only says who looks at a slice; the events
themselves say what is left to do (`enrichment.pending_query`).
"""

import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elasticsearch import BadRequestError, ConflictError, Elasticsearch, NotFoundError

from session_recall.core.index_names import lease_index
from session_recall.indexer.slices import Slice, slices_query

SLICES = 16
# A lease lasts this long unless renewed: an enricher that stops, or hangs, gives its
# slices up this long after. Clocks of the hosts sharing an alias must agree far better.
TTL_S = 30.0
_MAPPING = {
    "dynamic": "strict",
    "properties": {"holder": {"type": "keyword"}, "expires": {"type": "long"}},
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
    ) -> None:
        self._client = client
        self._index = lease_index(alias)
        self._ttl = ttl_s
        self._clock = clock
        self.holder = holder or uuid.uuid4().hex
        self.held: set[Slice] = set()
        self._renewed = 0.0
        self._ready = False

    def take(self) -> dict[str, Any] | None:
        """Renew, then take this enricher's share of the slices; their filter."""
        self._ensure_index()
        now = self._clock()
        leases = self._read()
        live = {lease.holder for lease in leases if lease.expires > now} | {self.holder}
        share = math.ceil(SLICES / len(live))
        mine = [lease for lease in leases if lease.holder == self.holder and lease.expires > now]
        held = [lease for lease in mine[:share] if self._write(lease, now + self._ttl)]
        for lease in mine[share:]:  # beyond its share: given back for a newcomer to take
            self._write(lease, 0.0)
        for lease in leases:
            if len(held) >= share:
                break
            if lease.expires <= now and self._write(lease, now + self._ttl):
                held.append(lease)
        self.held = {lease.slice for lease in held}
        self._renewed = now
        return slices_query(self.held)

    def keeps(self) -> bool:
        """Between two pages: renew the leases once a third of their life is gone; False
        when one was lost (taken after it lapsed)."""
        now = self._clock()
        if now - self._renewed < self._ttl / 3:
            return True
        leases = [lease for lease in self._read() if lease.slice in self.held]
        kept = all(
            lease.holder == self.holder and self._write(lease, now + self._ttl) for lease in leases
        )
        self._renewed = now
        return kept

    def leave(self) -> None:
        """Give every lease back (at shutdown): the others take the slices at once."""
        if not self._ready:
            return
        for lease in self._read():
            if lease.holder == self.holder and lease.slice in self.held:
                self._write(lease, 0.0)
        self.held = set()

    def _read(self) -> list[_Lease]:
        ids = [_id(k) for k in range(SLICES)]
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
        body = {"holder": self.holder, "expires": int(expires * 1000)}
        where: dict[str, Any] = {"index": self._index, "id": _id(lease.slice.index)}
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
            try:
                self._client.indices.create(
                    index=self._index, mappings=_MAPPING, settings=_SETTINGS,
                    wait_for_active_shards="1",
                )  # fmt: skip
            except BadRequestError as err:
                if err.error != "resource_already_exists_exception":
                    raise
        self._ready = True


def _id(k: int) -> str:
    return f"slice-{k}-of-{SLICES}"
