"""A CA file with an http:// URL, a CA file that is missing or holds no certificate:
each is one line naming what is wrong and what to do, before any connection, on
every command that reaches Elasticsearch; never a traceback, never "not trusted"."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from session_recall.cli import main
from session_recall.node.certificates import Certificates

COMMANDS = [
    ["search", "--user", "u", "lisbon"],
    ["memory-search", "--user", "u", "lisbon"],
    ["setup"],
    ["ingest", "-"],
]


def _run(command: list[str], url: str, ca: Path) -> str:
    env = {"ELASTICSEARCH_URL": url, "ELASTICSEARCH_CA_CERTS": str(ca)}
    result = CliRunner().invoke(main, command, env=env, input="")
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output and "not trusted" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    return result.output


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_ca_with_a_plain_http_url_says_to_use_https(command: list[str], tmp_path: Path) -> None:
    ca = Certificates(tmp_path).make().ca
    said = _run(command, "http://127.0.0.1:9200", ca)
    assert "plain HTTP" in said and "'https://127.0.0.1:9200'" in said


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize(
    ("content", "says"),
    [(None, "No such file or directory"), ("not a certificate\n", "holds no PEM certificate")],
)
def test_a_ca_file_missing_or_not_pem_is_named(
    command: list[str], content: str | None, says: str, tmp_path: Path
) -> None:
    ca = tmp_path / "ca.crt"
    if content is not None:
        ca.write_text(content)
    said = _run(command, "https://127.0.0.1:9200", ca)
    assert "ELASTICSEARCH_CA_CERTS" in said and str(ca) in said and says in said
