"""The recall tools over HTTP, for agent frameworks in other languages.

The calling application puts the scope in the path (and the current conversation in
the query string); the body is the model's tool arguments, exactly as the model sent
them. The answer is the tool output a model reads (`text/plain`), or with
`?format=page` the typed page with its `next_cursor`.

    POST /v1/users/{user}/tools/cross_session_search
    POST /v1/users/{user}/sessions/{session}/tools/conversation_search
    POST /v1/users/{user}/contacts/{contact}/inboxes/{inbox}/tools/cross_conversation_search
         ?current_session=S&enabled=true&lookback_days=90

Every path names the user: contact and inbox ids repeat across users (tenants).
"""

import asyncio
import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from session_recall.core.errors import SessionRecallError
from session_recall.http.app import RouteGroup, Services
from session_recall.http.bodies import read_limited
from session_recall.http.errors import bad_request, error_response
from session_recall.http.openapi import path_parameters, query_parameters, ref
from session_recall.http.query import query_options
from session_recall.recall import (
    CrossConversationSettings,
    RecallError,
    RecallPage,
    Searchers,
    SearchRefused,
)
from session_recall.tools import (
    TOOLS,
    BoundTool,
    ToolArgumentError,
    conversation_tool,
    cross_conversation_tool,
    cross_session_tool,
)
from session_recall.tools.output import render_error
from session_recall.tools.searchers import searchers_for


class RecallOptions(BaseModel):
    """Query-string options: the application's, not the model's."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["tool", "page"] = "tool"
    # Unset: the searcher's default page size; the searcher checks the bounds.
    page_size: int | None = None
    cursor: str | None = None
    # Cross-conversation search only.
    current_session: str | None = None
    enabled: bool = False
    # Unset: CrossConversationSettings' default; it checks the bounds.
    lookback_days: int | None = None


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
    "/v1/users/{user}/contacts/{contact}/inboxes/{inbox}/tools/cross_conversation_search": (
        "cross_conversation_search",
        lambda s, p, o: _cross_conversation(s, p, o),
    ),
}
# Tool arguments are a few short strings; innerThought can run long, not megabytes.
MAX_BODY_BYTES = 256 * 1024


def _cross_conversation(
    searchers: Searchers, path: dict[str, str], options: RecallOptions
) -> BoundTool:
    settings = CrossConversationSettings.of(
        enabled=options.enabled, lookback_days=options.lookback_days
    )
    searcher = searchers.cross_conversation(
        user_id=path["user"],
        contact_id=path["contact"],
        inbox_id=path["inbox"],
        settings=settings,
        page_size=options.page_size,
    )
    return cross_conversation_tool(searcher, current_session_id=options.current_session)


def recall_group(services: Services) -> RouteGroup:
    searchers = searchers_for(services.client, services.settings)

    def endpoint(bind: Binder) -> Callable[[Request], Any]:
        async def call(request: Request) -> Response:
            options = query_options(RecallOptions, request)
            if isinstance(options, Response):
                return options
            body = await read_limited(request, MAX_BODY_BYTES)
            if body is None:
                return bad_request(413, f"The body is over {MAX_BODY_BYTES} bytes.")
            try:
                arguments = json.loads(body or b"null")
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict):
                return _refused(options, "The body must be a JSON object of tool arguments.")
            try:
                tool = bind(searchers, request.path_params, options)
            except RecallError as err:  # the application's options, not the model's
                return bad_request(400, str(err))
            try:
                page = await asyncio.to_thread(tool.run, arguments, cursor=options.cursor)
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
    conversations_only = {"current_session", "enabled", "lookback_days"}
    without = () if name == "cross_conversation_search" else conversations_only
    parameters = path_parameters(path) + query_parameters(RecallOptions, without=without)
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
