"""Signed tokens: serve's own (HS256 under its token key) and an identity provider's
(JWKS on 127.0.0.1), each bound to one user and to what it may do."""

import base64
import functools
import hashlib
import hmac
import json
import time
from collections.abc import Iterator

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import given
from hypothesis import strategies as st

from session_recall.integrations.adk import memory_user
from session_recall.recall.errors import InvalidScope
from session_recall.security.tokens import (
    MAX_TTL_S,
    Action,
    Grant,
    OwnTokens,
    ProviderTokens,
    TokenKeysUnavailable,
    TokenRefused,
    UserTokens,
    audience_for,
    issue,
)
from tests.support.identity_provider import AUDIENCE, ISSUER, IdentityProvider

KEY = b"k" * 32
AUDIENCE_OWN = audience_for("session-events")
OWN = UserTokens(OwnTokens(KEY, audience=AUDIENCE_OWN))
ALL = frozenset(Action)


def _mint(user: str = "alice", actions=(Action.READ,), **options) -> str:
    return issue(KEY, audience=AUDIENCE_OWN, user=user, actions=actions, ttl_s=3600, **options)


def _verify(token: str, tokens: UserTokens = OWN) -> Grant:
    return tokens.verifier_for(token).verify(token)


def _segment(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def _reheader(token: str, header: dict, *, sign: str | None = None) -> str:
    """`token` with another header, and its signature kept (or `sign` instead)."""
    _, payload, signature = token.split(".")
    return ".".join([_segment(header), payload, signature if sign is None else sign])


def _with_payload(token: str, **changes) -> str:
    """`token` with its claims changed and its signature kept."""
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return ".".join([header, _segment({**claims, **changes}), signature])


def _claims(**changes) -> dict:
    now = int(time.time())
    claims = {"iss": "session-recall", "aud": AUDIENCE_OWN, "sub": "alice", "scope": "read"}
    merged = {**claims, "iat": now, "exp": now + 3600, **changes}
    return {name: value for name, value in merged.items() if value is not None}


def test_a_token_grants_its_user_and_its_actions_alone():
    grant = _verify(_mint("alice", [Action.WRITE, Action.READ]))
    assert grant == Grant("alice", frozenset({Action.READ, Action.WRITE}))
    assert grant.allows(Action.READ, "alice") and grant.allows(Action.WRITE, "alice")
    assert not grant.allows(Action.ERASE, "alice")
    assert not grant.allows(Action.READ, "bob")


def test_a_token_for_an_adk_app_and_user_grants_that_memory_alone():
    grant = _verify(_mint("ana", ALL, app="tea-shop"))
    assert grant.user == memory_user("tea-shop", "ana") == "adk:tea-shop/ana"
    assert not grant.allows(Action.READ, "ana")  # the plain user of the same name
    assert not grant.allows(Action.READ, memory_user("other-shop", "ana"))


@given(
    owner=st.text(min_size=1, max_size=8).filter(str.strip),
    other=st.text(min_size=1, max_size=8).filter(str.strip),
    actions=st.frozensets(st.sampled_from(Action), min_size=1),
    asked=st.sampled_from(Action),
)
def test_a_token_never_reaches_another_user_nor_another_action(owner, other, actions, asked):
    grant = _verify(_mint(owner, actions))
    assert grant.allows(asked, other) == (owner == other and asked in actions)


def _none_token() -> str:
    return f"{_segment({'alg': 'none', 'typ': 'JWT'})}.{_segment(_claims(sub='bob'))}."


REFUSED = {
    "expired": (lambda: issue(KEY, audience=AUDIENCE_OWN, user="alice", actions=[Action.READ],
                              ttl_s=3600, now=time.time() - 7200), "expired"),
    "payload-tampered": (lambda: _with_payload(_mint("alice"), sub="bob"), "signature"),
    "scope-tampered": (lambda: _with_payload(_mint("alice"), scope="read write erase"),
                       "signature"),
    "signature-tampered": (lambda: _mint("alice")[:-4] + "AAAA", "signature"),
    "other-key": (lambda: issue(b"x" * 32, audience=AUDIENCE_OWN, user="alice",
                                actions=[Action.READ], ttl_s=60), "signature"),
    "wrong-audience": (lambda: issue(KEY, audience=audience_for("other-alias"), user="alice",
                                     actions=[Action.READ], ttl_s=60), "audience"),
    "wrong-issuer": (lambda: jwt.encode(_claims(iss="someone-else"), KEY, algorithm="HS256"),
                     "issuer"),
    "alg-none": (_none_token, "algorithm"),
    "alg-none-over-a-real-token": (lambda: _reheader(_mint("alice"), {"alg": "none"}, sign=""),
                                   "algorithm"),
    "other-hmac": (lambda: jwt.encode(_claims(), KEY * 2, algorithm="HS512"), "algorithm"),
    "no-expiry": (lambda: jwt.encode(_claims(exp=None), KEY, algorithm="HS256"), "lacks a claim"),
    "no-audience": (lambda: jwt.encode(_claims(aud=None), KEY, algorithm="HS256"),
                    "lacks a claim"),
    "no-user": (lambda: jwt.encode(_claims(sub=None), KEY, algorithm="HS256"), "no usable user"),
    "no-action": (lambda: jwt.encode(_claims(scope="admin"), KEY, algorithm="HS256"),
                  "none of read"),
    "not-a-jwt": (lambda: "not-a-token", "neither"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_token_that_is_not_valid_is_refused_with_its_reason(case: str):
    make, reason = REFUSED[case]
    token = make()
    with pytest.raises(TokenRefused, match=reason) as refused:
        _verify(token)
    assert token not in str(refused.value)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"actions": []}, "at least one"),
        ({"ttl_s": 0}, "lives from"),
        ({"ttl_s": MAX_TTL_S + 1}, "lives from"),
        ({"user": " "}, "non-empty"),
        ({"user": "ana", "app": ""}, "app_name"),
    ],
)
def test_issue_refuses_a_token_it_could_not_bound(options: dict, problem: str):
    arguments = {"audience": AUDIENCE_OWN, "user": "alice", "actions": [Action.READ], "ttl_s": 60}
    with pytest.raises(InvalidScope, match=problem):
        issue(KEY, **{**arguments, **options})


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    provider = IdentityProvider()
    yield provider
    provider.stop()


def _provider(idp: IdentityProvider, **options) -> UserTokens:
    provider = ProviderTokens(idp.jwks_url, issuer=ISSUER, audience=AUDIENCE, **options)
    return UserTokens(OwnTokens(KEY, audience=AUDIENCE_OWN), provider)


@pytest.mark.parametrize("kid", ["rsa-1", "ec-1"])
def test_a_providers_token_is_checked_against_its_published_keys(idp, kid: str):
    tokens = _provider(idp)
    assert _verify(idp.sign(idp.claims(), kid=kid), tokens) == Grant(
        "u-alice", frozenset({Action.READ})
    )
    # serve's own tokens still pass beside it.
    assert _verify(_mint("bob"), tokens).user == "bob"


def test_the_providers_user_and_app_claims_are_the_configured_ones(idp):
    tokens = _provider(idp, user_claim="email", app_claim="app")
    claims = idp.claims(email="ana@tea.example", app="tea-shop", scope=["write"])
    grant = _verify(idp.sign(claims), tokens)
    assert grant == Grant(memory_user("tea-shop", "ana@tea.example"), frozenset({Action.WRITE}))
    with pytest.raises(TokenRefused, match="'email'"):
        _verify(idp.sign(idp.claims()), tokens)  # no email claim: no user


@functools.cache
def _other_rsa() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _hmac_over_public_key(idp: IdentityProvider) -> str:
    pem = idp.rsa.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = f"{_segment({'alg': 'HS256', 'kid': 'rsa-1'})}.{_segment(idp.claims())}"
    mac = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


PROVIDER_REFUSED = {
    "expired": (lambda idp: idp.sign(idp.claims(exp=int(time.time()) - 3600)), "expired"),
    "wrong-audience": (lambda idp: idp.sign(idp.claims(aud="another-api")), "audience"),
    "wrong-issuer": (lambda idp: idp.sign(idp.claims(iss="https://evil.test")), "issuer"),
    "unknown-key-id": (lambda idp: idp.sign(idp.claims(), kid="rsa-9"), "No key"),
    "other-rsa-key": (lambda idp: idp.sign(idp.claims(), key=_other_rsa()), "signature"),
    "tampered": (lambda idp: _with_payload(idp.sign(idp.claims()), sub="u-bob"), "signature"),
    "alg-none": (lambda idp: _reheader(idp.sign(idp.claims()), {"alg": "none", "kid": "rsa-1"},
                                       sign=""), "algorithm"),
    # HMAC keyed with the provider's public key, which anyone can fetch: a forgery.
    "hmac-over-public-key": (_hmac_over_public_key, "algorithm|signature"),
    # An EC signature presented under the RSA key's id.
    "other-type-of-key": (lambda idp: _reheader(idp.sign(idp.claims(), kid="ec-1"),
                                                {"alg": "ES256", "kid": "rsa-1"}), "algorithm"),
}  # fmt: skip


@pytest.mark.parametrize("with_own", [True, False], ids=["beside-own-tokens", "alone"])
@pytest.mark.parametrize("case", sorted(PROVIDER_REFUSED))
def test_a_providers_token_that_is_not_valid_is_refused(idp, case: str, with_own: bool):
    make, reason = PROVIDER_REFUSED[case]
    provider = ProviderTokens(idp.jwks_url, issuer=ISSUER, audience=AUDIENCE)
    own = OwnTokens(KEY, audience=AUDIENCE_OWN) if with_own else None
    with pytest.raises(TokenRefused, match=reason):
        _verify(make(idp), UserTokens(own, provider))


def test_a_provider_that_cannot_be_reached_is_unavailable_not_a_bad_token():
    down = IdentityProvider()
    token = down.sign(down.claims())
    down.stop()
    with pytest.raises(TokenKeysUnavailable, match="could not be fetched"):
        _verify(token, _provider(down))


@pytest.mark.parametrize("algorithms", [["HS256"], ["none"], []])
def test_a_provider_is_never_checked_with_a_shared_secret(idp, algorithms):
    with pytest.raises(ValueError, match="public keys"):
        ProviderTokens(idp.jwks_url, issuer=ISSUER, audience=AUDIENCE, algorithms=algorithms)
