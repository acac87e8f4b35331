"""The endpoint overhead benchmark runs end to end: a server process that takes a
known time, and the embedder's queries timed against it (no speed is asserted)."""

import pytest

from bench.endpoint_overhead import main, measure


def test_the_server_time_and_the_clients_are_both_measured():
    figures = measure(calls=5, model_ms=20)
    assert figures["calls"] == 5
    assert figures["server_p50_ms"] >= 20, "the server's own time includes its model's"
    assert figures["client_p50_ms"] >= figures["server_p50_ms"]
    assert figures["added_ms"] == figures["client_p50_ms"] - figures["server_p50_ms"]


def test_a_call_count_below_one_is_refused(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as refused:
        main(["--calls", "0"])
    assert refused.value.code == 2
    assert "--calls: at least 1" in capsys.readouterr().err


def test_an_enrichment_run_needs_a_node(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("ELASTICSEARCH_URL", raising=False)
    with pytest.raises(SystemExit) as refused:
        main(["--enrichment", "100"])
    assert refused.value.code == 2
    assert "set ELASTICSEARCH_URL first" in capsys.readouterr().err
