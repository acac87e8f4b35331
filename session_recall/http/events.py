"""`POST /v1/events`: one event, a JSON array, or NDJSON; answered once stored, or
with `?refresh=wait_for` once searchable too (without it, within the index's refresh
interval, 1 s).

200 when every event is stored (indexed or already present); 422 when some were
refused (the others are stored: see each result), events of an erased scope included
(reason "scope erased", counted in `erased`: refused on purpose, sending them again
changes nothing); 413 when the body or its number of events is over a limit (the
message names it; sending it again cannot work); 503 with Retry-After when
Elasticsearch is unavailable or did not store the events within the write deadline,
or the sidecar holds as much as it may, in which case none of the request may be
taken as stored and the whole request should be sent again (creates are idempotent).
With a token bound to one user, a body that names another user's event is refused
whole with 403 before any event is stored (`http.auth`).
"""

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from session_recall.core import strict_json
from session_recall.core.errors import SessionRecallError
from session_recall.factories import enricher_for
from session_recall.http.auth import FORBIDDEN, Needs, grant_of, refuse_other_users
from session_recall.http.bodies import BodyRefused, content_type, read_body
from session_recall.http.errors import error_response, error_spec, json_error
from session_recall.http.memory import give_back
from session_recall.http.openapi import ref
from session_recall.http.query import read_query
from session_recall.http.services import RouteGroup, Services, WriteHealth
from session_recall.indexer import (
    REFRESH_POLICIES,
    Batcher,
    BatchingOptions,
    EnrichmentSummary,
    EventLimits,
    EventResult,
    Parsed,
    Refresh,
    Status,
    Writer,
    WriterOptions,
    collector,
    native,
    parse_line,
    parse_object,
)
from session_recall.indexer.deadline import Deadline
from session_recall.indexer.event import Event
from session_recall.indexer.filling import fill
from session_recall.indexer.results import refusal
from session_recall.indexer.retry import RetryPolicy
from session_recall.observability.metrics import EnrichmentTally, EventTally
from session_recall.security.tokens import Action, Grant

NDJSON_TYPES = frozenset({"application/x-ndjson", "application/ndjson", "application/jsonl"})
# Short backoffs: every retry must fit in the write deadline, and a producer is better
# served by a prompt 503 than by a long wait.
SERVE_RETRY = RetryPolicy(max_attempts=4, initial_backoff=0.2, max_backoff=1.0)


class EventsResponse(BaseModel):
    """One result per event, in request order."""

    results: list[EventResult]
    indexed: int
    already_present: int
    rejected: int
    erased: int = Field(
        description="Of `rejected`, events refused because their scope was erased after "
        "they were stamped (reason `scope erased`)."
    )


class EventsOptions(BaseModel):
    """`?refresh=wait_for`: answer once the events are searchable (unset: the server's
    default, `serve --refresh`)."""

    model_config = ConfigDict(extra="forbid")

    refresh: Refresh | None = None


def _give_back_after(summary: EnrichmentSummary) -> None:
    if summary.enriched:
        give_back()


def events_group(
    services: Services,
    *,
    batching: BatchingOptions | None = None,
    writer_options: WriterOptions | None = None,
    event_limits: EventLimits | None = None,
) -> RouteGroup:
    limits = services.limits
    options = writer_options or WriterOptions(
        retry=SERVE_RETRY, max_new_partitions=limits.max_new_partitions
    )
    event_limits = event_limits or limits.event_limits()
    # Events are stored at no-vector speed; the enricher adds stems, context and
    # vectors in the background (see `indexer.enrichment`).
    writer = Writer(services.client, services.settings.index, options=options)
    # Memory the pass freed goes back to the system, as a burst of bodies' does.
    metrics = services.metrics
    passes = EnrichmentTally() if metrics is not None else None  # what /metrics tells
    enricher = (
        # serve's replicas share the work by leases on slices of the sessions.
        enricher_for(
            services.settings,
            services.client,
            on_pass=passes.then(_give_back_after) if passes else _give_back_after,
        )
        if services.enrich
        else None
    )
    # NDJSON bodies into native batches, where the core is.
    batches = native.available()
    batching = batching or BatchingOptions(
        max_pending_events=limits.max_pending_events, deadline=limits.write_deadline
    )
    batcher = Batcher(writer, batching)
    tally = metrics.events if metrics is not None else None
    if metrics is not None:
        metrics.watch_writes(writer, batcher)
        if passes is not None and enricher is not None:
            metrics.watch_enrichment(passes, enricher)
    services.write_health.append(
        lambda: WriteHealth(
            batcher.failing(),
            dict(writer.refused_partitions),
            enrichment_pending=enricher.pending if enricher else None,
            enrichment_refused=enricher.refused if enricher else 0,
            embedder_error=enricher.embedder_error if enricher else None,
            enrichment_failing=enricher.failing if enricher else None,
            enrichment_problem=enricher.problem if enricher else None,
        )
    )

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        # Events in flight outlive a young collection, as in `ingest`: tune the
        # collector the same way for as long as the batcher takes events.
        with collector.tuned_for_load():
            async with batcher:
                with enricher or contextlib.nullcontext():
                    yield

    async def post_events(request: Request) -> Response:
        options = read_query(request, EventsOptions)
        if isinstance(options, Response):
            return options
        refresh = options.refresh or services.refresh
        kind = content_type(request)
        if kind not in NDJSON_TYPES and kind != "application/json":
            return json_error(
                415,
                f"Unsupported content type {kind!r}.",
                "Use application/json or application/x-ndjson.",
            )
        try:
            async with read_body(
                request,
                limit=limits.max_body_bytes,
                budget=services.bodies,
                timeout=limits.body_timeout,
                room_wait=limits.write_deadline,
                smaller="Send fewer events per request.",
            ) as body:
                answer = await store(
                    body, ndjson=kind in NDJSON_TYPES, refresh=refresh, grant=grant_of(request)
                )
            if enricher is not None:
                enricher.wake()
            return answer
        except BodyRefused as refused:
            return refused.response()

    async def store(body: bytes, *, ndjson: bool, refresh: Refresh, grant: Grant) -> Response:
        limit = limits.max_events_per_request
        if ndjson:
            # A body of fewer lines than the limit needs no count (blank lines are no
            # events): one pass over the lines, not two, for nearly every request.
            if body.count(b"\n") >= limit:
                count = sum(1 for line in body.split(b"\n") if line.strip())
                if count > limit:
                    return _too_many(count, limit)
            # A token bound to one user has its events' users checked before any is
            # stored: the Python path sees them, the native batches do not.
            if batches and grant.user is None:
                return await store_batches(body, refresh=refresh)
            lines = body.split(b"\n")
            items = [p for line in lines if (p := parse_line(line, event_limits)) is not None]
            del lines
        else:
            try:
                value = strict_json.loads(body)
            except strict_json.InvalidJson as err:
                return json_error(400, f"The body is not valid JSON: {err}.")
            values = value if isinstance(value, list) else [value]
            if len(values) > limit:
                return _too_many(len(values), limit)
            items = [parse_object(v, event_limits) for v in values]
        if not items:
            return json_error(400, "The body holds no event.")
        users = (item.event.user_id for item in items if isinstance(item, Parsed))
        foreign = refuse_other_users(grant, users)
        if foreign is not None:
            return foreign
        try:
            stored = iter(
                await batcher.submit(
                    [p.event for p in items if isinstance(p, Parsed)], refresh=refresh
                )
            )
        except SessionRecallError as err:
            return error_response(err)
        results = [
            next(stored) if isinstance(item, Parsed) else refusal(item.original, item.reason)
            for item in items
        ]
        return _answer(results, tally)

    async def store_batches(body: bytes, *, refresh: Refresh) -> Response:
        try:
            if not writer.layout_known:  # once: what the batches' partitions are named
                deadline = Deadline.after(limits.write_deadline)
                await batcher.in_writer_thread(lambda: writer.check_layout(deadline=deadline))
            filled = fill(writer, body, event_limits)
            if not len(filled):
                return json_error(400, "The body holds no event.")
            answers = await batcher.submit_batches(filled.batches, refresh=refresh)
        except SessionRecallError as err:
            return error_response(err)
        return _answer(filled.results(answers), tally)

    paths = {
        "/v1/events": {
            "post": {
                "summary": "Store events; answers once Elasticsearch has them",
                "parameters": [
                    {
                        "name": "refresh",
                        "in": "query",
                        "required": False,
                        "description": "wait_for: answer once the events are searchable "
                        "(one refresh, shared by the requests written together); false: "
                        "once stored, searchable within the refresh interval (1 s).",
                        "schema": {
                            "type": "string",
                            "enum": list(REFRESH_POLICIES),
                            "default": services.refresh,
                        },
                    }
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "oneOf": [ref(Event), {"type": "array", "items": ref(Event)}]
                            }
                        },
                        "application/x-ndjson": {
                            "schema": {"type": "string", "description": "One Event per line"}
                        },
                    },
                },
                "responses": {
                    "200": _json("Every event is stored", EventsResponse),
                    "400": error_spec("The body cannot be read, or holds no event"),
                    "401": error_spec("The bearer token is missing or wrong"),
                    "403": FORBIDDEN,
                    "408": error_spec("The body did not arrive within the body timeout"),
                    "413": error_spec(
                        "The body is over the size limit, or holds more events than one "
                        "request may; nothing was stored; the error names the limit"
                    ),
                    "415": error_spec("Not application/json nor application/x-ndjson"),
                    "422": _json("Some events were refused; the others are stored", EventsResponse),
                    "503": error_spec(
                        "Elasticsearch unavailable or not done within the write deadline, "
                        "the alias not set up, or the sidecar full; retry after Retry-After "
                        "(creates are idempotent)"
                    ),
                },
            }
        }
    }
    return RouteGroup(
        routes=[Route("/v1/events", post_events, methods=["POST"])],
        paths=paths,
        models=[(Event, "validation"), (EventsResponse, "serialization")],
        lifespan=lifespan,
        # The events name their users: `store` checks them against the token's.
        needs={("/v1/events", "POST"): Needs(Action.WRITE, user=None)},
    )


def answer_body(results: list[EventResult]) -> tuple[int, bytes]:
    """The status and body of an answer: 422 when an event was refused, else 200; the
    body is `EventsResponse` as pydantic writes it with `exclude_none`, in request order.
    Written in one pass with orjson: building and dumping the model, and counting each
    status in a pass of its own, took ten times as long on a 100-event answer."""
    counts = dict.fromkeys(Status, 0)
    erased = 0
    entries = []
    for result in results:
        entry: dict[str, str] = {"status": result.status}
        if result.event_id is not None:
            entry["event_id"] = result.event_id
        if result.reason is not None:
            entry["reason"] = result.reason
            erased += result.erased
        counts[result.status] += 1
        entries.append(entry)
    content = orjson.dumps(
        {
            "results": entries,
            "indexed": counts[Status.INDEXED],
            "already_present": counts[Status.ALREADY_PRESENT],
            "rejected": counts[Status.REJECTED],
            "erased": erased,
        }
    )
    return (422 if counts[Status.REJECTED] else 200), content


def _too_many(count: int, limit: int) -> JSONResponse:
    return json_error(
        413,
        f"The request holds {count} events, over the limit of {limit} per request; "
        "none was stored.",
        f"Send at most {limit} events per request (SESSION_RECALL_MAX_EVENTS_PER_REQUEST "
        "sets the limit).",
    )


def _answer(results: list[EventResult], tally: EventTally | None) -> Response:
    if tally is not None:
        tally.count(results)
    status, content = answer_body(results)
    return Response(content, status_code=status, media_type="application/json")


def _json(description: str, model: type[BaseModel]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ref(model)}}}
