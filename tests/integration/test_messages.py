"""Messages that name what happened, against the real node: a client that speaks TLS to
a node that does not is told to use http://, not that a certificate is untrusted."""

import pytest
from click.testing import CliRunner

from session_recall.cli import main

pytestmark = pytest.mark.integration


def test_https_to_a_plain_node_says_to_use_http(es_url: str, tmp_path):
    if not es_url.startswith("http://"):
        pytest.skip("the node under test serves https")
    plain_as_tls = "https://" + es_url.removeprefix("http://")
    result = CliRunner().invoke(
        main, ["--es-url", plain_as_tls, "--home", str(tmp_path), "search", "--user", "a", "x"]
    )
    assert result.exit_code == 3, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    assert "does not serve https" in result.output and "http://" in result.output
    assert "certificate" not in result.output
