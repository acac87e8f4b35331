"""Who may call what: the operator token, and signed tokens bound to one user.

With any of them configured, every request but the open paths (the probes, the OpenAPI
document) must carry one as `Authorization: Bearer ...`; without, 401 and nothing runs.

- The operator token (`SESSION_RECALL_TOKEN`) reaches every user with every action.
  Compared in constant time, so response timing does not leak its prefix.
- A signed token (`security.tokens`) reaches its own user, and only with the actions
  it allows. Each route says what it needs (`Needs`: an action, and where its user
  is), and a request it does not allow gets 403 before it reaches the route, so it
  touches nothing. A route that says nothing takes the operator token alone: a new
  route is closed to user tokens until it says what it needs. A route whose users are
  in its body (`POST /v1/events`) checks them itself, with `refuse_other_users`,
  before it stores anything.
"""

import hmac
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from session_recall.config import Settings
from session_recall.core.errors import SessionRecallError
from session_recall.http.errors import error_response, error_spec, json_error
from session_recall.security.tokens import (
    Action,
    Grant,
    OwnTokens,
    ProviderTokens,
    TokenRefused,
    UserTokens,
    audience_for,
)

# Where the request's grant is kept in the ASGI scope, for the routes that check it.
GRANT = "session_recall.grant"
EVERYTHING = Grant.everything()


def _path_user(params: Mapping[str, str]) -> str:
    return params["user"]


@dataclass(frozen=True)
class Needs:
    """What a route needs of a signed token: `action`, for the user `user` finds in
    the path parameters; `user=None`: the users are in the body, and the route checks
    them itself (`refuse_other_users`)."""

    action: Action
    user: Callable[[Mapping[str, str]], str] | None = _path_user


# The OpenAPI answer every route that takes a token may give.
FORBIDDEN = error_spec(
    "The token does not allow this action, or is for another user; nothing was done"
)


def user_tokens(settings: Settings) -> UserTokens | None:
    """The signed tokens `settings` configure serve to take: its own once it has a token
    key, an identity provider's when one is set; None when neither."""
    key = settings.token_signing_key()
    own = None if key is None else OwnTokens(key, audience=audience_for(settings.index))
    provider = None
    if settings.idp_jwks_url and settings.idp_issuer and settings.idp_audience:
        provider = ProviderTokens(
            settings.idp_jwks_url,
            issuer=settings.idp_issuer,
            audience=settings.idp_audience,
            user_claim=settings.idp_user_claim,
            app_claim=settings.idp_app_claim,
            max_ttl_s=settings.idp_max_ttl,
        )
    if own is None and provider is None:
        return None
    return UserTokens(own, provider)


def grant_of(request: Request) -> Grant:
    """The request's grant: everything when serve takes no token at all."""
    grant: Grant = request.scope.get(GRANT, EVERYTHING)
    return grant


def refuse_other_users(grant: Grant, users: Iterable[str]) -> JSONResponse | None:
    """403 when `users` (those a body names) hold one the grant does not reach."""
    if grant.user is None:
        return None
    if all(user == grant.user for user in users):
        return None
    return json_error(
        403,
        f"The token is for user {grant.user!r} alone, and the body names another; "
        "nothing was stored.",
        "Send only the token's own user's events, or use a token for each user.",
    )


class TokenAuth:
    """The ASGI middleware: authenticates (401), then authorizes a signed token against
    the route the request is for (403)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        operator: str | None,
        tokens: UserTokens | None,
        open_paths: frozenset[str],
        routes: Sequence[BaseRoute],
        needs: Mapping[tuple[str, str], Needs],
    ) -> None:
        self._app = app
        self._operator = operator.encode() if operator else None
        self._tokens = tokens
        self._open = open_paths
        self._routes = routes
        self._needs = needs

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self._open:
            await self._app(scope, receive, send)
            return
        try:
            grant = await self._authenticate(scope)
        except SessionRecallError as err:
            refusal = (
                _unauthenticated(err) if isinstance(err, TokenRefused) else error_response(err)
            )
            await refusal(scope, receive, send)
            return
        if grant is None:
            await _unauthenticated()(scope, receive, send)
            return
        refused = None if grant == EVERYTHING else self._authorize(scope, grant)
        if refused is not None:
            await refused(scope, receive, send)
            return
        scope[GRANT] = grant
        await self._app(scope, receive, send)

    async def _authenticate(self, scope: Scope) -> Grant | None:
        scheme, _, given = dict(scope["headers"]).get(b"authorization", b"").partition(b" ")
        # The scheme is case-insensitive (RFC 9110): `bearer` is `Bearer`.
        token = given.strip()
        if scheme.lower() != b"bearer" or not token:
            return None
        if self._operator is not None and hmac.compare_digest(token, self._operator):
            return EVERYTHING
        if self._tokens is None:
            return None
        text = token.decode("ascii", errors="replace")
        verifier = self._tokens.verifier_for(text)
        if verifier.blocking:  # a key set may be fetched: never on the event loop
            return await run_in_threadpool(verifier.verify, text)
        return verifier.verify(text)

    def _authorize(self, scope: Scope, grant: Grant) -> JSONResponse | None:
        for route in self._routes:
            match, child = route.matches(scope)
            if match is not Match.FULL:
                continue  # another route's, or a method this one does not take (405)
            method = "GET" if scope["method"] == "HEAD" else scope["method"]
            # Anything but a plain route (a mount, say) has no needs: closed to tokens.
            path = route.path if isinstance(route, Route) else None
            needs = self._needs.get((path, method)) if path else None
            if needs is None:
                return json_error(403, "This endpoint takes the operator token alone.")
            if needs.action not in grant.actions:
                return json_error(
                    403,
                    f"The token does not allow {needs.action}.",
                    f"Use a token issued with --can {needs.action}.",
                )
            reached = None if needs.user is None else needs.user(child["path_params"])
            if grant.user is not None and reached not in (None, grant.user):
                return json_error(
                    403,
                    f"The token is for user {grant.user!r} alone.",
                    "Use a token issued for the user in the path.",
                )
            return None
        return None  # no endpoint here: the router answers 404, having touched nothing


def _unauthenticated(err: SessionRecallError | None = None) -> JSONResponse:
    message = "missing or wrong bearer token" if err is None else err.message
    hint = "Send Authorization: Bearer <token>." if err is None else err.hint
    return json_error(401, message, hint, headers={"WWW-Authenticate": "Bearer"})
