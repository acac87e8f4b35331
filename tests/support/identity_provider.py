"""A tiny identity provider on 127.0.0.1: an RSA and an EC key of its own, their public
halves published as a JWKS at `jwks_url`, and `sign` to make its tokens. `stop()`
closes the port: a real "provider down"."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "https://idp.test"
AUDIENCE = "recall-api"


class IdentityProvider:
    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.fetches = 0
        keys = [
            {
                **json.loads(RSAAlgorithm.to_jwk(self.rsa.public_key())),
                "kid": "rsa-1",
                "alg": "RS256",
            },
            {**json.loads(ECAlgorithm.to_jwk(self.ec.public_key())), "kid": "ec-1", "alg": "ES256"},
        ]
        body = json.dumps({"keys": keys}).encode()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                provider.fetches += 1
                status = 200 if self.path == "/jwks.json" else 404
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) if status == 200 else 0))
                self.end_headers()
                if status == 200:
                    self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.jwks_url = f"http://127.0.0.1:{self._server.server_port}/jwks.json"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def claims(self, **overrides: Any) -> dict[str, Any]:
        """A provider's usual claims for user `u-alice`, allowed to read, for an hour."""
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": "u-alice",
            "scope": "openid read",
            "iat": now,
            "exp": now + 3600,
        }
        claims.update(overrides)
        return {name: value for name, value in claims.items() if value is not None}

    def sign(self, claims: dict[str, Any], *, kid: str = "rsa-1", key: Any = None) -> str:
        """`claims` signed with the provider's key `kid` (or with `key`, under that kid)."""
        algorithm = "RS256" if kid.startswith("rsa") else "ES256"
        own = self.rsa if kid.startswith("rsa") else self.ec
        return jwt.encode(claims, key or own, algorithm=algorithm, headers={"kid": kid})

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
