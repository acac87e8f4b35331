"""Signed tokens that bind a caller of `serve` to one user, or one ADK app and user, and
to what it may do there: read, write, erase.

They are JWTs, made and checked with PyJWT. serve's own are HS256 under a key of their
own (`Settings.token_signing_key`), minted by `session-recall tokens issue`; an
identity provider's are checked against the keys it publishes (a JWKS URL), its
issuer, an audience, and the claim that holds the user. Every check pins the
algorithms it takes (never `none`, never an HMAC over a public key), and requires
`exp`, `iss` and `aud`.

A token's user is the id its events are stored under. With an ADK app (the `app`
claim of serve's own tokens, or the provider's app claim), it is the id the ADK
adapter stores that app and user under (`memory_user`), so a token for one app's
user reaches neither another app's user of the same name nor a plain user.
"""

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Protocol

import jwt

from session_recall.core.errors import ErrorKind, SessionRecallError
from session_recall.recall.adk_scope import memory_user, plain_user
from session_recall.recall.errors import InvalidScope
from session_recall.recall.scope import required

# serve's own tokens: one symmetric algorithm, under a key nobody else holds.
ALGORITHM = "HS256"
ISSUER = "session-recall"
# An identity provider signs with a private key; serve checks with its public one.
# HMAC is never taken from a provider: its "key" would be a public value.
PROVIDER_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")
# Clocks of the issuer and of serve may differ by this much (seconds).
LEEWAY_S = 30
# A token cannot be revoked alone (only by a new key, which revokes them all): its
# lifetime bounds what a leaked one can do.
MAX_TTL_S = 30 * 24 * 3600
# How long a provider's key set is kept before it is fetched again, and how long a
# fetch may take (a request waits for it).
KEY_SET_LIFESPAN_S = 300
KEY_SET_TIMEOUT_S = 5.0
SCOPE_CLAIM = "scope"


class Action(StrEnum):
    """What a token may do for its user."""

    READ = "read"  # the recall tools and the basic reads
    WRITE = "write"  # POST /v1/events
    ERASE = "erase"  # the DELETE endpoints


_ACTION_WORDS = frozenset(action.value for action in Action)


@dataclass(frozen=True)
class Grant:
    """What a request may reach: `user` alone (None: every user, as the operator
    token), and only `actions`."""

    user: str | None
    actions: frozenset[Action]

    @classmethod
    def everything(cls) -> "Grant":
        return cls(None, frozenset(Action))

    def allows(self, action: Action, user: str) -> bool:
        return action in self.actions and self.user in (None, user)


class TokenRefused(SessionRecallError):
    """A token that is malformed, expired, not for this service, or not signed by a key
    serve trusts. The message names the reason, never the token."""

    kind = ErrorKind.CALLER


class TokenKeysUnavailable(SessionRecallError):
    """The identity provider's keys could not be fetched: the token may be good."""

    kind = ErrorKind.UNAVAILABLE


def audience_for(alias: str) -> str:
    """The audience of serve's own tokens: the alias it serves, so that a token for
    one alias is refused by a serve of another that shares the key."""
    return f"{ISSUER}:{alias}"


def issue(
    key: bytes,
    *,
    audience: str,
    user: str,
    actions: Iterable[Action],
    ttl_s: float,
    app: str | None = None,
    now: float | None = None,
) -> str:
    """A token of serve's own for `user` (of ADK app `app`, when given), allowing
    `actions`, valid for `ttl_s` seconds from `now`."""
    granted = sorted(set(actions), key=list(Action).index)
    if not granted:
        raise InvalidScope("A token must allow at least one of read, write, erase.")
    if not 0 < ttl_s <= MAX_TTL_S:
        raise InvalidScope(
            f"A token lives from 1 s to {MAX_TTL_S // 86400} days.",
            hint="Issue short-lived tokens, and new ones as they expire.",
        )
    if app is None:
        plain_user(required("user", user))
    else:
        memory_user(app, user)  # checks both parts, and the length of the id they make
    issued = int(time.time() if now is None else now)
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "aud": audience,
        "sub": user,
        SCOPE_CLAIM: " ".join(granted),
        "iat": issued,
        "exp": issued + int(ttl_s),
    }
    if app is not None:
        claims["app"] = app
    return jwt.encode(claims, key, algorithm=ALGORITHM)


class Verifier(Protocol):
    # True when verifying may wait on the network (a key set to fetch).
    blocking: ClassVar[bool]

    def verify(self, token: str) -> Grant: ...


class OwnTokens:
    """Checks serve's own tokens."""

    blocking: ClassVar[bool] = False

    def __init__(self, key: bytes, *, audience: str) -> None:
        self._key, self._audience = key, audience

    def verify(self, token: str) -> Grant:
        claims = _decode(token, self._key, [ALGORITHM], audience=self._audience, issuer=ISSUER)
        return grant_from(claims, user_claim="sub", app_claim="app")


class ProviderTokens:
    """Checks an identity provider's tokens against the keys it publishes at
    `jwks_url` (fetched when first needed, kept `KEY_SET_LIFESPAN_S`; a key id it
    does not know makes it fetch them again, at most every 30 s)."""

    blocking: ClassVar[bool] = True

    def __init__(
        self,
        jwks_url: str,
        *,
        issuer: str,
        audience: str,
        user_claim: str = "sub",
        app_claim: str | None = None,
        algorithms: Iterable[str] = PROVIDER_ALGORITHMS,
    ) -> None:
        self.algorithms = tuple(algorithms)
        if not self.algorithms or any(a == "none" or a.startswith("HS") for a in self.algorithms):
            raise ValueError("an identity provider's tokens are checked with public keys only")
        self._keys = jwt.PyJWKClient(
            jwks_url, lifespan=KEY_SET_LIFESPAN_S, timeout=KEY_SET_TIMEOUT_S
        )
        self._issuer, self._audience = issuer, audience
        self._user_claim, self._app_claim = user_claim, app_claim

    def verify(self, token: str) -> Grant:
        try:
            key = self._keys.get_signing_key_from_jwt(token)
        except jwt.PyJWKClientConnectionError:
            raise TokenKeysUnavailable(
                "The identity provider's keys could not be fetched.",
                hint="Send the request again later; the operator should check "
                "SESSION_RECALL_IDP_JWKS_URL.",
            ) from None
        except (jwt.PyJWKClientError, jwt.PyJWKError, jwt.PyJWKSetError, jwt.DecodeError):
            raise TokenRefused(
                "No key of the identity provider signed this token.",
                hint="Use a token the configured identity provider issued.",
            ) from None
        claims = _decode(
            token, key, list(self.algorithms), audience=self._audience, issuer=self._issuer
        )
        return grant_from(claims, user_claim=self._user_claim, app_claim=self._app_claim)


class UserTokens:
    """The signed tokens serve takes: its own (`own`), an identity provider's
    (`provider`), or both. The header's `alg` picks the verifier, which then accepts
    only its own algorithms: a token cannot choose how it is checked."""

    def __init__(self, own: OwnTokens | None = None, provider: ProviderTokens | None = None):
        if own is None and provider is None:
            raise ValueError("no verifier: give serve's key or an identity provider")
        self._own, self._provider = own, provider

    def verifier_for(self, token: str) -> Verifier:
        try:
            algorithm = jwt.get_unverified_header(token).get("alg")
        except jwt.DecodeError:
            raise TokenRefused(
                "The bearer token is neither the operator token nor a signed token.",
                hint="Send Authorization: Bearer <token>, the token as it was issued.",
            ) from None
        if algorithm == ALGORITHM and self._own is not None:
            return self._own
        if self._provider is not None and algorithm in self._provider.algorithms:
            return self._provider
        raise TokenRefused(
            "The token is signed with an algorithm serve does not accept.",
            hint="Use a token from `session-recall tokens issue` or from the configured "
            "identity provider.",
        )


def grant_from(claims: Mapping[str, Any], *, user_claim: str, app_claim: str | None) -> Grant:
    """The grant of a verified token's claims."""
    user: Any = claims.get(user_claim)
    app: Any = claims.get(app_claim) if app_claim else None
    try:
        bound = plain_user(required("user", user)) if app is None else memory_user(app, user)
    except InvalidScope:
        raise TokenRefused(
            f"The token names no usable user in its {user_claim!r} claim"
            + (f" (nor app in {app_claim!r})." if app is not None else "."),
            hint="Issue a token for one user id.",
        ) from None
    words = _words(claims.get(SCOPE_CLAIM))
    actions = frozenset(Action(word) for word in words if word in _ACTION_WORDS)
    if not actions:
        raise TokenRefused(
            f"The token's {SCOPE_CLAIM!r} claim allows none of read, write, erase.",
            hint="Issue a token that allows what the request does.",
        )
    return Grant(bound, actions)


def _words(scope: object) -> list[str]:
    """OAuth's `scope` is a space-separated string; some providers send a list."""
    if isinstance(scope, str):
        return scope.split()
    if isinstance(scope, list):
        return [word for word in scope if isinstance(word, str)]
    return []


# Why a token was refused, by PyJWT's exception, most specific first; the token itself
# never appears in the message.
_REFUSALS: tuple[tuple[type[Exception], str, str], ...] = (
    (jwt.ExpiredSignatureError, "The token has expired.", "Ask for a new one."),
    (
        jwt.ImmatureSignatureError,
        "The token is not valid yet (its iat or nbf is in the future).",
        "Check the issuer's clock.",
    ),
    (
        jwt.InvalidAudienceError,
        "The token is for another service (its audience).",
        "Use a token issued for this serve and alias.",
    ),
    (
        jwt.InvalidIssuerError,
        "The token comes from an issuer serve does not trust.",
        "Use a token from `session-recall tokens issue` or the configured identity provider.",
    ),
    (
        jwt.MissingRequiredClaimError,
        "The token lacks a claim serve requires (exp, iss, aud).",
        "Issue a token with an expiry, an issuer and an audience.",
    ),
    (
        jwt.InvalidAlgorithmError,
        "The token is signed with an algorithm serve does not accept.",
        "Use a token as it was issued.",
    ),
    (
        jwt.InvalidSignatureError,
        "The token's signature does not verify.",
        "Use a token as it was issued; a token from before a key change is no longer valid.",
    ),
)


def _decode(
    token: str, key: Any, algorithms: list[str], *, audience: str, issuer: str
) -> dict[str, Any]:
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=algorithms,
            audience=audience,
            issuer=issuer,
            leeway=LEEWAY_S,
            options={"require": ["exp", "iss", "aud"], "enforce_minimum_key_length": True},
        )
    except jwt.PyJWTError as err:  # InvalidKeyError (a key too short) is not a token error
        for kind, message, hint in _REFUSALS:
            if isinstance(err, kind):
                raise TokenRefused(message, hint=hint) from None
        raise TokenRefused(
            "The token cannot be read.", hint="Use a token as it was issued."
        ) from None
    return claims
