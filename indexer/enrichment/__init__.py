"""The enrichment pass: what a stored event gains after it is acknowledged.

Storing an event is what `ingest` and `serve` acknowledge, at the speed of a bulk
request; what an event gains from its neighbours and from a model comes after, here:

- its **stems**: the English stems of its text (`core.stems`), so that keyword recall
  matches word forms on a distribution without language analyzers;
- its **context**: the stems of its text with the turns just before it in its session
  (`indexer.context`, which also keeps a context true when a turn it holds is erased);
- its **vector**, from the configured embedder (`embedding_models` lists the models
  that processed it; a text of punctuation alone has no vector).

`enriched` lists the context rule's version (`CONTEXT_MARK`) once stems and context are
there. Until then recall still finds the event by the words of its own text: the
keyword list searches `text` beside the enriched fields, so no event is ever invisible.

This distribution has no `_update_by_query`, so a pass pages through the pending events
(`pending_query`) in the events' total order with `search_after` and sends bulk
`update`s, routed like the events. It is idempotent and resumable by construction: an
event is found only until its update lands, so a second pass, or a pass after a crash,
starts where the first left off. An event erased meanwhile is not brought back (an
update never creates). Each update is conditional on the version the pass read: two
enrichers never overwrite a newer context with an older one, and an erasure's repair
of a context is never undone by a pass that read before it. The page after the one
being written is found and embedded meanwhile, so a model's time (a server's, above
all) overlaps Elasticsearch's. `follow` runs pass after pass, for `serve` and for
`session-recall embed --follow` beside `ingest` (`indexer.enricher`).

A pass looks for events without stems and context first, then for events that have
them and lack the model's vectors: after a model change, every event lacks the new
model's vectors, and the backfill of old events never holds up a fresh event's stems
and context (a follower's backfill even gives way, page by page, to events stored
meanwhile). A page is bounded by count and by the bytes of its texts. A text the
model refuses on its own is marked without a vector (`page_vectors`); any other
failure of the embedder leaves the page's vectors to a later pass.

A model's first pass maps its vector field, with the model's dimensions; a model change
is handled this way: the new model's vectors go to a field of their own.
"""

import functools
import logging
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from elasticsearch import (
    ApiError,
    BadRequestError,
    Elasticsearch,
    ElasticsearchWarning,
    NotFoundError,
)
from pydantic import BaseModel

from session_recall.core import spans
from session_recall.core.access import role_hint
from session_recall.core.order import event_order
from session_recall.embeddings import MODELS_FIELD, VECTORS_FIELD, Embedder, vector_key
from session_recall.indexer import context, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.context import (
    CONTEXT_FIELD,
    CONTEXT_MARK,
    CONTEXT_OF_FIELD,
    ENRICHED_FIELD,
    STEMS_FIELD,
)
from session_recall.indexer.errors import (
    IndexerError,
    PrivilegeMissing,
    VectorFieldsMissing,
    refusal_reason,
)
from session_recall.indexer.page_vectors import PageVectors, embedding
from session_recall.indexer.retry import RetryPolicy, call_with_retries
from session_recall.indexer.vectors import REFUSALS_FIELD, REFUSED_FIELD, mapped_models

log = logging.getLogger(__name__)
T = TypeVar("T")

# A page's texts are embedded in one call and its updates sent in one bulk request:
# a few hundred keeps both well under a second and a retry cheap.
DEFAULT_PAGE = 500
# A follower tries a request a few times only: it tries again at its next pass, and a
# shutdown never waits out a long backoff.
FOLLOW_RETRY = RetryPolicy(max_attempts=3, initial_backoff=0.1, max_backoff=1.0)
# A page's texts, at most: 500 tool outputs of a megabyte each would be a gigabyte in
# memory (twice, with the next page embedded meanwhile) and in one request.
PAGE_BYTES = 8 * 1024 * 1024
_SOURCE = [
    "text", "user_id", "session_id", "timestamp", "event_id", MODELS_FIELD, ENRICHED_FIELD,
    REFUSED_FIELD, REFUSALS_FIELD,
]  # fmt: skip

_Hit = context.Hit


class EnrichmentSummary(BaseModel):
    """Counts of a pass. `missing` is how many events were pending at its start."""

    model: str | None = None
    missing: int = 0
    enriched: int = 0
    vectors: int = 0  # events the model processed (with a vector or none to give)
    no_vector: int = 0  # nothing to embed in the text (punctuation alone, say)
    refused: int = 0  # texts the model refused on their own: marked without a vector
    neighbours: int = 0  # turns enriched before whose context gained a turn stored late
    gone: int = 0  # erased while the pass ran
    conflicts: int = 0  # written meanwhile by another writer: left for the next pass
    failed: int = 0
    embedder_error: str | None = None
    first_refusal: str | None = None
    interrupted: bool = False  # a backfill that gave way to events stored meanwhile

    @property
    def done(self) -> int:
        return self.enriched + self.gone + self.failed + self.conflicts

    @property
    def stalled(self) -> bool:
        """The pass left work it could not do: a follower pauses before the next."""
        no_progress = self.missing > 0 and self.done == 0 and not self.interrupted
        return bool(self.failed or self.conflicts or self.embedder_error or no_progress)

    def line(self) -> str:
        what = f"stems, context, vectors of {self.model}" if self.model else "stems, context"
        text = f"{self.missing} event(s) awaited enrichment ({what}); {self.enriched} enriched"
        if self.no_vector:
            text += f" ({self.no_vector} with nothing to embed)"
        if self.refused:
            text += (
                f", {self.refused} text(s) refused by the model, kept without a vector "
                f"(first reason: {self.first_refusal})"
            )
        if self.neighbours:
            text += f", {self.neighbours} neighbour(s) updated"
        if self.gone:
            text += f", {self.gone} erased meanwhile"
        if self.conflicts:
            text += f", {self.conflicts} changed meanwhile (left for the next pass)"
        if self.failed:
            text += f", {self.failed} failed (run it again)"
        if self.embedder_error:
            text += (
                f"; the embedder failed ({self.embedder_error}): run `session-recall embed` "
                "once it answers, for the vectors"
            )
        return text + "."


def _stopped(event: threading.Event | None) -> bool:
    return event is not None and event.is_set()


def _lacking_context() -> dict[str, Any]:
    return {"bool": {"must_not": [{"term": {ENRICHED_FIELD: CONTEXT_MARK}}]}}


def _lacking_vectors(model_id: str) -> dict[str, Any]:
    return {"bool": {"must_not": [{"term": {MODELS_FIELD: model_id}}]}}


def pending_query(model_id: str | None) -> dict[str, Any]:
    """Events that lack the context rule's mark, or the model's vectors."""
    lacking = [_lacking_context()]
    if model_id is not None:
        lacking.append(_lacking_vectors(model_id))
    return {"bool": {"should": lacking, "minimum_should_match": 1}}


def phases(model_id: str | None) -> list[dict[str, Any]]:
    """What a pass looks for, in order: events without stems and context (fresh ones,
    or all of them after a new context rule), then those that have them and lack the
    model's vectors (a new model's backfill)."""
    found = [_lacking_context()]
    if model_id is not None:
        marked = {"term": {ENRICHED_FIELD: CONTEXT_MARK}}
        found.append({"bool": {"filter": [marked, _lacking_vectors(model_id)]}})
    return found


def pending(
    client: Elasticsearch,
    alias: str,
    embedder: Embedder | None,
    *,
    within: dict[str, Any] | None = None,
) -> int:
    """How many events of `alias` (of the slices `within` selects) await enrichment
    (0 when the alias does not exist).

    Not lenient about the indices (`ignore_unavailable`): with it, Elasticsearch
    leaves out the indices a credential may not read and answers 0, as if nothing
    waited; without it, such a credential is refused (403) and told which role it
    needs."""
    query = _within(pending_query(embedder.model_id if embedder else None), within)
    try:
        answer = client.count(index=alias, query=query)
    except NotFoundError:
        return 0
    return int(answer["count"])


def _within(query: dict[str, Any], within: dict[str, Any] | None) -> dict[str, Any]:
    return query if within is None else {"bool": {"filter": [query, within]}}


def refused(client: Elasticsearch, alias: str, embedder: Embedder | None) -> int:
    """How many events' texts `embedder`'s model refused: kept without its vector."""
    if embedder is None:
        return 0
    query = {"term": {REFUSED_FIELD: embedder.model_id}}
    try:  # as lenient as `pending`, no more: a credential that cannot read is told so
        return int(client.count(index=alias, query=query)["count"])
    except NotFoundError:
        return 0


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
        retrying(lambda: _check_fields(client, alias), what="read the mapping")
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
            _fetch, client, alias, _within(phase, within), embedder, summary, retrying,
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

    hits: list[_Hit]
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
    search = functools.partial(
        client.search,
        index=alias,
        query=query,
        sort=event_order(),
        size=page_size,
        source_includes=_SOURCE,
        track_total_hits=False,
        search_after=after,
        seq_no_primary_term=True,  # each update is conditional on the version read
        # A page missing a shard would end the pass early, as if all were done.
        allow_partial_search_results=False,
    )
    found = retrying(search, what="find events to enrich").body["hits"]["hits"]
    hits = _within_bytes(found, page_bytes)
    if not hits or embedder is None or summary.embedder_error:
        return _Page(hits, None, seen)  # an embedder that failed in this pass: the next one
    return _Page(hits, embedding(embedder, hits, after=previous), seen)


def _within_bytes(hits: list[_Hit], limit: int) -> list[_Hit]:
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
    (`context.write_checked`), and the turns after an event stored late gain it."""
    by_key = {context.key(hit): hit for hit in page.hits}
    fields: dict[context.Key, dict[str, Any]] = {k: {} for k in by_key}
    held, late = _contexts(client, alias, page.hits, fields, retrying)
    vectors = page.vectors
    if vectors is not None and summary.embedder_error:
        # The embedder failed on a page before: this one waits for the next pass.
        vectors.cancel()
        vectors = None
    embedded = _add_vectors(vectors.result() if vectors else None, fields, summary)
    written = [k for k, doc in fields.items() if doc]
    updates = [(context.update(by_key[k], fields[k]), held.get(k, [])) for k in written]
    responses, removed = context.write_checked(
        client, alias, updates, seen=page.seen, policy=policy, stats=stats
    )
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
        and any(str(turn["_id"]) in removed for turn in held.get(k, []))
    ]
    repair = functools.partial(context.repair, client, alias, policy=policy, stats=stats)
    if stale:
        retrying(functools.partial(repair, stale, exclude=removed), what="rebuild contexts")
    if late:
        summary.neighbours += retrying(functools.partial(repair, late), what="rebuild contexts")


def _contexts(
    client: Elasticsearch,
    alias: str,
    hits: list[_Hit],
    fields: dict[context.Key, dict[str, Any]],
    retrying: Callable[..., Any],
) -> tuple[dict[context.Key, list[_Hit]], list[tuple[context.Key, str]]]:
    """Add the stems, context and mark of each of `hits` without them to `fields`; the
    turns each context holds, and the turns after them enriched before that a turn
    stored late must reach (with their routing)."""
    fresh = {context.key(hit): hit for hit in hits if not context.is_enriched(hit)}
    if not fresh:
        return {}, []
    read = functools.partial(context.read_windows, client, alias, list(fresh.values()))
    held: dict[context.Key, list[_Hit]] = {}
    late: list[tuple[context.Key, str]] = []
    for turns in retrying(read, what="read the sessions' turns").values():
        terms = context.turn_terms(turns)
        for i, turn in enumerate(turns):
            k = context.key(turn)
            if k in fresh:
                marks = sorted({*context.listed(fresh[k], ENRICHED_FIELD), CONTEXT_MARK})
                fields[k].update(
                    {STEMS_FIELD: terms[i], **context.context_fields(turns, terms, i),
                     ENRICHED_FIELD: marks}
                )  # fmt: skip
                held[k] = turns[max(i - context.CONTEXT_REACH, 0) : i]
        # A turn after these that a search shows as not enriched yet is enriched later
        # in this pass (it comes after them), or by a later one, from a read that holds
        # them; a search shows what passes before this one wrote (each ends with a
        # refresh). So only those shown enriched are rebuilt (read again in real time).
        late += [
            (context.key(turns[i]), str(turns[i]["_routing"]))
            for i in context.followers(turns, fresh)
            if context.is_enriched(turns[i])
        ]
    return held, late


def _add_vectors(
    embedded: PageVectors | None,
    fields: dict[context.Key, dict[str, Any]],
    summary: EnrichmentSummary,
) -> set[context.Key]:
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


def call(func: Callable[[], T], *, policy: RetryPolicy, alias: str, what: str) -> T:
    """`func()` retried as a write is; a refusal a retry cannot fix (a missing
    privilege, a closed index) is an `IndexerError` naming it, never the client's."""
    try:
        return call_with_retries(func, policy=policy, what=what)
    except ApiError as err:
        message = f"Elasticsearch refused to {what} of {alias!r}: {refusal_reason(err)}."
        if err.status_code == 403:
            raise PrivilegeMissing(message, hint=role_hint("enrich")) from None
        raise IndexerError(
            message,
            hint="Check the alias and the credentials' privileges on it, then run "
            "`session-recall embed` again.",
        ) from None


def _check_fields(client: Elasticsearch, alias: str) -> None:
    """Raise `IndexerError` when an index of `alias` lacks the enriched fields: it was
    made by an earlier release, and every update would be refused (strict mapping)."""
    try:
        mappings = client.indices.get_mapping(index=alias).body
    except NotFoundError:
        return  # nothing to enrich: the pass finds no event
    for index, entry in sorted(mappings.items()):
        properties = entry.get("mappings", {}).get("properties", {})
        if CONTEXT_FIELD not in properties or CONTEXT_OF_FIELD not in properties:
            raise IndexerError(
                f"The index {index} lacks fields of the context rule: an earlier release made it.",
                hint="Run `session-recall setup` once; it adds them to the existing indices.",
            )


def map_vector_field(client: Elasticsearch, alias: str, embedder: Embedder) -> None:
    """Map the model's vector field on every index of the alias, with its dimensions.

    Done before the first update, so that a model whose first events have nothing to
    embed still has its field, and ingestion with it is allowed (see `check_index`).
    The field is mapped as the index's own dynamic template for vectors says (the
    mapping `setup` installed), with the dimensions made explicit.
    """
    mapped_models(client, alias)  # raises for an index that predates the vector fields
    mappings = client.indices.get_mapping(index=alias).body
    key = vector_key(embedder.model_id)
    for index, entry in sorted(mappings.items()):
        found = entry.get("mappings", {})
        template = _vector_template(found)
        vectors = found.get("properties", {}).get(VECTORS_FIELD, {}).get("properties", {})
        if vectors.get(key, {}).get("dims") == embedder.dims:
            continue  # mapped by an earlier pass
        field = {**template, "dims": embedder.dims}
        properties = {VECTORS_FIELD: {"properties": {key: field}}}
        try:
            with warnings.catch_warnings():
                # The enrich role maps it through its `index` privilege, which 9.x still
                # allows with a deprecation notice, and no user can act on.
                warnings.simplefilter("ignore", ElasticsearchWarning)
                client.indices.put_mapping(index=index, properties=properties)
        except BadRequestError as err:
            raise IndexerError(
                f"The vector field of {embedder.model_id!r} exists in {index} with another "
                f"shape: {err.error}.",
                hint="The model's output size changed: give it another model id.",
            ) from None


def _vector_template(mappings: dict[str, Any]) -> dict[str, Any]:
    for entry in mappings.get("dynamic_templates", []):
        for template in entry.values():
            if template.get("path_match") == f"{VECTORS_FIELD}.*":
                return dict(template["mapping"])
    raise VectorFieldsMissing(
        "The index has no template for vector fields: it was made by an earlier release.",
        hint="Run `session-recall setup` once; it adds them to the existing indices.",
    )
