"""Refuses request paths with an encoded slash.

ASGI servers decode `%2F` before routing, so `DELETE /v1/users/bob%2Fsessions%2Fs1`
would reach the session route as user "bob", session "s1": an id that holds a slash
would address another scope. No id in a path may hold one.
"""

from starlette.types import ASGIApp, Receive, Scope, Send

from session_recall.http.errors import json_error


class RefuseEncodedSlash:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") or scope.get("path", "").encode()
        if scope["type"] == "http" and b"%2f" in raw.lower():
            response = json_error(
                400,
                "An id in the path holds an encoded slash (%2F).",
                "Ids used in URL paths cannot contain '/'; use the CLI or the library for "
                "such ids.",
            )
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)
