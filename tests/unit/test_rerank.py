"""The reranker slot: the step's order, the local cross-encoder's loading (on a tiny
one the test exports itself), and the `/rerank` endpoint at its HTTP boundary (a
server the test starts)."""

import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError
from session_recall.factories import reranker_for
from session_recall.recall import (
    EndpointReranker,
    LocalReranker,
    RerankFailed,
    add_reranker,
    installed_reranker,
)
from session_recall.recall.fusion import Fused
from session_recall.recall.rerank import reranked
from tests.support.rerankers import rerank_server, reversing, tiny_cross_encoder

DOCUMENTS = ["a pear", "apple and apple", "nothing here", "an apple, a pear and an apple apple"]


def test_the_reranked_head_is_in_score_order_and_the_rest_keeps_its_place():
    fused = [Fused(key, None, None, 1.0 - i / 10) for i, key in enumerate("abcde")]
    keys = [f.key for f in reranked(fused, [0.1, 0.9, 0.5])]
    assert keys == ["b", "c", "a", "d", "e"]


@pytest.mark.parametrize("with_type_ids", [True, False])
def test_an_added_cross_encoder_scores_each_pair(tmp_path: Path, with_type_ids: bool):
    onnx, tokenizer = tiny_cross_encoder(tmp_path, with_type_ids=with_type_ids)
    models = tmp_path / "models"
    files = add_reranker(onnx, tokenizer, models)
    assert files.weights.parent == models / "reranker"
    scores = LocalReranker(models).scores("which fruit?", DOCUMENTS)
    # A pair's logit is its apples less its pears (the query names neither).
    assert scores == pytest.approx([-1.0, 2.0, 0.0, 2.0])


def test_add_reranker_records_the_digests_and_a_changed_file_is_refused(tmp_path: Path):
    onnx, tokenizer = tiny_cross_encoder(tmp_path)
    result = CliRunner().invoke(
        main,
        ["models", "add-reranker", "--onnx", str(onnx), "--tokenizer", str(tokenizer)],
        env={"SESSION_RECALL_MODELS": str(tmp_path / "models")},
    )
    assert result.exit_code == 0, result.output
    files = installed_reranker(tmp_path / "models")
    assert files.weights_sha256 in result.output and files.tokenizer_sha256 in result.output
    with files.tokenizer.open("a") as changed:
        changed.write(" ")
    with pytest.raises(ConfigurationError, match="not the file added") as refused:
        installed_reranker(tmp_path / "models")
    assert "add-reranker" in (refused.value.hint or "")


def test_a_file_that_is_no_cross_encoder_is_refused_and_the_previous_one_stays(tmp_path: Path):
    onnx, tokenizer = tiny_cross_encoder(tmp_path)
    models = tmp_path / "models"
    add_reranker(onnx, tokenizer, models)
    with pytest.raises(ConfigurationError, match="do not load"):
        add_reranker(tokenizer, tokenizer, models)  # a tokenizer where the model goes
    assert LocalReranker(models).scores("q", ["apple"]) == pytest.approx([1.0])


def test_a_local_reranker_never_added_says_how_to_add_one(tmp_path: Path):
    settings = Settings(SESSION_RECALL_RERANKER="local", SESSION_RECALL_MODELS=tmp_path)
    reranker = reranker_for(settings)
    with pytest.raises(ConfigurationError, match="No reranker is added") as missing:
        assert isinstance(reranker, LocalReranker)
        reranker.load()
    assert "add-reranker" in (missing.value.hint or "")


def test_the_endpoint_is_sent_the_common_shape_and_its_scores_come_back_in_order():
    with rerank_server(reversing) as (url, received):
        reranker = EndpointReranker(url=url, model="tiny", timeout_s=5)
        assert reranker.scores("q?", ["x", "y", "z"]) == [0.0, 1.0, 2.0]
    [body] = received
    assert body == {
        "path": "/v1/rerank", "model": "tiny", "query": "q?", "documents": ["x", "y", "z"],
        "top_n": 3,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ((503, {"error": "overloaded"}), "status 503"),
        ((200, b"<html>not json"), "not JSON"),
        ((200, {"data": []}), "without results"),
        ((200, {"results": [{"index": 7, "relevance_score": 1.0}]}), "indices"),
    ],
)
def test_an_endpoint_that_fails_is_a_rerank_failure(answer, reason: str):
    with rerank_server(lambda body: answer) as (url, _), pytest.raises(RerankFailed, match=reason):
        EndpointReranker(url=url, model="tiny", timeout_s=5).scores("q", ["x", "y"])


def test_an_endpoint_past_its_deadline_is_a_rerank_failure():
    release = threading.Event()

    def stalled(body):
        release.wait(30)  # until the client has given up
        return 200, {"results": []}

    with rerank_server(stalled) as (url, _):
        try:
            with pytest.raises(RerankFailed, match="deadline"):
                EndpointReranker(url=url, model="tiny", timeout_s=0.2).scores("q", ["x"])
        finally:
            release.set()


def test_an_endpoint_reranker_needs_its_url_and_model():
    with pytest.raises(ConfigurationError, match="RERANKER=endpoint"):
        Settings(SESSION_RECALL_RERANKER="endpoint", SESSION_RECALL_RERANKER_URL="http://x")
    assert reranker_for(Settings()) is None
