"""What makes a local node secured (`node start --secure`): security on, HTTPS with a
CA of its own, transport TLS in a cluster, and the `elastic` user's bootstrap password.

The password is made once, kept in a file only its owner reads, and given to each
node through its keystore on standard input: never on a command line, in another
process's environment, or in a log. The launcher uses it to wait for the node's
health; users get credentials of their own (`session-recall users create`).
"""

import base64
import secrets
import ssl
import subprocess
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from session_recall.core.errors import SessionRecallError
from session_recall.node import account, private
from session_recall.node.certificates import Certificates

BOOTSTRAP_USER = "elastic"
CONFIG_CERTS = "certs"  # under a node's config folder, where Elasticsearch may read

_SSL = {
    "key": f"{CONFIG_CERTS}/node.key",
    "certificate": f"{CONFIG_CERTS}/node.crt",
    "certificate_authorities": f"{CONFIG_CERTS}/ca.crt",
}


@dataclass(frozen=True)
class Security:
    """The secrets of one secured node or cluster, in `folder` (root's alone)."""

    folder: Path

    @property
    def certificates(self) -> Certificates:
        return Certificates(self.folder)

    @property
    def ca(self) -> Path:
        return self.certificates.ca

    @property
    def password_file(self) -> Path:
        return self.folder / f"{BOOTSTRAP_USER}.password"

    def prepare(self, *, on_step: Callable[[str], None] | None = None) -> "Security":
        """Make the CA, the node certificate and the bootstrap password, once; and
        keep every file of them private (said through `on_step` when one was not)."""
        private.folder(self.folder)
        self.certificates.make()
        if not self.password_file.is_file():
            private.write(self.password_file, secrets.token_urlsafe(24))
        loose = private.tighten(self.folder)
        if loose and on_step is not None:
            on_step(
                f"{loose} file(s) of the secrets in {self.folder} were open to other "
                "accounts; they are now their owner's alone (600)."
            )
        return self

    def password(self) -> str:
        return self.password_file.read_text(encoding="utf-8").strip()

    @staticmethod
    def settings(*, transport: bool) -> dict[str, str]:
        """Node settings: security on, HTTPS, and transport TLS for a cluster."""
        found = {"xpack.security.enabled": "true", "xpack.security.http.ssl.enabled": "true"}
        found.update({f"xpack.security.http.ssl.{k}": v for k, v in _SSL.items()})
        if transport:
            found["xpack.security.transport.ssl.enabled"] = "true"
            found["xpack.security.transport.ssl.verification_mode"] = "certificate"
            found.update({f"xpack.security.transport.ssl.{k}": v for k, v in _SSL.items()})
        return found

    def install(
        self,
        config: Path,
        *,
        es_home: Path,
        env: Mapping[str, str],
        user: str,
        password_known: bool,
    ) -> None:
        """Put the node's certificates in its `config` folder (private to `user`, who
        runs the node), and the bootstrap password in its keystore. `password_known`:
        the keystore, if any, holds this password already; a keystore made by a plain
        start of the node, or for other secrets, is given it again."""
        certs = private.folder(config / CONFIG_CERTS)
        found = self.certificates
        for source in (found.ca, found.node, found.node_key):
            private.write(certs / source.name, source.read_bytes())
        account.give_to(certs, user)
        keystore = config / "elasticsearch.keystore"
        if keystore.is_file() and password_known:
            return
        tool = str(es_home / "bin" / "elasticsearch-keystore")
        node_env = ["env", *(f"{k}={v}" for k, v in env.items())]
        steps: list[tuple[list[str], str | None]] = [
            (["add", "--stdin", "--force", "bootstrap.password"], self.password())
        ]
        if not keystore.is_file():
            steps.insert(0, (["create"], None))
        for args, given in steps:
            done = subprocess.run(
                account.as_node_user([*node_env, tool, *args], user),
                input=given,
                capture_output=True,
                text=True,
                cwd=config,
                umask=private.UMASK,
            )
            if done.returncode != 0:
                raise SessionRecallError(
                    f"elasticsearch-keystore {args[0]} failed: {done.stderr.strip()[-500:]}",
                    hint=f"Remove {keystore} and start the node again.",
                )

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def open(self, url: str, *, timeout: float = 2.0) -> int:
        """The HTTP status of a GET of `url` as the bootstrap user, over verified TLS."""
        request = urllib.request.Request(url)
        token = base64.b64encode(f"{BOOTSTRAP_USER}:{self.password()}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
        with urllib.request.urlopen(request, timeout=timeout, context=self.context()) as answer:
            return int(answer.status)
