"""`DELETE` a user, a session of a user, a contact in an inbox of a user, or one event
of a user (every copy of its id): every
stored event of the scope is removed, whatever its timestamp, and tombstones keep late
retries and replays of them out. Events stamped after the instant the request arrived
that are stored once the erasure took stock are new: they are kept, and counted."""

from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from session_recall.core.errors import SessionRecallError
from session_recall.core.instant import Instant
from session_recall.http.auth import FORBIDDEN, Needs
from session_recall.http.errors import error_response, error_spec, json_error
from session_recall.http.openapi import path_parameters, ref
from session_recall.http.paths import route
from session_recall.http.query import NoOptions, read_query
from session_recall.http.services import RouteGroup, Services
from session_recall.indexer import ErasureResult, Scope, erase
from session_recall.indexer.deadline import Deadline
from session_recall.recall.scope import required
from session_recall.security.tokens import Action

ROUTES = {
    "/v1/users/{user}": lambda p: Scope.user(p["user"]),
    "/v1/users/{user}/sessions/{session}": lambda p: Scope.session(p["user"], p["session"]),
    "/v1/users/{user}/contacts/{contact}/inboxes/{inbox}": lambda p: Scope.contact(
        p["user"], p["contact"], p["inbox"]
    ),
    "/v1/users/{user}/events/{event}": lambda p: Scope.event(p["user"], p["event"]),
}


def erasure_group(services: Services) -> RouteGroup:
    lane, alias = services.lanes.erasures, services.settings.index

    def endpoint(make_scope: Any) -> Any:
        async def delete(request: Request) -> Response:
            requested = Instant.now()  # the rule's instant: before any waiting
            options = read_query(request, NoOptions)
            if isinstance(options, Response):
                return options
            try:
                # Each id checked as the reads and the tools check theirs: 422, named.
                ids = {k: required(f"{k}_id", v) for k, v in request.path_params.items()}
                scope = make_scope(ids)
            except SessionRecallError as err:
                return error_response(err)
            except ValidationError as err:  # a rule of the scope's own, past those
                problem = err.errors(include_url=False)[0]
                return json_error(422, f"{problem['loc'][0]} {problem['msg']}.")
            deadline = Deadline.after(lane.deadline)
            try:
                result = await lane.run(
                    lambda: erase(lane.client, alias, scope, at=requested, deadline=deadline),
                    what=f"erase {scope.describe()}",
                )
            except SessionRecallError as err:
                return error_response(err)
            return JSONResponse(result.model_dump(mode="json", exclude_none=True))

        return delete

    def operation(path: str) -> dict[str, Any]:
        return {"delete": {"parameters": path_parameters(path), **_OPERATION}}

    return RouteGroup(
        routes=[route(path, endpoint(make), ["DELETE"]) for path, make in ROUTES.items()],
        paths={path: operation(path) for path in ROUTES},
        models=[(ErasureResult, "serialization")],
        needs={(path, "DELETE"): Needs(Action.ERASE) for path in ROUTES},
    )


_OPERATION: dict[str, Any] = {
    "summary": "Remove every event of the scope and refuse replays of them",
    "description": "Removes every stored event of the scope, whatever its timestamp; "
    "tombstones then refuse the scope's events stamped at or before the instant the "
    "request arrived (`erased_at` in the answer), and replays of every event removed, "
    "with the reason `scope erased`. Events stamped after that instant that are stored "
    "once the erasure took stock are new: they are kept, counted in `kept`, with "
    "`kept_because` saying why.",
    "responses": {
        "200": {
            "description": "Removed; `removed` counts the events deleted, `kept` those "
            "kept (new events)",
            "content": {"application/json": {"schema": ref(ErasureResult)}},
        },
        "400": error_spec("An id in the path is not UTF-8 once percent-decoded"),
        "401": error_spec("The bearer token is missing or wrong"),
        "403": FORBIDDEN,
        "422": error_spec("An id in the path is empty or too long; the error names it"),
        "500": error_spec("Elasticsearch refused the erasure; the hint says why"),
        "503": error_spec(
            "Elasticsearch unavailable, the alias not set up, or the erasure not finished "
            "within the write deadline (what it removed stays removed); retry after "
            "Retry-After (erasing is idempotent)"
        ),
    },
}
