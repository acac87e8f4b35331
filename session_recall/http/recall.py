"""The recall tools over HTTP, for agent frameworks in other languages.

The calling application puts the scope in the path (and the current conversation in
the query string); the body is the model's tool arguments, exactly as the model sent
them. The answer is the tool output a model reads (`text/plain`), or with
`?format=page` the typed page with its `next_cursor`.

    POST /v1/users/{user}/tools/cross_session_search
    POST /v1/users/{user}/sessions/{session}/tools/conversation_search
    POST /v1/contacts/{contact}/inboxes/{inbox}/tools/cross_conversation_search
         ?current_session=S&enabled=true&lookback_days=90
    POST /v1/users/{user}/tools/memory_search?mode=keyword|semantic|hybrid
    POST /v1/users/{user}/tools/recall_memories?mode=keyword|semantic|hybrid

(Saving and retiring a memory are writes: `POST /v1/users/{user}/memories`,
`http.kept_memories`.)
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from session_recall.core.errors import ErrorKind, SessionRecallError
from session_recall.error_policy import answer, tool_text
from session_recall.http.auth import FORBIDDEN, Needs
from session_recall.http.bodies import BodyRefused, read_json
from session_recall.http.errors import ERROR_SCHEMA, error_response, error_spec
from session_recall.http.openapi import path_parameters, query_parameters, ref
from session_recall.http.paths import route
from session_recall.http.query import read_query
from session_recall.http.services import RouteGroup, Services
from session_recall.recall import (
    CrossConversationSettings,
    MemorySearchResult,
    RecallPage,
    Searchers,
    SearchMode,
)
from session_recall.recall.cross_conversation_settings import MAX_LOOKBACK_DAYS
from session_recall.recall.pager import MAX_PAGE_SIZE
from session_recall.security.tokens import Action
from session_recall.tools import (
    TOOLS,
    BoundTool,
    OutputBounds,
    ToolArgumentError,
    conversation_tool,
    cross_conversation_tool,
    cross_session_tool,
    memory_tool,
    recall_memories_tool,
)
from session_recall.tools.searchers import searchers_for


class ToolOptions(BaseModel):
    """Query-string options: the application's, not the model's."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["tool", "page"] = "tool"


class MemoryOptions(ToolOptions):
    """memory_search ranks by relevance: no pages. Unset mode: hybrid when an embedder
    is configured, else keyword."""

    mode: SearchMode | None = None


class RecallOptions(ToolOptions):
    """The paged tools also take a page size and a cursor."""

    # Unset: the searcher's default page size; the searcher checks the bounds.
    page_size: int | None = None
    cursor: str | None = None


class CrossConversationOptions(RecallOptions):
    """Cross-conversation search also takes the conversation the agent is in and the
    search's settings."""

    current_session: str | None = None
    enabled: bool = False
    # Unset: CrossConversationSettings' default; it checks the bounds.
    lookback_days: int | None = None


Binder = Callable[[Searchers, dict[str, str], Any, OutputBounds], BoundTool]


@dataclass(frozen=True)
class Endpoint:
    tool: str
    options: type[ToolOptions]
    bind: Binder


ENDPOINTS: dict[str, Endpoint] = {
    "/v1/users/{user}/tools/cross_session_search": Endpoint(
        "cross_session_search",
        RecallOptions,
        lambda s, p, o, b: cross_session_tool(
            s.cross_session(user_id=p["user"], page_size=o.page_size), bounds=b
        ),
    ),
    "/v1/users/{user}/sessions/{session}/tools/conversation_search": Endpoint(
        "conversation_search",
        RecallOptions,
        lambda s, p, o, b: conversation_tool(
            s.conversation(user_id=p["user"], session_id=p["session"], page_size=o.page_size),
            bounds=b,
        ),
    ),
    # Contact and inbox ids repeat across users (tenants): the user pins this one too.
    "/v1/users/{user}/contacts/{contact}/inboxes/{inbox}/tools/cross_conversation_search": (
        Endpoint(
            "cross_conversation_search",
            CrossConversationOptions,
            lambda s, p, o, b: _cross_conversation(s, p, o, b),
        )
    ),
    "/v1/users/{user}/tools/memory_search": Endpoint(
        "memory_search",
        MemoryOptions,
        lambda s, p, o, b: memory_tool(s.memory(user_id=p["user"]), mode=o.mode, bounds=b),
    ),
    # The user's current memories first; their turns too when the model asks (`turns`),
    # from the same user's memory_search, in `mode`.
    "/v1/users/{user}/tools/recall_memories": Endpoint(
        "recall_memories",
        MemoryOptions,
        lambda s, p, o, b: recall_memories_tool(
            s.memories(user_id=p["user"]),
            turns=s.memory(user_id=p["user"]),
            mode=o.mode,
            bounds=b,
        ),
    ),
}
# Tool arguments are a few short strings; innerThought can run long, not megabytes.
MAX_BODY_BYTES = 256 * 1024


def _cross_conversation(
    searchers: Searchers,
    path: dict[str, str],
    options: CrossConversationOptions,
    bounds: OutputBounds,
) -> BoundTool:
    settings = CrossConversationSettings.of(
        enabled=options.enabled, lookback_days=options.lookback_days
    )
    searcher = searchers.cross_conversation(
        contact_id=path["contact"],
        inbox_id=path["inbox"],
        settings=settings,
        user_id=path["user"],
        page_size=options.page_size,
    )
    return cross_conversation_tool(
        searcher, current_session_id=options.current_session, bounds=bounds
    )


def recall_group(services: Services) -> RouteGroup:
    lane, limits = services.lanes.reads, services.limits
    # Elasticsearch stops a search at the read deadline too, rather than running on
    # for a caller that was answered 503.
    searchers = searchers_for(lane.client, services.settings, search_timeout=limits.read_deadline)
    bounds = OutputBounds.of(services.settings)

    def endpoint(spec: Endpoint) -> Callable[[Request], Any]:
        async def call(request: Request) -> Response:
            options = read_query(request, spec.options)
            if isinstance(options, Response):
                return options
            try:
                arguments = await read_json(
                    request,
                    what="the tool arguments",
                    limit=MAX_BODY_BYTES,
                    budget=services.bodies,
                    timeout=limits.body_timeout,
                    room_wait=limits.read_deadline,
                    smaller="Send only the tool arguments.",
                )
            except BodyRefused as refused:
                return refused.response()
            try:
                tool = spec.bind(searchers, request.path_params, options, bounds)
            except SessionRecallError as err:  # the application's options, not the model's
                return error_response(err)
            try:
                if not isinstance(arguments, dict):
                    raise ToolArgumentError("The body must be a JSON object of tool arguments.")
                cursor = getattr(options, "cursor", None)  # the paged tools' only
                page = await lane.run(
                    lambda: tool.run(arguments, cursor=cursor), what="answer the search"
                )
            except SessionRecallError as err:
                return _failed(options, err)
            if options.format == "page":
                return Response(page.model_dump_json(), media_type="application/json")
            return PlainTextResponse(tool.render(page))

        return call

    return RouteGroup(
        routes=[route(path, endpoint(spec), ["POST"]) for path, spec in ENDPOINTS.items()],
        paths={path: _operation(path, spec, bounds) for path, spec in ENDPOINTS.items()},
        models=[
            *((TOOLS[spec.tool].arguments, "validation") for spec in ENDPOINTS.values()),
            (RecallPage, "serialization"),
            (MemorySearchResult, "serialization"),
        ],
        needs={(path, "POST"): Needs(Action.READ) for path in ENDPOINTS},
    )


def _failed(options: ToolOptions, err: SessionRecallError) -> Response:
    """The status comes from the error's kind. A caller's mistake in the tool format
    comes back as the line a model would read, so a framework can pass it on as is;
    anything else is the application's to handle, in the JSON error shape."""
    if err.kind is ErrorKind.CALLER and options.format == "tool":
        return PlainTextResponse(tool_text(err), status_code=answer(err).http_status)
    return error_response(err)


def _operation(path: str, spec: Endpoint, bounds: OutputBounds) -> dict[str, Any]:
    parameters = path_parameters(path) + query_parameters(spec.options, bounds=_BOUNDS)
    tool = TOOLS[spec.tool]
    return {
        "post": {
            "summary": spec.tool,
            "description": tool.describe(bounds),
            "parameters": parameters,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": ref(tool.arguments)}},
            },
            "responses": {
                "200": {
                    "description": "The tool output (format=tool) or the typed page (format=page).",
                    "content": {
                        "text/plain": {"schema": {"type": "string"}},
                        "application/json": {
                            "schema": ref(
                                MemorySearchResult if spec.tool == "memory_search" else RecallPage
                            )
                        },
                    },
                },
                "400": error_spec("The query string or the body cannot be read."),
                "401": error_spec("The bearer token is missing or wrong."),
                "403": FORBIDDEN,
                "415": error_spec("The body is not application/json."),
                "422": {
                    "description": "The tool arguments (or the scope in the path) are invalid: "
                    "the line a model reads (format=tool), or an error object (format=page).",
                    "content": {
                        "text/plain": {"schema": {"type": "string"}},
                        "application/json": {"schema": ERROR_SCHEMA},
                    },
                },
                "500": error_spec("Elasticsearch refused the search; the hint says why."),
                "503": error_spec(
                    "Elasticsearch is unavailable or did not answer within the read "
                    "deadline, or the alias is not set up; retry after Retry-After."
                ),
            },
        }
    }


# Checked by the library, documented here.
_BOUNDS = {
    "page_size": {"minimum": 1, "maximum": MAX_PAGE_SIZE},
    "lookback_days": {"minimum": 1, "maximum": MAX_LOOKBACK_DAYS},
}
