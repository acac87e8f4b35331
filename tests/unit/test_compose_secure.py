"""The compose file's secured profile, without Docker: its shape (TLS on, no secret in
the file or the environment, each volume read by its one account), and the secrets
its `secure-init` service makes, by running that service's own command here."""

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import bcrypt
import pytest
import yaml
from cryptography import x509

from session_recall.node.bundle import ES_FILES, READ_USER, SERVE_FILES, WRITE_USER
from tests.support.elasticsearch import REPO

COMPOSE = REPO / "docker-compose.yml"
SECURE = ("secure-init", "elasticsearch-secure", "session-recall-secure")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return found


def _service(compose: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = compose["services"][name]
    return found


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """Each named volume of `service`, by where it is mounted (":ro" kept)."""
    return {v.split(":", 1)[1]: v.split(":", 1)[0] for v in service.get("volumes", [])}


def test_the_secured_services_are_a_profile_of_their_own_beside_the_open_ones(
    compose: dict[str, Any],
) -> None:
    for name in SECURE:
        assert _service(compose, name)["profiles"] == ["secure"], name
    for name in ("elasticsearch", "session-recall"):  # `docker compose up` is unchanged
        assert "profiles" not in _service(compose, name)
    ports = [p for s in compose["services"].values() for p in s.get("ports", [])]
    assert all(p.startswith("127.0.0.1:") for p in ports), ports
    assert len({p.split(":")[1] for p in ports}) == len(ports), "two services, one port"


def test_elasticsearch_speaks_tls_only_and_reaches_no_host_port(compose: dict[str, Any]) -> None:
    es = _service(compose, "elasticsearch-secure")
    env = es["environment"]
    assert env["xpack.security.enabled"] == "true"
    assert env["xpack.security.http.ssl.enabled"] == "true"
    assert "ports" not in es
    assert "ELASTIC_PASSWORD" not in env  # file-realm users: no superuser password at all
    assert "missing authentication credentials" in " ".join(es["healthcheck"]["test"])
    assert es["depends_on"]["secure-init"]["condition"] == "service_completed_successfully"


def test_serve_takes_every_secret_from_a_file_and_none_from_the_file_or_environment(
    compose: dict[str, Any],
) -> None:
    env = _service(compose, "session-recall-secure")["environment"]
    assert env["ELASTICSEARCH_URL"].startswith("https://elasticsearch-secure:")
    secret = re.compile(r"(PASSWORD|TOKEN|API_KEY)$")
    assert not [name for name in env if secret.search(name)], env
    assert {env["ELASTICSEARCH_USERNAME"], env["SESSION_RECALL_READ_USERNAME"]} == {
        WRITE_USER,
        READ_USER,
    }
    for variable, file in SERVE_FILES.items():
        assert env[variable] == f"/run/session-recall/{file}", variable


def test_each_secrets_volume_is_mounted_by_its_reader_alone(compose: dict[str, Any]) -> None:
    readers = {
        name: set(_mounts(service).values()) for name, service in compose["services"].items()
    }
    assert {n for n, v in readers.items() if "es-secrets" in v} == {
        "secure-init",
        "elasticsearch-secure",
    }
    assert {n for n, v in readers.items() if "serve-secrets" in v} == {
        "secure-init",
        "session-recall-secure",
    }
    assert (
        _mounts(_service(compose, "elasticsearch-secure"))[
            "/usr/share/elasticsearch/config/bundle:ro"
        ]
        == "es-secrets"
    )
    assert _mounts(_service(compose, "session-recall-secure"))["/run/session-recall:ro"] == (
        "serve-secrets"
    )
    dockerfile = (REPO / "Dockerfile").read_text()
    init = " ".join(_service(compose, "secure-init")["command"])
    assert "--serve-owner=10001:10001" in init and "--uid 10001" in dockerfile


def test_the_init_command_makes_private_secrets_that_match_the_files_compose_names(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    """The `secure-init` command, run here on two folders (owned by this test's own
    account): what the two other services name is there, at 600, and it works."""
    init = _service(compose, "secure-init")
    mine = f"{os.getuid()}:{os.getgid()}"
    command = [
        arg.replace("/bundle/", f"{tmp_path}/").split("#")[0].strip() for arg in init["command"]
    ]
    command = [re.sub(r"^(--(es|serve)-owner)=.*", rf"\1={mine}", arg) for arg in command]
    assert command[:3] == ["python", "-m", "session_recall.node.bundle"]
    env = {**os.environ, "SESSION_RECALL_INDEX": "events"}
    for attempt in ("made", "kept"):  # a restart keeps the secrets of the first start
        run = subprocess.run(
            [sys.executable, *command[1:]], capture_output=True, text=True, env=env
        )
        assert run.returncode == 0, run.stderr
        assert attempt in run.stdout
    es, serve = tmp_path / "elasticsearch", tmp_path / "session-recall"
    assert sorted(p.name for p in es.iterdir()) == sorted(ES_FILES)
    assert sorted(p.name for p in serve.iterdir()) == sorted(SERVE_FILES.values())
    for path in (es, serve, *es.iterdir(), *serve.iterdir()):
        assert path.stat().st_mode & 0o077 == 0, path
    # Elasticsearch's settings and start command name files of its volume.
    es_service = _service(compose, "elasticsearch-secure")
    named = [
        v
        for k, v in es_service["environment"].items()
        if k.endswith((".key", "certificate", "authorities"))
    ]
    named += re.findall(r"config/bundle/(\S+)", es_service["command"][-1])
    assert {Path(n).name for n in named} <= set(ES_FILES)
    # The node's certificate names the service's host and chains to the CA serve trusts.
    ca = x509.load_pem_x509_certificate((serve / "ca.crt").read_bytes())
    node = x509.load_pem_x509_certificate((es / "node.crt").read_bytes())
    node.verify_directly_issued_by(ca)
    names = node.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "elasticsearch-secure" in names.get_values_for_type(x509.DNSName)
    # Each password opens its user, whose roles are the alias's.
    hashes = dict(line.split(":", 1) for line in (es / "users").read_text().splitlines())
    for user, file in ((WRITE_USER, "write.password"), (READ_USER, "read.password")):
        password = (serve / file).read_text()
        assert bcrypt.checkpw(password.encode(), hashes[user].encode()), user
    members = dict(line.split(":", 1) for line in (es / "users_roles").read_text().splitlines())
    assert {role for role, users in members.items() if WRITE_USER in users} == {
        "events-ingest",
        "events-enrich",
        "events-admin",
    }
    assert members["events-recall"] == READ_USER
    assert set(yaml.safe_load((es / "roles.yml").read_text())) >= set(members)
    assert len((serve / "token").read_text()) >= 32
