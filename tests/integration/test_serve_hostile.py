"""A real `session-recall serve` process against the real node, under hostile input: a
client that hangs up mid-body, and a fuzz pass generated from the OpenAPI document.
Neither may produce a 500 or a traceback in the server's log."""

import socket
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from session_recall.node import wait_until
from tests.support.serve import Served, serving

pytestmark = pytest.mark.integration

TOKEN = "hostile-input-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
# Examples per operation and mode: nine operations, two modes, well under a minute.
FUZZ_EXAMPLES = 12


@pytest.fixture(scope="module")
def served(es_url: str, module_alias: str, tmp_path_factory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve")
    with serving(
        es_url=es_url, alias=module_alias, token=TOKEN, folder=folder, log_level="info"
    ) as served:
        yield served


def test_a_client_gone_mid_body_is_one_log_line_not_a_traceback(served: Served):
    port = int(served.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(
            b"POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Bearer {TOKEN}\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            + b'{"userId": "alice", "text": "half of a'
        )
    assert wait_until(
        lambda: "disconnected mid-body" in served.log_text() or "Traceback" in served.log_text(),
        timeout=30,
    ), served.log_text()
    assert "Traceback" not in served.log_text() and "ClientDisconnect" not in served.log_text()


def test_a_fuzz_pass_from_the_openapi_document_finds_no_500(served: Served):
    schema = schemathesis.openapi.from_url(f"{served.url}/openapi.json")
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @settings(
                max_examples=FUZZ_EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def call(case: schemathesis.Case) -> None:
                response = case.call(base_url=served.url, headers=AUTH, timeout=30)
                if response.status_code >= 500 and response.status_code != 503:
                    failures.append(f"{case.method} {case.formatted_path}: {response.text}")

            call()
    assert failures == []
    assert "Traceback" not in served.log_text(), served.log_text()
