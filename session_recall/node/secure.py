"""What makes a local node secured (`node start --secure`): security on, HTTPS with a
CA of its own, transport TLS in a cluster, and the `elastic` user's bootstrap password.

The password is made once, kept in a file only its owner reads, and given to each
node through its keystore on standard input: never on a command line, in another
process's environment, or in a log. The launcher uses it to wait for the node's
health; users get credentials of their own (`session-recall users create`).
"""

import base64
import secrets
import shutil
import ssl
import subprocess
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from session_recall.core.errors import SessionRecallError
from session_recall.node import account
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

    def prepare(self) -> "Security":
        """Make the CA, the node certificate and the bootstrap password, once."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o700)
        self.certificates.make()
        if not self.password_file.is_file():
            self.password_file.touch(mode=0o600)
            self.password_file.write_text(secrets.token_urlsafe(24), encoding="utf-8")
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

    def install(self, config: Path, *, es_home: Path, env: Mapping[str, str]) -> None:
        """Put the node's certificates in its `config` folder, and the bootstrap
        password in its keystore (once)."""
        certs = config / CONFIG_CERTS
        certs.mkdir(exist_ok=True)
        found = self.certificates
        for source in (found.ca, found.node, found.node_key):
            shutil.copyfile(source, certs / source.name)
        account.give_to_node_user(certs)
        if (config / "elasticsearch.keystore").is_file():
            return
        tool = str(es_home / "bin" / "elasticsearch-keystore")
        node_env = ["env", *(f"{k}={v}" for k, v in env.items())]
        for args, given in (
            (["create"], None),
            (["add", "--stdin", "--force", "bootstrap.password"], self.password()),
        ):
            done = subprocess.run(
                account.as_node_user([*node_env, tool, *args]),
                input=given,
                capture_output=True,
                text=True,
                cwd=config,
            )
            if done.returncode != 0:
                raise SessionRecallError(
                    f"elasticsearch-keystore {args[0]} failed: {done.stderr.strip()[-500:]}",
                    hint=f"Remove {config / 'elasticsearch.keystore'} and start the node again.",
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
