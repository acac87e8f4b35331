"""The recall tools over HTTP, for agent frameworks in other languages.

The calling application puts the scope in the path (and the current conversation in
the query string); the body is the model's tool arguments, exactly as the model sent
them. The answer is the tool output a model reads (`text/plain`), or with
`?format=page` the typed page with its `next_cursor`.

    POST /v1/users/{user}/tools/cross_session_search
    POST /v1/users/{user}/sessions/{session}/tools/conversation_search
    POST /v1/contacts/{contact}/inboxes/{inbox}/tools/cross_conversation_search
         ?current_session=S&enabled=true&lookback_days=90
"""

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from session_recall.core.errors import SessionRecallError
from session_recall.http.app import RouteGroup, Services
from session_recall.http.bodies import BodyRefused, read_body
from session_recall.http.errors import bad_request, error_response
from session_recall.http.openapi import path_parameters, ref
from session_recall.recall import CrossConversationSettings, RecallError, RecallPage, SearchRefused
from session_recall.recall.pager import MAX_PAGE_SIZE
from session_recall.tools import (
    TOOLS,
    BoundTool,
    ToolArgumentError,
    conversation_tool,
    cross_conversation_tool,
    cross_session_tool,
)
from session_recall.tools.output import render_error
from session_recall.tools.searchers import Searchers


class RecallOptions(BaseModel):
    """Query-string options: the application's, not the model's."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["tool", "page"] = "tool"
    page_size: int = Field(default=10, ge=1, le=MAX_PAGE_SIZE)
    cursor: str | None = None
    # Cross-conversation search only.
    current_session: str | None = None
    enabled: bool = False
    lookback_days: int = Field(default=90, ge=1, le=365)


Binder = Callable[[Searchers, dict[str, str], RecallOptions], BoundTool]

BINDERS: dict[str, tuple[str, Binder]] = {
    "/v1/users/{user}/tools/cross_session_search": (
        "cross_session_search",
        lambda s, p, o: cross_session_tool(
            s.cross_session(user_id=p["user"], page_size=o.page_size)
        ),
    ),
    "/v1/users/{user}/sessions/{session}/tools/conversation_search": (
        "conversation_search",
        lambda s, p, o: conversation_tool(
            s.conversation(user_id=p["user"], session_id=p["session"], page_size=o.page_size)
        ),
    ),
    # Where contact ids are unique only within a user (a tenant, say), the user-scoped
    # path pins the search to that user as well.
    "/v1/users/{user}/contacts/{contact}/inboxes/{inbox}/tools/cross_conversation_search": (
        "cross_conversation_search",
        lambda s, p, o: _cross_conversation(s, p, o, user_id=p["user"]),
    ),
    "/v1/contacts/{contact}/inboxes/{inbox}/tools/cross_conversation_search": (
        "cross_conversation_search",
        lambda s, p, o: _cross_conversation(s, p, o, user_id=None),
    ),
}
# Tool arguments are a few short strings; innerThought can run long, not megabytes.
MAX_BODY_BYTES = 256 * 1024


def _cross_conversation(
    searchers: Searchers, path: dict[str, str], options: RecallOptions, *, user_id: str | None
) -> BoundTool:
    settings = CrossConversationSettings(
        enabled=options.enabled, lookback_days=options.lookback_days
    )
    searcher = searchers.cross_conversation(
        contact_id=path["contact"],
        inbox_id=path["inbox"],
        settings=settings,
        user_id=user_id,
        page_size=options.page_size,
    )
    return cross_conversation_tool(searcher, current_session_id=options.current_session)


def recall_group(services: Services) -> RouteGroup:
    lane, limits = services.lanes.reads, services.limits
    # Elasticsearch stops a search at the read deadline too, rather than running on
    # for a caller that was answered 503.
    searchers = Searchers.from_settings(
        lane.client, services.settings, search_timeout=limits.read_deadline
    )

    def endpoint(bind: Binder) -> Callable[[Request], Any]:
        async def call(request: Request) -> Response:
            try:
                options = RecallOptions.model_validate(dict(request.query_params))
            except ValidationError as err:
                problem = err.errors(include_input=False)[0]
                where = ".".join(str(p) for p in problem["loc"])
                return bad_request(400, f"Query parameter {where!r}: {problem['msg']}.")
            try:
                async with read_body(
                    request,
                    limit=MAX_BODY_BYTES,
                    budget=services.bodies,
                    timeout=limits.body_timeout,
                    room_wait=limits.read_deadline,
                    smaller="Send only the tool arguments.",
                ) as body:
                    arguments = json.loads(body or b"null")
            except BodyRefused as refused:
                return refused.response()
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict):
                return _refused(options, "The body must be a JSON object of tool arguments.")
            try:
                tool = bind(searchers, request.path_params, options)
                page = await lane.run(
                    lambda: tool.run(arguments, cursor=options.cursor), what="answer the search"
                )
            except SearchRefused as err:
                return error_response(err)
            except (ToolArgumentError, RecallError) as err:
                return _refused(options, str(err))
            except SessionRecallError as err:
                return error_response(err)
            if options.format == "page":
                return Response(page.model_dump_json(), media_type="application/json")
            return PlainTextResponse(tool.render(page))

        return call

    return RouteGroup(
        routes=[
            Route(path, endpoint(bind), methods=["POST"]) for path, (_, bind) in BINDERS.items()
        ],
        paths={path: _operation(path, name) for path, (name, _) in BINDERS.items()},
        models=[
            *((TOOLS[name].arguments, "validation") for name, _ in BINDERS.values()),
            (RecallPage, "serialization"),
        ],
    )


def _refused(options: RecallOptions, message: str) -> Response:
    """422 with the line a model would read, so a framework can pass it on as is."""
    if options.format == "page":
        return JSONResponse({"error": message}, status_code=422)
    return PlainTextResponse(render_error(message), status_code=422)


def _operation(path: str, name: str) -> dict[str, Any]:
    parameters = path_parameters(path)
    for option, field in RecallOptions.model_fields.items():
        if name != "cross_conversation_search" and option in {
            "current_session",
            "enabled",
            "lookback_days",
        }:
            continue
        schema: dict[str, Any] = {"default": field.default}
        parameters.append({"name": option, "in": "query", "required": False, "schema": schema})
    spec = TOOLS[name]
    return {
        "post": {
            "summary": name,
            "description": spec.description,
            "parameters": parameters,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": ref(spec.arguments)}},
            },
            "responses": {
                "200": {
                    "description": "The tool output (format=tool) or the typed page (format=page).",
                    "content": {
                        "text/plain": {"schema": {"type": "string"}},
                        "application/json": {"schema": ref(RecallPage)},
                    },
                },
                "401": {"description": "The bearer token is missing or wrong."},
                "422": {"description": "The tool arguments are invalid; the body says how."},
                "503": {"description": "Elasticsearch is unavailable; retry after Retry-After."},
            },
        }
    }
