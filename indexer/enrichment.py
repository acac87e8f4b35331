"""The enrichment pass: what a stored event gains after it is acknowledged.

Storing an event is what `ingest` and `serve` acknowledge, at the speed of a bulk
request; what an event gains from its neighbours and from a model comes after, here:

- its **stems**: the English stems of its text (`core.stems`), so that keyword recall
  matches word forms on a distribution without language analyzers;
- its **context**: the stems of its text with its session's previous and next turn. A
  turn's next neighbour arrives after it, so when an event is enriched, the turns on
  either side of it that were enriched before get their context again, now with it;
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
update never creates). The page after the one being written is found and embedded
meanwhile, so a model's time (a server's, above all) overlaps Elasticsearch's.
`follow` runs pass after pass, for `serve` and for `session-recall embed --follow`
beside `ingest`.

A model's first pass maps its vector field, with the model's dimensions; a model change
is handled this way: the new model's vectors go to a field of their own.
"""

import functools
import logging
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from elasticsearch import (
    ApiError,
    BadRequestError,
    Elasticsearch,
    ElasticsearchWarning,
    NotFoundError,
)
from pydantic import BaseModel

from session_recall.core.access import role_hint
from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.core.stems import stems
from session_recall.embeddings import (
    MODELS_FIELD,
    VECTORS_FIELD,
    Embedder,
    EmbeddingError,
    Vector,
    vector_key,
)
from session_recall.indexer import bulk
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.errors import (
    IndexerError,
    PrivilegeMissing,
    VectorFieldsMissing,
    refusal_reason,
)
from session_recall.indexer.retry import RetryPolicy, call_with_retries
from session_recall.indexer.vectors import mapped_models, vector_fields

log = logging.getLogger(__name__)
T = TypeVar("T")

# The context rule's version: a new rule gets a new mark, and the pass redoes every event.
CONTEXT_MARK = "context-1"
ENRICHED_FIELD = "enriched"
STEMS_FIELD = "stems"
CONTEXT_FIELD = "context"
# A page's texts are embedded in one call and its updates sent in one bulk request:
# a few hundred keeps both well under a second and a retry cheap.
DEFAULT_PAGE = 500
# A follower tries a request a few times only: it tries again at its next pass, and a
# shutdown never waits out a long backoff.
FOLLOW_RETRY = RetryPolicy(max_attempts=3, initial_backoff=0.1, max_backoff=1.0)
# The longest wait between two passes that failed: one log line a minute at most.
_MAX_PAUSE_S = 60.0
# The turns on each side of an event that its context holds.
CONTEXT_REACH = 2
# What one neighbour adds to a context, at most: a tool's long output is a neighbour
# too, and its first words say what it is about.
_NEIGHBOUR_TERMS = 200
# The turns of one session looked at between a page's first and last event of it.
_SPAN = 10_000
_SOURCE = ["text", "user_id", "session_id", MODELS_FIELD, ENRICHED_FIELD]

_Hit = dict[str, Any]


class EnrichmentSummary(BaseModel):
    """Counts of a pass. `missing` is how many events were pending at its start."""

    model: str | None = None
    missing: int = 0
    enriched: int = 0
    no_vector: int = 0  # nothing to embed in the text (punctuation alone, say)
    neighbours: int = 0  # turns enriched before whose context gained a new neighbour
    gone: int = 0  # erased while the pass ran
    failed: int = 0
    embedder_error: str | None = None

    @property
    def done(self) -> int:
        return self.enriched + self.gone + self.failed

    def line(self) -> str:
        what = f"stems, context, vectors of {self.model}" if self.model else "stems, context"
        text = f"{self.missing} event(s) awaited enrichment ({what}); {self.enriched} enriched"
        if self.no_vector:
            text += f" ({self.no_vector} with nothing to embed)"
        if self.neighbours:
            text += f", {self.neighbours} neighbour(s) updated"
        if self.gone:
            text += f", {self.gone} erased meanwhile"
        if self.failed:
            text += f", {self.failed} failed (run it again)"
        if self.embedder_error:
            text += (
                f"; the embedder failed ({self.embedder_error}): run `session-recall embed` "
                "once it answers, for the vectors"
            )
        return text + "."


def pending_query(model_id: str | None) -> dict[str, Any]:
    """Events that lack the context rule's mark, or the model's vectors."""
    lacking = [{"bool": {"must_not": [{"term": {ENRICHED_FIELD: CONTEXT_MARK}}]}}]
    if model_id is not None:
        lacking.append({"bool": {"must_not": [{"term": {MODELS_FIELD: model_id}}]}})
    return {"bool": {"should": lacking, "minimum_should_match": 1}}


def pending(client: Elasticsearch, alias: str, embedder: Embedder | None) -> int:
    """How many events of `alias` await enrichment (0 when the alias does not exist).

    Not lenient about the indices (`ignore_unavailable`): with it, Elasticsearch
    leaves out the indices a credential may not read and answers 0, as if nothing
    waited; without it, such a credential is refused (403) and told which role it
    needs."""
    query = pending_query(embedder.model_id if embedder else None)
    try:
        answer = client.count(index=alias, query=query)
    except NotFoundError:
        return 0
    return int(answer["count"])


def enrich(
    client: Elasticsearch,
    alias: str,
    embedder: Embedder | None,
    *,
    page_size: int = DEFAULT_PAGE,
    policy: RetryPolicy | None = None,
    on_progress: Callable[[EnrichmentSummary], None] | None = None,
    stop: threading.Event | None = None,
) -> EnrichmentSummary:
    """One pass: enrich every event of `alias` pending at its start (and those stored
    meanwhile that sort after where it has got to).

    When the embedder fails, the pass goes on with stems and context and says so in
    `embedder_error`; the vectors come with a later pass. Raises `WriteUnavailable`
    when Elasticsearch fails past the retry bound (what was done stays done).
    """
    policy = policy or RetryPolicy()
    retrying = functools.partial(_call, policy=policy, alias=alias)
    retrying(lambda: _check_fields(client, alias), what="read the mapping")
    if embedder is not None:
        retrying(lambda: map_vector_field(client, alias, embedder), what="map the vector field")
    model_id = embedder.model_id if embedder else None
    query = pending_query(model_id)
    summary = EnrichmentSummary(model=model_id)
    summary.missing = retrying(lambda: pending(client, alias, embedder), what="count the events")
    if on_progress is not None:
        on_progress(summary)
    stats = BulkStats()

    def fetch(
        after: list[Any] | None, previous: "Future[_Embedded] | None"
    ) -> tuple[list[_Hit], "Future[_Embedded] | None"]:
        page = functools.partial(
            client.search,
            index=alias,
            query=query,
            sort=event_order(),
            size=page_size,
            source_includes=_SOURCE,
            track_total_hits=False,
            search_after=after,
            # A page missing a shard would end the pass early, as if all were done.
            allow_partial_search_results=False,
        )
        hits = retrying(page, what="find events to enrich").body["hits"]["hits"]
        if not hits or embedder is None or summary.embedder_error:
            return hits, None  # an embedder that failed in this pass: the next one
        return hits, _embedding(embedder, hits, after=previous)

    # The page after this one is searched and embedded while this one's sessions are
    # read and its updates written, so the model's time overlaps Elasticsearch's.
    hits, vectors = fetch(None, None)
    following: tuple[list[_Hit], Future[_Embedded] | None] = ([], None)
    try:
        while hits and not _stopped(stop):
            following = fetch(hits[-1]["sort"], vectors)
            _write_page(client, alias, hits, vectors, policy, stats, summary, retrying)
            if on_progress is not None:
                on_progress(summary)
            hits, vectors = following
            following = ([], None)
    finally:  # stopped, or failed: a page not embedded yet is not, and none is waited for
        for waiting in (vectors, following[1]):
            if waiting is not None:
                waiting.cancel()
    return summary


def _write_page(
    client: Elasticsearch,
    alias: str,
    hits: list[_Hit],
    vectors: "Future[_Embedded] | None",
    policy: RetryPolicy,
    stats: BulkStats,
    summary: EnrichmentSummary,
    retrying: Callable[..., Any],
) -> None:
    """One page's updates: its vectors once embedded, its stems and contexts, and the
    new context of the turns beside it that were enriched before; counted in `summary`."""
    fields: dict[tuple[str, str], dict[str, Any]] = {_key(hit): {} for hit in hits}
    by_key = {_key(hit): hit for hit in hits}
    contexts = [hit for hit in hits if CONTEXT_MARK not in _listed(hit, ENRICHED_FIELD)]
    neighbours: dict[tuple[str, str], _Hit] = {}
    if contexts:
        read = functools.partial(_sessions, client, alias, contexts)
        sessions = retrying(read, what="read the sessions' turns")
        neighbours = _contexts(contexts, sessions, fields)
    if vectors is not None and summary.embedder_error:
        # The embedder failed on a page before: this one waits for the next pass.
        vectors.cancel()
        vectors = None
    vectorless = _add_vectors(vectors.result() if vectors else None, fields, summary)
    fields = {key: doc for key, doc in fields.items() if doc}
    targets = {**neighbours, **by_key}
    actions = [_update(targets[key], key, doc) for key, doc in fields.items()]
    responses = bulk.send(client, actions, policy=policy, stats=stats)
    for key, response in zip(fields, responses, strict=True):
        mine = key in by_key
        if 200 <= response.status < 300:
            if mine:
                summary.enriched += 1
                summary.no_vector += key in vectorless
            else:
                summary.neighbours += 1
        elif response.status == 404:
            summary.gone += mine
        elif mine:
            summary.failed += 1


def _call(func: Callable[[], T], *, policy: RetryPolicy, alias: str, what: str) -> T:
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
        if CONTEXT_FIELD not in entry.get("mappings", {}).get("properties", {}):
            raise IndexerError(
                f"The index {index} has no fields for stems and context: an earlier "
                "release made it.",
                hint="Run `session-recall setup` once; it adds them to the existing indices.",
            )


def follow(
    client: Elasticsearch,
    alias: str,
    embedder: Embedder | None,
    *,
    stop: threading.Event,
    wake: threading.Event | None = None,
    poll_seconds: float = 1.0,
    page_size: int = DEFAULT_PAGE,
    policy: RetryPolicy | None = None,
    on_pass: Callable[[EnrichmentSummary], None] | None = None,
    on_progress: Callable[[EnrichmentSummary], None] | None = None,
) -> None:
    """Pass after pass until `stop` is set: the next pass starts when `wake` is set
    (a writer stored events) or after `poll_seconds`. A pass that fails is logged
    and tried again after a pause that doubles up to a minute; the pass never gives up
    for good (a missing privilege may be granted meanwhile). A failure is logged as a
    warning once, and again only when it changes."""
    wake = wake or threading.Event()
    policy = policy or FOLLOW_RETRY
    failures = 0
    logged: str | None = None  # the failure last warned of
    while not stop.is_set():
        wake.clear()
        try:
            summary = enrich(
                client, alias, embedder, page_size=page_size, policy=policy, stop=stop,
                on_progress=on_progress,
            )  # fmt: skip
        except Exception as err:  # a follower outlives any one failure
            failures += 1
            pause = min(poll_seconds * 2**failures, _MAX_PAUSE_S)
            level = logging.DEBUG if str(err) == logged else logging.WARNING
            log.log(level, "enrichment pass failed (%s); trying again in %.0f s", err, pause)
            logged = str(err)
            stop.wait(pause)
            continue
        if logged is not None:
            log.info("the enrichment pass works again")
        failures, logged = 0, None
        if on_pass is not None:
            on_pass(summary)
        if summary.embedder_error or not summary.missing:
            wake.wait(poll_seconds)


class Enricher:
    """`follow` in a thread of its own, for `serve` (and `ingest --follow`): started
    and stopped as a context manager, woken by `wake()` when events were stored;
    `on_pass` is called after each pass.
    `pending` is the lag: how many events await enrichment, as last counted (None
    before the first count)."""

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        embedder: Embedder | None,
        *,
        poll_seconds: float = 1.0,
        page_size: int = DEFAULT_PAGE,
        on_pass: Callable[[EnrichmentSummary], None] | None = None,
    ) -> None:
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.pending: int | None = None
        self._embedder = embedder
        self._follow = functools.partial(
            follow,
            client,
            alias,
            embedder,
            stop=self._stop,
            wake=self._wake,
            poll_seconds=poll_seconds,
            page_size=page_size,
            on_progress=self._progress,
        )
        self._thread = threading.Thread(
            target=self._run, name="session-recall-enricher", daemon=True
        )

    def _run(self) -> None:
        # The model loads at start, not with the first events: its memory is part of
        # the process's footprint from then on, and the first writes never wait on it.
        if self._embedder is not None:
            try:
                self._embedder.embed(["warm up"])
            except EmbeddingError as err:
                log.warning("the embedder does not answer yet (%s); enriching without it", err)
        self._follow()

    def wake(self) -> None:
        self._wake.set()

    def _progress(self, summary: EnrichmentSummary) -> None:
        self.pending = max(summary.missing - summary.done, 0)

    def __enter__(self) -> "Enricher":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)


@dataclass(frozen=True)
class _Embedded:
    """A page's vectors: those of `lacking`, the hits without the model's, in order;
    or the embedder's error."""

    model_id: str
    lacking: list[_Hit]
    vectors: list[Vector | None]
    fields: list[dict[str, Any]]
    error: str | None = None


def _stopped(stop: threading.Event | None) -> bool:
    return stop is not None and stop.is_set()


def _embedding(
    embedder: Embedder, hits: list[_Hit], *, after: "Future[_Embedded] | None"
) -> "Future[_Embedded]":
    """`_embed(embedder, hits)` in a daemon thread of its own, once the page `after`
    is embedded (one page at a time, so a local model never competes with itself). A
    pass that stops or fails never waits for it, nor does the process when it exits:
    a server that hangs holds nothing up."""
    future: Future[_Embedded] = Future()

    def run() -> None:
        if after is not None:
            wait([after])
        if not future.set_running_or_notify_cancel():
            return  # cancelled before it started
        try:
            future.set_result(_embed(embedder, hits))
        except BaseException as err:  # given to the pass, which raises it
            future.set_exception(err)

    threading.Thread(target=run, name="session-recall-embed", daemon=True).start()
    return future


def _embed(embedder: Embedder, hits: list[_Hit]) -> _Embedded:
    """The vectors `hits` lack, and their fields (run in the embedding thread)."""
    lacking = [hit for hit in hits if embedder.model_id not in _listed(hit, MODELS_FIELD)]
    if not lacking:
        return _Embedded(embedder.model_id, [], [], [])
    try:
        vectors = embedder.embed([hit["_source"].get("text", "") for hit in lacking])
    except EmbeddingError as err:
        return _Embedded(embedder.model_id, [], [], [], error=err.message)
    docs = [vector_fields(embedder, vector) for vector in vectors]
    return _Embedded(embedder.model_id, lacking, vectors, docs)


def _add_vectors(
    embedded: _Embedded | None,
    fields: dict[tuple[str, str], dict[str, Any]],
    summary: EnrichmentSummary,
) -> set[tuple[str, str]]:
    """Add a page's vectors to `fields`; the keys of texts with none."""
    if embedded is None:
        return set()
    if embedded.error is not None:
        summary.embedder_error = embedded.error
        return set()
    empty = set()
    for hit, vector, doc in zip(embedded.lacking, embedded.vectors, embedded.fields, strict=True):
        doc[MODELS_FIELD] = sorted({*_listed(hit, MODELS_FIELD), embedded.model_id})
        fields[_key(hit)].update(doc)
        if vector is None:
            empty.add(_key(hit))
    return empty


@dataclass(frozen=True)
class _Window:
    turns: list[_Hit]
    first: bool  # it starts at the session's first turn
    last: bool  # it ends at the session's last turn


def _sessions(
    client: Elasticsearch, alias: str, hits: list[_Hit]
) -> dict[tuple[str, str], _Window]:
    """Each session of `hits`: its turns in order, from twice `CONTEXT_REACH` before the
    page's first of it to as many after its last (one `msearch`), and whether they
    reach the session's first turn and its last (fewer were found than asked for)."""
    spans: dict[tuple[str, str], list[_Hit]] = {}
    for hit in hits:
        source = hit["_source"]
        spans.setdefault((source["user_id"], source["session_id"]), []).append(hit)
    searches: list[dict[str, Any]] = []
    ascending = event_order()
    descending = [{field: "desc" for field in key} for key in ascending]
    for (user, session), mine in spans.items():
        scope = [{"term": {"user_id": user}}, {"term": {"session_id": session}}]
        first, last = mine[0]["sort"], mine[-1]["sort"]
        bounds = {
            "gte": Instant(first[0]).to_elasticsearch(),
            "lte": Instant(last[0]).to_elasticsearch(),
        }
        span = {"range": {"timestamp": bounds}}
        head = {"index": alias, "routing": user, "allow_partial_search_results": False}
        common = {"_source": ["text", ENRICHED_FIELD], "track_total_hits": False}
        searches += [
            head,
            {**common, "query": {"bool": {"filter": scope}}, "sort": descending,
             "search_after": first, "size": 2 * CONTEXT_REACH},
            head,
            {**common, "query": {"bool": {"filter": [*scope, span]}}, "sort": ascending,
             "size": _SPAN},
            head,
            {**common, "query": {"bool": {"filter": scope}}, "sort": ascending,
             "search_after": last, "size": 2 * CONTEXT_REACH},
        ]  # fmt: skip
    answers = client.msearch(searches=searches).body["responses"]
    sessions: dict[tuple[str, str], _Window] = {}
    for i, key in enumerate(spans):
        found: dict[tuple[str, str], _Hit] = {}
        looks = answers[3 * i : 3 * i + 3]
        for answer in looks:
            if "error" in answer:
                raise IndexerError(f"Reading a session's turns failed: {answer['error']}.")
            for turn in answer["hits"]["hits"]:
                found[_key(turn)] = turn
        before, after = (len(looks[j]["hits"]["hits"]) for j in (0, 2))
        turns = sorted(found.values(), key=lambda turn: turn["sort"])
        sessions[key] = _Window(turns, before < 2 * CONTEXT_REACH, after < 2 * CONTEXT_REACH)
    return sessions


def _contexts(
    hits: list[_Hit],
    sessions: dict[tuple[str, str], _Window],
    fields: dict[tuple[str, str], dict[str, Any]],
) -> dict[tuple[str, str], _Hit]:
    """Add stems, context and the mark of each of `hits` to `fields`, and the new
    context of each turn beside one of them that was enriched before; those turns."""
    mine = {_key(hit): hit for hit in hits}
    neighbours: dict[tuple[str, str], _Hit] = {}
    reach = CONTEXT_REACH
    for window in sessions.values():
        turns = window.turns
        terms = [stems(turn["_source"].get("text", "")) for turn in turns]
        for i, turn in enumerate(turns):
            key = _key(turn)
            if key in mine:
                fields[key].update(
                    {
                        STEMS_FIELD: terms[i],
                        CONTEXT_FIELD: _context(terms, i),
                        ENRICHED_FIELD: sorted({*_listed(mine[key], ENRICHED_FIELD), CONTEXT_MARK}),
                    }
                )
                continue
            beside = any(_key(t) in mine for t in turns[max(i - reach, 0) : i + reach + 1])
            # Its own neighbours are all in the window (or it is at the session's end).
            inside = (i >= reach or window.first) and (i + reach < len(turns) or window.last)
            if beside and inside and CONTEXT_MARK in _listed(turn, ENRICHED_FIELD):
                fields.setdefault(key, {})[CONTEXT_FIELD] = _context(terms, i)
                neighbours[key] = turn
    return neighbours


def _context(terms: list[str], i: int) -> str:
    reach = CONTEXT_REACH
    before = [_head(t) for t in terms[max(i - reach, 0) : i]]
    after = [_head(t) for t in terms[i + 1 : i + 1 + reach]]
    return " ".join(part for part in [*before, terms[i], *after] if part)


def _head(terms: str) -> str:
    return " ".join(terms.split(" ", _NEIGHBOUR_TERMS)[:_NEIGHBOUR_TERMS])


def _listed(hit: _Hit, field: str) -> list[str]:
    value = hit["_source"].get(field) or []
    return [value] if isinstance(value, str) else list(value)


def _key(hit: _Hit) -> tuple[str, str]:
    return (str(hit["_index"]), str(hit["_id"]))


def _update(hit: _Hit, key: tuple[str, str], doc: dict[str, Any]) -> bulk.Action:
    target = {"_index": key[0], "_id": key[1], "retry_on_conflict": 3}
    if hit.get("_routing") is not None:
        target["routing"] = hit["_routing"]
    return {"update": target}, orjson.dumps({"doc": doc}, option=orjson.OPT_SERIALIZE_NUMPY)


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
