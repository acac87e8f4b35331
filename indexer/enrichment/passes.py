"""One enrichment pass: pages of pending events, each page's stems, context and vectors
written in one bulk request of conditional updates.

This distribution has no `_update_by_query`, so a pass pages through the pending events
(`pending.phases`) in the events' total order with `search_after` and sends bulk
`update`s, routed like the events. It is idempotent and resumable by construction: an
event is found only until its update lands, so a second pass, or a pass after a crash,
starts where the first left off. An event erased meanwhile is not brought back (an
update never creates). Each update is conditional on the version the pass read: two
enrichers never overwrite a newer context with an older one, and an erasure's repair
of a context is never undone by a pass that read before it. The page after the one
being written is found and embedded meanwhile, so a model's time (a server's, above
all) overlaps Elasticsearch's.

A pass looks for events without stems and context first, then for events that have
them and lack the model's vectors: after a model change, every event lacks the new
model's vectors, and the backfill of old events never holds up a fresh event's stems
and context (a follower's backfill even gives way, page by page, to events stored
meanwhile). A page is bounded by count and by the bytes of its texts. A text the
model refuses on its own is marked without a vector (`page_vectors`); any other
failure of the embedder leaves the page's vectors to a later pass.
"""

import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch

from session_recall.core import spans
from session_recall.embeddings import MODELS_FIELD, Embedder
from session_recall.indexer import bulk, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.enrichment import repair, session_documents, turns
from session_recall.indexer.enrichment.calls import call
from session_recall.indexer.enrichment.context_rule import (
    CONTEXT_MARK,
    ENRICHED_FIELD,
    STEMS_FIELD,
    Hit,
    Key,
    context_fields,
    followers,
    held,
    is_enriched,
    key,
    listed,
    turn_terms,
)
from session_recall.indexer.enrichment.page_vectors import PageVectors, embedding
from session_recall.indexer.enrichment.paging import search_page
from session_recall.indexer.enrichment.pending import among, pending, phases
from session_recall.indexer.enrichment.summary import EnrichmentSummary
from session_recall.indexer.enrichment.vector_mapping import check_fields, map_vector_field
from session_recall.indexer.enrichment.vector_models import REFUSALS_FIELD, REFUSED_FIELD
from session_recall.indexer.retry import RetryPolicy

# A page's texts are embedded in one call and its updates sent in one bulk request:
# a few hundred keeps both well under a second and a retry cheap.
DEFAULT_PAGE = 500
# A page's texts, at most: 500 tool outputs of a megabyte each would be a gigabyte in
# memory (twice, with the next page embedded meanwhile) and in one request.
PAGE_BYTES = 8 * 1024 * 1024
_SOURCE = [
    "text", "user_id", "session_id", "timestamp", "event_id", MODELS_FIELD, ENRICHED_FIELD,
    REFUSED_FIELD, REFUSALS_FIELD,
]  # fmt: skip


def _stopped(event: threading.Event | None) -> bool:
    return event is not None and event.is_set()


def enrich(
    client: Elasticsearch,
    alias: str,
    embedder: Embedder | None,
    *,
    page_size: int = DEFAULT_PAGE,
    policy: RetryPolicy | None = None,
    on_progress: Callable[[EnrichmentSummary], None] | None = None,
    stop: threading.Event | None = None,
    yield_to: threading.Event | None = None,
    page_bytes: int = PAGE_BYTES,
    within: dict[str, Any] | None = None,
    keeps: Callable[[], bool] | None = None,
    check_mapping: bool = True,
) -> EnrichmentSummary:
    """One pass: enrich every event of `alias` pending at its start (and those stored
    meanwhile that sort after where it has got to), those without stems and context
    first. With `yield_to`, the backfill of vectors stops between two pages once it is
    set (events were stored meanwhile: the next pass does them first). `within`: the
    filter of the slices this enricher takes (`slices`; all events without one);
    `keeps`, asked between two pages, stops the pass when it answers False (the
    enricher lost a slice to another). `check_mapping`: first check that the indices
    have the fields the pass writes, and map the model's vector field (a follower does
    it now and then, not at every pass).

    When the embedder fails, the pass goes on with stems and context and says so in
    `embedder_error`; the vectors come with a later pass. Raises `WriteUnavailable`
    when Elasticsearch fails past the retry bound (what was done stays done).
    """
    policy = policy or RetryPolicy()
    retrying = functools.partial(call, policy=policy, alias=alias)
    if check_mapping:
        retrying(lambda: check_fields(client, alias), what="read the mapping")
        if embedder is not None:
            retrying(lambda: map_vector_field(client, alias, embedder), what="map the vector field")
    model_id = embedder.model_id if embedder else None
    summary = EnrichmentSummary(model=model_id)
    count = functools.partial(pending, client, alias, embedder, within=within)
    summary.missing = retrying(count, what="count the events")
    if on_progress is not None:
        on_progress(summary)
    stats = BulkStats()
    for backfill, phase in enumerate(phases(model_id)):
        fetch = functools.partial(
            _fetch, client, alias, among(phase, within), embedder, summary, retrying,
            page_size=page_size, page_bytes=page_bytes,
        )  # fmt: skip
        # The page after this one is searched and embedded while this one's sessions are
        # read and its updates written, so the model's time overlaps Elasticsearch's.
        page = fetch(None, None)
        following: _Page | None = None
        try:
            while page.hits and not _stopped(stop):
                if backfill and summary.embedder_error:
                    break  # a backfill is vectors alone: nothing to do without them
                if keeps is not None and not keeps():
                    summary.interrupted = True  # another enricher took a slice of ours
                    break
                # A backfill gives way to events stored meanwhile, once it wrote a page:
                # it neither fetches nor embeds one it would not write.
                giving_way = bool(backfill) and _stopped(yield_to)
                if not giving_way:
                    following = fetch(page.hits[-1]["sort"], page.vectors)
                with spans.span("session_recall.enrichment.page"):  # traces: a span a page
                    _write_page(client, alias, page, policy, stats, summary, retrying)
                if on_progress is not None:
                    on_progress(summary)
                if giving_way:
                    summary.interrupted = True
                    break
                page, following = following or _Page([]), None
        finally:  # stopped, or failed: a page not embedded yet is not, and none is waited for
            for waiting in (page.vectors, following.vectors if following else None):
                if waiting is not None:
                    waiting.cancel()
        if summary.interrupted:
            break
    _refreshed(client, alias, summary, retrying)
    return summary


def _refreshed(
    client: Elasticsearch, alias: str, summary: EnrichmentSummary, retrying: Callable[..., Any]
) -> None:
    """Make what the pass wrote searchable: the next pass, which may start at once,
    must not find those events pending still, and embed them again."""
    if summary.enriched or summary.neighbours:
        retrying(lambda: client.indices.refresh(index=alias), what="refresh the events")


@dataclass(frozen=True)
class _Page:
    """Events to enrich, their vectors on their way, and the removals counter as read
    before they were searched (`tombstones.removals_seen`)."""

    hits: list[Hit]
    vectors: "Future[PageVectors] | None" = None
    seen: int = 0


def _fetch(
    client: Elasticsearch,
    alias: str,
    query: dict[str, Any],
    embedder: Embedder | None,
    summary: EnrichmentSummary,
    retrying: Callable[..., Any],
    after: list[Any] | None,
    previous: "Future[PageVectors] | None",
    *,
    page_size: int,
    page_bytes: int,
) -> _Page:
    """The next page after `after`, cut to `page_bytes` of text, and its vectors on
    their way (once the `previous` page's are done)."""
    # Read before the page: a removal noted after it may have removed one of its turns.
    seen = retrying(functools.partial(tombstones.removals_seen, client, alias),
                    what="read the removals")  # fmt: skip
    # Each update is conditional on the version read (`versions`).
    search = functools.partial(
        search_page, client, alias, query, size=page_size, after=after, source=_SOURCE,
        versions=True,
    )  # fmt: skip
    found = retrying(search, what="find events to enrich")
    hits = _within_bytes(found, page_bytes)
    if not hits or embedder is None or summary.embedder_error:
        return _Page(hits, None, seen)  # an embedder that failed in this pass: the next one
    return _Page(hits, embedding(embedder, hits, after=previous), seen)


def _within_bytes(hits: list[Hit], limit: int) -> list[Hit]:
    """The first of `hits` whose texts fit in `limit` bytes (one at least)."""
    total = 0
    for i, hit in enumerate(hits):
        total += len(hit["_source"].get("text", "").encode("utf-8", "surrogatepass"))
        if total > limit and i:
            return hits[:i]
    return hits


def _write_page(
    client: Elasticsearch,
    alias: str,
    page: _Page,
    policy: RetryPolicy,
    stats: BulkStats,
    summary: EnrichmentSummary,
    retrying: Callable[..., Any],
) -> None:
    """One page's updates: each event's stems, context and vectors in one write (an
    event that has stems and context gains its vectors alone), counted in `summary`.
    Then the contexts it wrote that hold a turn removed meanwhile are rebuilt
    (`repair.write_checked`), and the turns after an event stored late gain it."""
    by_key = {key(hit): hit for hit in page.hits}
    fields: dict[Key, dict[str, Any]] = {k: {} for k in by_key}
    holding, late = _contexts(client, alias, page.hits, fields, retrying)
    vectors = page.vectors
    if vectors is not None and summary.embedder_error:
        # The embedder failed on a page before: this one waits for the next pass.
        vectors.cancel()
        vectors = None
    embedded = _add_vectors(vectors.result() if vectors else None, fields, summary)
    written = [k for k, doc in fields.items() if doc]
    updates = [(repair.update(by_key[k], fields[k]), holding.get(k, [])) for k in written]
    # The turns that gain their stems here join their sessions' documents, written in
    # the same bulk request.
    added: dict[session_documents.Session, list[session_documents.Turn]] = {}
    for k in written:
        if STEMS_FIELD in fields[k]:
            turn = session_documents.turn_of(by_key[k], fields[k][STEMS_FIELD])
            added.setdefault(_session_of(by_key[k]), []).append(turn)
    reading = functools.partial(session_documents.page_writes, client, alias, added)
    documents = retrying(reading, what="read session documents") if added else None
    extra: list[tuple[bulk.Action, list[Hit]]] = (
        [(action, []) for action in documents.actions] if documents else []
    )
    responses, removed = repair.write_checked(
        client, alias, [*updates, *extra], seen=page.seen, policy=policy, stats=stats
    )
    responses, document_responses = responses[: len(updates)], responses[len(updates) :]
    for k, response in zip(written, responses, strict=True):
        if 200 <= response.status < 300:
            summary.enriched += 1
            summary.vectors += k in embedded
        elif response.status == 404:
            summary.gone += 1
        elif response.status == 409:
            summary.conflicts += 1  # written meanwhile: done again from what is there
        else:
            summary.failed += 1
    stale = [
        (k, str(by_key[k]["_routing"]))
        for k, response in zip(written, responses, strict=True)
        if 200 <= response.status < 300
        and any(str(turn["_id"]) in removed for turn in holding.get(k, []))
    ]
    rebuild = functools.partial(repair.repair, client, alias, policy=policy, stats=stats)
    if stale:
        retrying(functools.partial(rebuild, stale, exclude=removed), what="rebuild contexts")
    if late:
        summary.neighbours += retrying(functools.partial(rebuild, late), what="rebuild contexts")
    if documents is not None:
        unsure = {  # a turn the document holds, whose own update failed: gone, maybe
            _session_of(by_key[k])
            for k, response in zip(written, responses, strict=True)
            if not 200 <= response.status < 300
        }
        after = functools.partial(
            session_documents.after_page, client, alias, documents, document_responses,
            seen=page.seen, unsure=unsure, policy=policy, stats=stats,
        )  # fmt: skip
        retrying(after, what="write session documents")


def _session_of(hit: Hit) -> tuple[str, str]:
    return str(hit["_source"]["user_id"]), str(hit["_source"]["session_id"])


def _contexts(
    client: Elasticsearch,
    alias: str,
    hits: list[Hit],
    fields: dict[Key, dict[str, Any]],
    retrying: Callable[..., Any],
) -> tuple[dict[Key, list[Hit]], list[tuple[Key, str]]]:
    """Add the stems, context and mark of each of `hits` without them to `fields`; the
    turns each context holds, and the turns after them enriched before that a turn
    stored late must reach (with their routing)."""
    fresh = {key(hit): hit for hit in hits if not is_enriched(hit)}
    if not fresh:
        return {}, []
    read = functools.partial(turns.read_windows, client, alias, list(fresh.values()))
    held_by: dict[Key, list[Hit]] = {}
    late: list[tuple[Key, str]] = []
    for window in retrying(read, what="read the sessions' turns").values():
        terms = turn_terms(window)
        for i, turn in enumerate(window):
            k = key(turn)
            if k in fresh:
                marks = sorted({*listed(fresh[k], ENRICHED_FIELD), CONTEXT_MARK})
                fields[k].update(
                    {STEMS_FIELD: terms[i], **context_fields(window, terms, i),
                     ENRICHED_FIELD: marks}
                )  # fmt: skip
                held_by[k] = held(window, i)
        # A turn after these that a search shows as not enriched yet is enriched later
        # in this pass (it comes after them), or by a later one, from a read that holds
        # them; a search shows what passes before this one wrote (each ends with a
        # refresh). So only those shown enriched are rebuilt (read again in real time).
        late += [
            (key(window[i]), str(window[i]["_routing"]))
            for i in followers(window, fresh)
            if is_enriched(window[i])
        ]
    return held_by, late


def _add_vectors(
    embedded: PageVectors | None,
    fields: dict[Key, dict[str, Any]],
    summary: EnrichmentSummary,
) -> set[Key]:
    """Add a page's vectors to `fields`, counted in `summary`; the keys that gained them."""
    if embedded is None:
        return set()
    if embedded.error is not None:
        summary.embedder_error = embedded.error
        return set()
    for k, doc in embedded.fields.items():
        fields[k].update(doc)
    summary.no_vector += embedded.empty
    summary.refused += embedded.refused
    summary.first_refusal = summary.first_refusal or embedded.first_refusal
    return set(embedded.fields)
