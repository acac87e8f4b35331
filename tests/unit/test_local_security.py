"""The secured local node's files, without a node: its certificates chain to its own
CA and name only the loopback, and its file realm keeps users, hashes and roles
straight (what Elasticsearch reads of them is `tests/integration/test_secured.py`'s)."""

import ipaddress
from pathlib import Path

import bcrypt
import pytest
import yaml
from cryptography import x509

from session_recall.core.errors import ConfigurationError
from session_recall.node.certificates import Certificates
from session_recall.node.secure import Security
from session_recall.node.users import FileRealm


def test_the_node_certificate_chains_to_its_ca_and_names_only_the_loopback(
    tmp_path: Path,
) -> None:
    made = Certificates(tmp_path).make()
    ca = x509.load_pem_x509_certificate(made.ca.read_bytes())
    node = x509.load_pem_x509_certificate(made.node.read_bytes())
    node.verify_directly_issued_by(ca)
    names = node.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert set(names.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    }
    assert made.ca_key.stat().st_mode & 0o077 == 0
    assert made.node_key.stat().st_mode & 0o077 == 0
    again = Certificates(tmp_path).make()  # kept: clients go on trusting the same CA
    assert again.ca.read_bytes() == made.ca.read_bytes()


def test_the_bootstrap_password_is_made_once_and_kept_private(tmp_path: Path) -> None:
    security = Security(tmp_path / "s").prepare()
    first = security.password()
    assert len(first) >= 24
    assert security.prepare().password() == first
    assert security.password_file.stat().st_mode & 0o077 == 0
    assert security.folder.stat().st_mode & 0o077 == 0


def test_users_get_their_roles_and_a_hash_elasticsearch_reads(tmp_path: Path) -> None:
    configs = [tmp_path / "n1", tmp_path / "n2"]
    for config in configs:
        config.mkdir()
    realm = FileRealm(configs)
    password = realm.create("reader", ("recall",), "events")
    realm.create("writer", ("ingest", "enrich"), "events")
    writer = ["events-enrich", "events-ingest"]
    assert realm.users() == {"reader": ["events-recall"], "writer": writer}
    for config in configs:  # every node of a cluster holds the same files
        hashes = dict(line.split(":", 1) for line in (config / "users").read_text().splitlines())
        assert hashes["reader"].startswith("$2a$")
        assert bcrypt.checkpw(password.encode(), hashes["reader"].encode())
        assert password not in (config / "users").read_text()
        roles = yaml.safe_load((config / "roles.yml").read_text())
        assert {"events-ingest", "events-recall", "events-enrich", "events-admin"} <= set(roles)
    with pytest.raises(ConfigurationError, match="exists"):
        realm.create("reader", ("admin",), "events")
    with pytest.raises(ConfigurationError, match="not a usable user name"):
        realm.create("bad:name", ("admin",), "events")
    assert realm.delete("reader")
    assert not realm.delete("reader")
    assert realm.users() == {"writer": writer}
    assert "reader" not in (configs[1] / "users_roles").read_text()
