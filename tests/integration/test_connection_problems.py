"""A URL that reaches no Elasticsearch says which URL was tried and what was found
there, on the CLI and in serve's /readyz: plain HTTP behind https://, TLS behind
http://, a server that answers but is not Elasticsearch, a path after the port. The
servers are real listeners: the shared node, and tiny ones the test starts."""

import functools
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from session_recall.cli import main
from session_recall.node import wait_until
from session_recall.node.certificates import Certificates
from tests.support.network import free_port
from tests.support.serve import serving

pytestmark = pytest.mark.integration


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        del format, args


@contextmanager
def _web_server(folder: Path, *, tls: bool = False) -> Iterator[str]:
    """A static file server on 127.0.0.1 (404 for every Elasticsearch path), over TLS
    with a certificate of its own when `tls`."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls:
        made = Certificates(folder / "certs").make()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(made.node, made.node_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _search(url: str, home: Path) -> str:
    done = CliRunner().invoke(
        main,
        ["search", "--user", "u", "weather"],
        env={
            "ELASTICSEARCH_URL": url,
            "SESSION_RECALL_HOME": str(home),
            "ELASTICSEARCH_CA_CERTS": None,
        },
    )
    assert done.exit_code == 3, done.output
    assert "Traceback" not in done.output
    return done.stderr


def test_the_cli_names_the_url_and_what_answers_there(es_url: str, tmp_path: Path):
    port = es_url.rsplit(":", 1)[1].rstrip("/")
    https = f"https://127.0.0.1:{port}"
    assert f"The server at {https} does not serve https" in _search(https, tmp_path)
    with _web_server(tmp_path) as web:
        said = _search(web, tmp_path)
        assert f"The server at {web} answered HTTP 404, but it is not Elasticsearch" in said
    with _web_server(tmp_path, tls=True) as tls:
        said = _search(tls, tmp_path)
        assert f"The server at {tls} speaks https (TLS), not plain http" in said, said
        assert tls.replace("http://", "https://") in said
    nothing = f"http://127.0.0.1:{free_port()}"
    assert f"Check ELASTICSEARCH_URL ({nothing} was tried" in _search(nothing, tmp_path)
    pathed = f"http://127.0.0.1:{port}/elastic"
    said = _search(pathed, tmp_path)
    assert f"Elasticsearch at http://127.0.0.1:{port} has no endpoint under /elastic" in said


def _reason(served_url: str) -> str:
    found: list[str] = []

    def unready() -> bool:
        answer = httpx.get(f"{served_url}/readyz", timeout=30)
        found.append(answer.json().get("reason", ""))
        return answer.status_code == 503

    assert wait_until(unready, timeout=30), found
    return found[-1]


def test_serves_readiness_names_the_url_and_what_answers_there(
    es_url: str, alias: str, tmp_path: Path
):
    port = es_url.rsplit(":", 1)[1].rstrip("/")
    https = f"https://127.0.0.1:{port}"
    for sub in ("tls", "web"):
        (tmp_path / sub).mkdir()
    with serving(es_url=https, alias=alias, folder=tmp_path / "tls") as served:
        reason = _reason(served.url)
    assert f"The server at {https} does not serve https" in reason
    assert "not trusted" not in reason
    with (
        _web_server(tmp_path) as web,
        serving(es_url=web, alias=alias, folder=tmp_path / "web") as served,
    ):
        reason = _reason(served.url)
    assert f"The server at {web} answered HTTP 404, but it is not Elasticsearch" in reason
