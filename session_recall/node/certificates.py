"""The local secured node's certificates: a CA of its own, and one certificate for
its nodes (HTTP and, in a cluster, transport), valid for the loopback names only (and
for the host names a compose bundle asks for: `bundle`).

Made once per node or cluster and kept: a client that trusts the CA file keeps
trusting the node across restarts. The CA's key stays beside it (mode 600), never in
a node's config folder: only a node's own key goes there.
"""

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from session_recall.node import private

VALID_DAYS = 825  # what browsers and most clients accept for a leaf certificate
LOOPBACK_NAMES = ("localhost",)
LOOPBACK_ADDRESSES = ("127.0.0.1", "::1")


@dataclass(frozen=True)
class Certificates:
    """The files of one CA and its node certificate (PEM)."""

    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.folder / "ca.key"

    @property
    def node(self) -> Path:
        return self.folder / "node.crt"

    @property
    def node_key(self) -> Path:
        return self.folder / "node.key"

    def exist(self) -> bool:
        return all(p.is_file() for p in (self.ca, self.ca_key, self.node, self.node_key))

    def make(
        self, *, common_name: str = "session-recall local node", hosts: tuple[str, ...] = ()
    ) -> "Certificates":
        """Write a new CA and node certificate, unless they exist. The node's names are
        the loopback's, and `hosts` (a compose service's name, say)."""
        if self.exist():
            return self
        private.folder(self.folder)
        now = datetime.datetime.now(datetime.UTC)
        start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=VALID_DAYS)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{common_name} CA")])
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
            .sign(ca_key, hashes.SHA256())
        )
        node_key = ec.generate_private_key(ec.SECP256R1())
        names: list[x509.GeneralName] = [x509.DNSName(n) for n in (*LOOPBACK_NAMES, *hosts)]
        names += [x509.IPAddress(ipaddress.ip_address(a)) for a in LOOPBACK_ADDRESSES]
        node = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca_name)
            .public_key(node_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
            )
            .sign(ca_key, hashes.SHA256())
        )
        private.write(self.ca_key, _pem(ca_key))
        private.write(self.node_key, _pem(node_key))
        private.write(self.ca, ca.public_bytes(serialization.Encoding.PEM))
        private.write(self.node, node.public_bytes(serialization.Encoding.PEM))
        return self


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
