"""Optional bearer token: with one configured, every request but the open paths must
carry it. Compared in constant time, so response timing does not leak its prefix."""

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from session_recall.http.errors import json_error


class BearerAuth:
    def __init__(self, app: ASGIApp, *, token: str, open_paths: frozenset[str]) -> None:
        self._app = app
        self._expected = token.encode()
        self._open = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self._open:
            await self._app(scope, receive, send)
            return
        scheme, _, given = dict(scope["headers"]).get(b"authorization", b"").partition(b" ")
        # The scheme is case-insensitive (RFC 9110): `bearer` is `Bearer`.
        if scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._expected):
            await self._app(scope, receive, send)
            return
        response = json_error(
            401,
            "missing or wrong bearer token",
            "Send Authorization: Bearer <token>.",
            headers={"WWW-Authenticate": "Bearer"},
        )
        await response(scope, receive, send)
