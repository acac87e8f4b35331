"""The basic reads over HTTP, without a keyword: a user's sessions, a session's events,
an event by its id.

    GET /v1/users/{user}/sessions?cursor=C&page_size=N
    GET /v1/users/{user}/sessions/{session}/events?cursor=C&page=P&page_size=N
    GET /v1/users/{user}/events/{event}

Each answers a typed page (JSON), paged in the engine: its `next_cursor`, passed as
`cursor`, asks for the next page. A page of events is bounded by bytes as well as by
count: one of large events ends early, its cursor going on. The read by id gives an
event whole, as a tool's bounded answer cut it (its `eventId`).
"""

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict
from starlette.requests import Request
from starlette.responses import Response

from session_recall.core.errors import SessionRecallError
from session_recall.http.auth import FORBIDDEN, Needs
from session_recall.http.errors import error_response, error_spec
from session_recall.http.openapi import path_parameters, query_parameters, ref
from session_recall.http.paths import route
from session_recall.http.query import read_query
from session_recall.http.services import RouteGroup, Services
from session_recall.recall import DEFAULT_PAGE_BYTES, RecallPage, Searchers, SessionsPage
from session_recall.security.tokens import Action
from session_recall.tools.searchers import searchers_for

SESSIONS = "/v1/users/{user}/sessions"
EVENTS = "/v1/users/{user}/sessions/{session}/events"
EVENT = "/v1/users/{user}/events/{event}"


class SessionsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cursor: str | None = None
    # Unset: the lister's default page size; it checks the bounds.
    page_size: int | None = None


class EventsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    page: int = 0
    page_size: int | None = None
    cursor: str | None = None


class EventOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


Read = Callable[[Searchers, dict[str, str], Any], BaseModel]


def reads_group(services: Services) -> RouteGroup:
    # In the reads lane, as recall: never in the way of writes, answered in time.
    lane = services.lanes.reads
    limits = services.limits
    searchers = searchers_for(
        lane.client,
        services.settings,
        search_timeout=limits.read_deadline,
        page_bytes=limits.max_page_bytes,
    )

    def endpoint(
        options_model: type[BaseModel], read: Read
    ) -> Callable[[Request], Awaitable[Response]]:
        async def call(request: Request) -> Response:
            options = read_query(request, options_model)
            if isinstance(options, Response):
                return options
            params = dict(request.path_params)
            try:
                page = await lane.run(
                    lambda: read(searchers, params, options), what="answer the read"
                )
            except SessionRecallError as err:  # a bad page size or cursor is the caller's
                return error_response(err)
            return Response(page.model_dump_json(), media_type="application/json")

        return call

    def sessions(s: Searchers, p: dict[str, str], o: SessionsOptions) -> SessionsPage:
        return s.sessions(user_id=p["user"], page_size=o.page_size).list(cursor=o.cursor)

    def events(s: Searchers, p: dict[str, str], o: EventsOptions) -> RecallPage:
        searcher = s.conversation(user_id=p["user"], session_id=p["session"], page_size=o.page_size)
        return searcher.read(page=o.page, cursor=o.cursor)

    def event(s: Searchers, p: dict[str, str], _o: EventOptions) -> RecallPage:
        return s.events(user_id=p["user"]).read(p["event"])

    return RouteGroup(
        routes=[
            route(SESSIONS, endpoint(SessionsOptions, sessions), ["GET"]),
            route(EVENTS, endpoint(EventsOptions, events), ["GET"]),
            route(EVENT, endpoint(EventOptions, event), ["GET"]),
        ],
        paths={
            SESSIONS: _operation(
                SESSIONS,
                SessionsOptions,
                SessionsPage,
                "List a user's sessions",
                "A user's sessions, in session id order, with their first and last "
                "instant and number of events; `next_cursor`, passed as `cursor`, gives "
                "the next page.",
            ),
            EVENTS: _operation(
                EVENTS,
                EventsOptions,
                RecallPage,
                "Read a session's events",
                "Every event of one session, oldest first, whole (payload included); "
                "`next_cursor`, passed as `cursor`, gives the next page. A page is bounded "
                "by bytes as well (`serve --max-page-bytes`, "
                f"{DEFAULT_PAGE_BYTES // 2**20} MiB by default): one of large events ends "
                "early, its cursor going on.",
            ),
            EVENT: _operation(
                EVENT,
                EventOptions,
                RecallPage,
                "Read an event by its id",
                "The user's event of this id, whole (text and payload): what a tool's "
                "bounded answer cut (its `eventId`). An id a producer reused at another "
                "instant is another event, so there may be several, oldest first; none: "
                "`items` is empty.",
            ),
        },
        models=[(SessionsPage, "serialization"), (RecallPage, "serialization")],
        needs={
            (SESSIONS, "GET"): Needs(Action.READ),
            (EVENTS, "GET"): Needs(Action.READ),
            (EVENT, "GET"): Needs(Action.READ),
        },
    )


def _operation(
    path: str, options: type[BaseModel], page: type[BaseModel], summary: str, description: str
) -> dict[str, Any]:
    return {
        "get": {
            "summary": summary,
            "description": description,
            "parameters": path_parameters(path) + query_parameters(options),
            "responses": {
                "200": {
                    "description": "One page",
                    "content": {"application/json": {"schema": ref(page)}},
                },
                "400": error_spec("A query parameter is unknown or cannot be read."),
                "401": error_spec("The bearer token is missing or wrong."),
                "403": FORBIDDEN,
                "422": error_spec("A page size, page or cursor is out of bounds or foreign."),
                "500": error_spec("Elasticsearch refused the search; the hint says why."),
                "503": error_spec(
                    "Elasticsearch is unavailable, or the alias is not set up; retry after "
                    "Retry-After."
                ),
            },
        }
    }
