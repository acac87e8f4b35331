"""Kept memories over HTTP, one user's per path (`/v1/users/{user}/memories`).

    GET    /v1/users/{user}/memories?q=QUERY&kind=decision,fact&include_superseded=true
    GET    /v1/users/{user}/memories?page_size=N&cursor=C      (no q: newest first, paged)
    POST   /v1/users/{user}/memories                {"statement", "kind", "sources", ...}
    POST   /v1/users/{user}/memories/{memory}/retire {"reason"}

A token bound to a user reaches that user's memories alone: reading takes its `read`
action, saving and retiring its `write` action. A retired memory is kept as history;
a memory goes for good only with its sources (the erasure endpoints, `DELETE`), so
retiring is a `POST`, not a `DELETE`.
"""

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from session_recall.core.errors import SessionRecallError
from session_recall.core.kept_memories import MAX_REASON_CHARS, Memory, MemoryKind
from session_recall.factories import miner_for
from session_recall.http.auth import FORBIDDEN, Needs
from session_recall.http.bodies import BodyRefused, read_json
from session_recall.http.errors import error_response, error_spec, json_error
from session_recall.http.openapi import path_parameters, query_parameters, ref
from session_recall.http.paths import route
from session_recall.http.query import read_query
from session_recall.http.services import RouteGroup, Services
from session_recall.indexer.enrichment.consolidation import Consolidator, in_background
from session_recall.indexer.enrichment.leases import Leased
from session_recall.indexer.enrichment.memories import MemoryWriter, SavedMemory
from session_recall.recall import MemoriesPage, MemoriesResult
from session_recall.security.tokens import Action
from session_recall.tools.searchers import searchers_for

MEMORIES = "/v1/users/{user}/memories"
RETIRE = "/v1/users/{user}/memories/{memory}/retire"
# A memory is a short statement and a few event ids.
MAX_BODY_BYTES = 64 * 1024


class MemoriesOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    q: str | None = Field(default=None, description="Search by relevance; without: list.")
    kind: str | None = Field(default=None, description="Kinds to keep, comma-separated.")
    include_superseded: bool = False
    limit: int = Field(default=10, description="With q: memories, most relevant first.")
    page_size: int = Field(default=50, description="Without q: memories per page.")
    cursor: str | None = None


class SaveMemory(BaseModel):
    """The body of `POST /v1/users/{user}/memories`."""

    model_config = ConfigDict(extra="forbid")

    statement: str
    kind: MemoryKind
    sources: list[str] = Field(description="Event ids of this user's events, at least one.")
    supersedes: list[str] | str | None = None
    subject: str | None = None


class Retire(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(max_length=MAX_REASON_CHARS)


def memories_group(services: Services) -> RouteGroup:
    reads, writes = services.lanes.reads, services.lanes.erasures
    settings, limits = services.settings, services.limits
    searchers = searchers_for(reads.client, settings, search_timeout=limits.read_deadline)
    embedder = searchers.embedder  # one model for the queries and the statements

    def writer(user: str) -> MemoryWriter:
        return MemoryWriter(writes.client, settings.index, user_id=user, embedder=embedder)

    async def get(request: Request) -> Response:
        options = read_query(request, MemoriesOptions)
        if isinstance(options, Response):
            return options
        user = request.path_params["user"]
        kinds = [k.strip() for k in (options.kind or "").split(",") if k.strip()]

        def answer() -> BaseModel:
            searcher = searchers.memories(user_id=user)
            if options.q is not None:
                return searcher.search(options.q, kinds=kinds, limit=options.limit,
                                       include_superseded=options.include_superseded)  # fmt: skip
            return searcher.list(kinds=kinds, page_size=options.page_size, cursor=options.cursor,
                                 include_superseded=options.include_superseded)  # fmt: skip

        try:
            found = await reads.run(answer, what="answer the memories read")
        except SessionRecallError as err:
            return error_response(err)
        return Response(found.model_dump_json(), media_type="application/json")

    def body_of(model: type[BaseModel]) -> Callable[[Request], Awaitable[BaseModel | Response]]:
        async def parse(request: Request) -> BaseModel | Response:
            try:
                data = await read_json(
                    request, what="the memory", limit=MAX_BODY_BYTES, budget=services.bodies,
                    timeout=limits.body_timeout, room_wait=limits.write_deadline,
                    smaller="Send one short memory.",
                )  # fmt: skip
            except BodyRefused as refused:
                return refused.response()
            try:
                return model.model_validate(data)
            except ValidationError as err:
                problem = err.errors(include_url=False, include_input=False)[0]
                where = ".".join(str(part) for part in problem["loc"]) or "body"
                return json_error(422, f"{where}: {problem['msg']}.",
                                  f"The body takes: {', '.join(model.model_fields)}.")  # fmt: skip

        return parse

    save_body, retire_body = body_of(SaveMemory), body_of(Retire)

    async def save(request: Request) -> Response:
        parsed = await save_body(request)
        if isinstance(parsed, Response):
            return parsed
        assert isinstance(parsed, SaveMemory)
        user = request.path_params["user"]
        try:
            saved = await writes.run(
                lambda: writer(user).save_memory(
                    parsed.statement, parsed.kind, parsed.sources,
                    supersedes=parsed.supersedes, subject=parsed.subject,
                ),
                what="save the memory",
            )  # fmt: skip
        except SessionRecallError as err:
            return error_response(err)
        status = 201 if saved.created else 200
        return Response(saved.model_dump_json(), status_code=status, media_type="application/json")

    async def retire(request: Request, reason: str) -> Response:
        user, memory = request.path_params["user"], request.path_params["memory"]
        try:
            retired = await writes.run(
                lambda: writer(user).retire_memory(memory, reason), what="retire the memory"
            )
        except SessionRecallError as err:
            return error_response(err)
        return Response(retired.model_dump_json(), media_type="application/json")

    async def retire_post(request: Request) -> Response:
        parsed = await retire_body(request)
        if isinstance(parsed, Response):
            return parsed
        assert isinstance(parsed, Retire)
        return await retire(request, parsed.reason)

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        if not services.consolidate:
            yield
            return
        # serve's replicas share the mining by leases, as they share the enrichment.
        consolidator = Consolidator(
            writes.client, settings.index, embedder=embedder,
            leases=Leased(writes.client, settings.index, work="consolidation"),
            miner=miner_for(settings, writes.client, embedder=embedder),
        )  # fmt: skip
        with in_background(consolidator):
            yield

    return RouteGroup(
        lifespan=lifespan if services.consolidate else None,
        routes=[
            route(MEMORIES, get, ["GET"]),
            route(MEMORIES, save, ["POST"]),
            route(RETIRE, retire_post, ["POST"]),
        ],
        paths=_paths(),
        models=[
            (MemoriesResult, "serialization"),
            (MemoriesPage, "serialization"),
            (SavedMemory, "serialization"),
            (Memory, "serialization"),
            (SaveMemory, "validation"),
            (Retire, "validation"),
        ],
        needs={
            (MEMORIES, "GET"): Needs(Action.READ),
            (MEMORIES, "POST"): Needs(Action.WRITE),
            (RETIRE, "POST"): Needs(Action.WRITE),
        },
    )


_COMMON: dict[str, Any] = {
    "401": error_spec("The bearer token is missing or wrong."),
    "403": FORBIDDEN,
    "500": error_spec("Elasticsearch refused the request; the hint says why."),
    "503": error_spec(
        "Elasticsearch is unavailable, or the alias is not set up; retry after Retry-After."
    ),
}


def _json(model: type[BaseModel], description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": ref(model)}}}  # fmt: skip


def _paths() -> dict[str, Any]:
    return {
        MEMORIES: {
            "get": {
                "summary": "Search or list a user's kept memories",
                "description": "With `q`: the current memories that answer it, most relevant "
                "first (words and meaning). Without: the memories newest first, paged by "
                "`next_cursor`. `include_superseded` adds the history.",
                "parameters": path_parameters(MEMORIES) + query_parameters(MemoriesOptions),
                "responses": {
                    "200": {
                        "description": "MemoriesResult with q, MemoriesPage without",
                        "content": {
                            "application/json": {
                                "schema": {"oneOf": [ref(MemoriesResult), ref(MemoriesPage)]}
                            }
                        },
                    },
                    "400": error_spec("A query parameter is unknown or given twice."),
                    "422": error_spec("A kind, limit, page size or cursor is refused."),
                    **_COMMON,
                },
            },
            "post": {
                "summary": "Save a memory of the user",
                "description": "Its sources must be events of this user. `supersedes` names "
                "the memories it replaces, kept as history. Saved twice, it is stored once.",
                "parameters": path_parameters(MEMORIES),
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": ref(SaveMemory)}},
                },
                "responses": {
                    "201": _json(SavedMemory, "Saved"),
                    "200": _json(SavedMemory, "The same memory was saved before"),
                    "400": error_spec("The body is not JSON."),
                    "415": error_spec("The body is not application/json."),
                    "422": error_spec("A source is not this user's event, or a field is refused."),
                    **_COMMON,
                },
            },
        },
        RETIRE: {
            "post": {
                "summary": "Retire a memory of the user",
                "description": "It stays as history, with `validTo` now and the reason.",
                "parameters": path_parameters(RETIRE),
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": ref(Retire)}},
                },
                "responses": {
                    "200": _json(Memory, "Retired"),
                    "422": error_spec("No memory of this user has that id."),
                    **_COMMON,
                },
            },
        },
    }
