"""Moving an alias of the single-index layout into partitions, for good.

An earlier release kept every event in one index behind the alias (`<alias>-000001`).
After `setup`, that index stays behind the alias and is read like a partition, but a
replay of one of its events would be stored again, in the event's partition. Moving
it copies each of its events into the partition of its own timestamp's period, then
deletes it.

The copy goes through the `Writer`, as a replay would: the same `_id` and partition
as any later arrival of the event, `create` (an event already in its partition is
kept as it is), the tombstones (an event of a scope erased meanwhile is refused, its
copies deleted) and the retries. The vectors the stored copy has are kept.
This distribution has no `_reindex`, so the old index is read in pages under a
point in time, which sees it exactly as it was when the move began.

Nothing is lost when a move stops half-way: an event is deleted from the old index
only once it is stored in its partition (or refused as erased), and the old index only
once it is empty. Running it again carries on where the last run stopped.
"""

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from elasticsearch import ApiError, Elasticsearch, TransportError
from pydantic import BaseModel, ValidationError

from session_recall.core.instant import Instant
from session_recall.core.partitions import Granularity, partition_of
from session_recall.embeddings import MODELS_FIELD, VECTORS_FIELD
from session_recall.indexer import bulk
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.errors import AliasMissing
from session_recall.indexer.event import Event
from session_recall.indexer.layout import granularity, stored_indices
from session_recall.indexer.results import Status
from session_recall.indexer.retry import RetryPolicy, call_with_retries
from session_recall.indexer.writer import Submission, Writer, WriterOptions, Written

DEFAULT_PAGE = 1000
# Between two pages of the read; a page takes well under a second.
_KEEP_ALIVE = "5m"
_REASONS = 3
# Stored with the event as they are: its vectors, and the models that made them.
_KEPT = (VECTORS_FIELD, MODELS_FIELD)


@dataclass(frozen=True, slots=True)
class MovePlan:
    """An index of the single-index layout: its events, and how many of them each
    partition would receive."""

    index: str
    events: int
    partitions: dict[str, int]


class MoveSummary(BaseModel):
    """Counts of one index's move. `deleted` once no event was left in it."""

    index: str
    events: int = 0  # in the index when the move began
    copied: int = 0
    present: int = 0  # already in their partition (a replay, or an earlier run)
    erased: int = 0  # refused: their scope was erased after they were stamped
    failed: int = 0
    reasons: list[str] = []  # the first few failures'
    left: int = 0  # still in the index at the end
    deleted: bool = False

    @property
    def done(self) -> int:
        return self.copied + self.present + self.erased + self.failed

    def fail(self, reason: str) -> None:
        self.failed += 1
        if len(self.reasons) < _REASONS:
            self.reasons.append(reason)

    def line(self) -> str:
        optional = {
            f"{self.erased} of erased scopes dropped": self.erased,
            f"{self.failed} not moved ({'; '.join(self.reasons)})": self.failed,
        }
        counts = ", ".join(
            [f"{self.copied} copied", f"{self.present} already in their partition"]
            + [text for text, count in optional.items() if count]
        )
        if self.deleted:
            outcome = "deleted."
        elif self.failed:
            outcome = f"kept with {self.left} event(s), still read through the alias."
        else:
            outcome = f"kept with {self.left} event(s): run the move again."
        return f"{self.index}: {self.events} event(s); {counts}; {outcome}"


def plan(client: Elasticsearch, alias: str) -> list[MovePlan]:
    """The indices of the single-index layout behind `alias`, with where their events
    would go. Changes nothing. Raises `AliasMissing` before `setup`."""
    period = _granularity(client, alias)
    legacy = [s.index for s in stored_indices(client, alias) if s.partition is None]
    return [_plan(client, alias, index, period) for index in legacy]


def move(
    client: Elasticsearch,
    alias: str,
    *,
    page_size: int = DEFAULT_PAGE,
    options: WriterOptions | None = None,
    on_progress: Callable[[MoveSummary], None] | None = None,
) -> list[MoveSummary]:
    """Copy every index of the single-index layout behind `alias` into partitions,
    page by page: the events of a page are deleted from the old index once stored in
    their partitions, so the alias shows each of them once, and an interrupted move
    leaves each event in one place or both, never in none. An index left empty is
    deleted.

    Idempotent and resumable: run it again after an interruption or a failure.
    Raises `AliasMissing` before `setup`, `WriteUnavailable` when Elasticsearch stays
    away (what was moved stays moved).
    """
    _granularity(client, alias)  # raises `AliasMissing` before `setup`
    options = options or WriterOptions()
    retrying = functools.partial(call_with_retries, policy=options.retry)
    # Its period and identity rule from the template: the moved events get the ids
    # that replays of them will meet.
    writer = Writer(client, alias, options=options, stop_when_forbidden="admin")
    summaries = []
    for legacy in [s.index for s in stored_indices(client, alias) if s.partition is None]:
        summary = MoveSummary(index=legacy, events=_count(client, legacy, retrying))
        for hits in _pages(client, legacy, page_size, options.retry):
            submissions = [s for s in (_submission(hit, summary) for hit in hits) if s]
            moved = [w.submission.token for w in writer.write(submissions) if _tally(summary, w)]
            _forget(client, legacy, moved, options.retry)
            if on_progress is not None:
                on_progress(summary)
        summary.left = _count(client, legacy, retrying)
        if summary.left == 0:
            delete = functools.partial(client.indices.delete, index=legacy)
            retrying(delete, what=f"delete {legacy}")
            summary.deleted = True
        summaries.append(summary)
    if summaries:
        writer.refresh()  # `partitions` and recall show the moved events at once
    return summaries


def _granularity(client: Elasticsearch, alias: str) -> Granularity:
    period = granularity(client, alias)
    if period is None:
        raise AliasMissing(
            f"{alias!r} has no partitioned layout to move events into.",
            hint=f"Run `session-recall --index {alias} setup` first.",
        )
    return period


def _plan(client: Elasticsearch, alias: str, index: str, period: Granularity) -> MovePlan:
    client.indices.refresh(index=index)
    body = client.search(
        index=index,
        size=0,
        track_total_hits=True,
        aggs={
            "periods": {
                "date_histogram": {
                    "field": "timestamp",
                    "calendar_interval": period,  # a calendar week starts on Monday, as ISO's
                    "min_doc_count": 1,
                }
            }
        },
    ).body
    partitions: dict[str, int] = {}
    for bucket in body["aggregations"]["periods"]["buckets"]:
        start = Instant(int(bucket["key"]) * 1_000_000)
        partitions[partition_of(alias, start, period).index] = int(bucket["doc_count"])
    return MovePlan(index=index, events=int(body["hits"]["total"]["value"]), partitions=partitions)


def _count(client: Elasticsearch, index: str, retrying: Callable[..., Any]) -> int:
    retrying(lambda: client.indices.refresh(index=index), what=f"refresh {index}")
    found = retrying(lambda: client.count(index=index), what=f"count the events of {index}")
    return int(found["count"])


def _pages(
    client: Elasticsearch, index: str, page_size: int, policy: RetryPolicy
) -> Iterator[list[dict[str, Any]]]:
    """Every document of `index` as it was when the read began, a page at a time,
    with the vectors `_source` leaves out by default."""
    retrying = functools.partial(call_with_retries, policy=policy)
    pit = retrying(
        lambda: client.open_point_in_time(index=index, keep_alive=_KEEP_ALIVE),
        what=f"open a point in time on {index}",
    )["id"]
    try:
        after: list[Any] | None = None
        while True:
            page = functools.partial(
                client.search,
                pit={"id": pit, "keep_alive": _KEEP_ALIVE},
                sort=[{"_shard_doc": "asc"}],
                size=page_size,
                search_after=after,
                source={"exclude_vectors": False},
                track_total_hits=False,
                allow_partial_search_results=False,
            )
            body = retrying(page, what=f"read {index}").body
            pit = body.get("pit_id", pit)
            hits = body["hits"]["hits"]
            if not hits:
                return
            yield hits
            after = hits[-1]["sort"]
    finally:
        # Expired, or the node is away: it goes by itself after the keep-alive.
        with contextlib.suppress(ApiError, TransportError):
            client.close_point_in_time(id=pit)


def _submission(hit: dict[str, Any], summary: MoveSummary) -> Submission | None:
    stored = dict(hit["_source"])
    kept = {key: stored.pop(key) for key in _KEPT if key in stored}
    # The event's own fields: what ingestion and enrichment derived from it (its slot,
    # words, stems, context) is made again for the event's new copy.
    source = {key: value for key, value in stored.items() if key in Event.model_fields}
    try:
        # Stored already: the text limit of today's ingestion (`parsing`) does not apply.
        event = Event.model_validate(source)
    except ValidationError as err:
        summary.fail(f"{hit['_id']} is not an event any more: {err.errors()[0]['msg']}")
        return None
    target = {"_index": hit["_index"], "_id": hit["_id"], "routing": hit.get("_routing")}
    return Submission(event, token=target, kept=kept or None)


def _tally(summary: MoveSummary, written: Written) -> bool:
    """Count the event's outcome; True when its old copy may go."""
    result = written.result
    if result.status is Status.INDEXED:
        summary.copied += 1
    elif result.status is Status.ALREADY_PRESENT:
        summary.present += 1
    elif result.erased:
        summary.erased += 1
    else:
        summary.fail(result.reason or "refused")
        return False
    return True


def _forget(
    client: Elasticsearch, index: str, moved: list[dict[str, Any]], policy: RetryPolicy
) -> None:
    """Delete the old copies of events now in their partitions. One that stays (its
    delete failed) is moved again by the next run, as "already present"."""
    actions: list[bulk.Action] = [
        ({"delete": {k: v for k, v in target.items() if v is not None}}, None) for target in moved
    ]
    if actions:
        bulk.send(client, actions, policy=policy, stats=BulkStats())
