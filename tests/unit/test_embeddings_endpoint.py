"""The OpenAI-compatible endpoint embedder against a local server that speaks the API."""

from collections.abc import Iterator

import numpy as np
import pytest

from session_recall.embeddings import (
    DimensionMismatch,
    EmbedderRefused,
    EmbedderUnavailable,
    EndpointEmbedder,
    StaticEmbedder,
    query_vector,
)
from tests.support.embeddings_server import DIMS, MODEL, EmbeddingsServer

TEXTS = [f"note {i}: the oven needs a new heating element" for i in range(7)]


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddingsServer]:
    running = EmbeddingsServer().start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def fresh_controls(server: EmbeddingsServer) -> None:
    server.controls.__init__()  # type: ignore[misc]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def embedder(server_url: str, clock: Clock | None = None, **options) -> EndpointEmbedder:
    clock = clock or Clock()
    return EndpointEmbedder(
        url=server_url, model=MODEL, dims=DIMS, sleep=clock.sleep, clock=lambda: clock.now,
        **options,
    )  # fmt: skip


def test_vectors_come_in_order_in_batches_of_the_configured_size(server: EmbeddingsServer):
    vectors = embedder(server.url, batch_size=3).embed(TEXTS)
    assert server.controls.batches == [3, 3, 1]
    expected = StaticEmbedder(DIMS).embed(TEXTS)
    for got, want in zip(vectors, expected, strict=True):
        assert np.allclose(got, want, atol=1e-6)


def test_blank_texts_are_not_sent_and_have_no_vector(server: EmbeddingsServer):
    vectors = embedder(server.url).embed(["", "the oven is broken", "   "])
    assert server.controls.batches == [1]
    assert vectors[0] is None and vectors[2] is None and vectors[1] is not None


def test_a_server_error_is_retried_with_backoff(server: EmbeddingsServer):
    server.controls.fail_next = 2
    clock = Clock()
    vectors = embedder(server.url, clock, max_attempts=3).embed(TEXTS[:2])
    assert np.allclose(vectors[0], StaticEmbedder(DIMS).embed(TEXTS[:1])[0], atol=1e-6)
    assert len(clock.slept) == 2 and clock.slept[1] > clock.slept[0] / 2


def test_after_its_retries_the_embedder_is_unavailable_and_pauses(server: EmbeddingsServer):
    server.controls.fail_next = 10
    clock = Clock()
    remote = embedder(server.url, clock, max_attempts=3, paused_s=30)
    with pytest.raises(EmbedderUnavailable, match="after 3 attempts"):
        remote.embed(TEXTS)
    # Paused: the next call fails at once, without a request, then it tries again.
    left = server.controls.fail_next
    with pytest.raises(EmbedderUnavailable, match="not retrying yet"):
        remote.embed(TEXTS)
    assert server.controls.fail_next == left
    clock.now += 31
    server.controls.fail_next = 0
    assert np.allclose(
        remote.embed(TEXTS[:1])[0], StaticEmbedder(DIMS).embed(TEXTS[:1])[0], atol=1e-6
    )


def test_vectors_of_another_size_are_refused(server: EmbeddingsServer):
    server.controls.dims = 128
    with pytest.raises(DimensionMismatch, match="128 dimensions; 256 are configured"):
        embedder(server.url).embed(TEXTS[:1])


def test_a_refusal_is_not_retried(server: EmbeddingsServer):
    server.controls.status = 401
    clock = Clock()
    with pytest.raises(EmbedderRefused, match="401") as refused:
        embedder(server.url, clock).embed(TEXTS[:1])
    assert clock.slept == [] and "API key" in (refused.value.hint or "")


def test_an_endpoint_that_is_down_is_unavailable():
    down = EmbeddingsServer()  # never started: nothing listens on its port
    with pytest.raises(EmbedderUnavailable, match="ConnectError"):
        embedder(down.url, max_attempts=2).embed(TEXTS[:1])


def test_the_model_id_names_the_size():
    remote = EndpointEmbedder(url="http://127.0.0.1:9/v1/", model="bge-m3", dims=1024)
    assert remote.model_id == "bge-m3@1024" and remote.dims == 1024


def test_questions_and_stored_texts_each_get_their_prefix(server: EmbeddingsServer):
    e5 = embedder(server.url, query_prefix="query: ", passage_prefix="passage: ")
    e5.embed(["the oven is broken"])
    e5.embed_query("what is broken?")
    assert server.controls.inputs == ["passage: the oven is broken", "query: what is broken?"]
    # Vectors of texts embedded with another prefix are another model's: never mixed.
    assert e5.model_id != embedder(server.url).model_id
    assert embedder(server.url, query_prefix="query: ").model_id == embedder(server.url).model_id


def test_query_vector_takes_the_query_path_where_there_is_one(server: EmbeddingsServer):
    query_vector(embedder(server.url, query_prefix="query: "), "what is broken?")
    query_vector(StaticEmbedder(DIMS), "what is broken?")  # no query path: as any text
    assert server.controls.inputs == ["query: what is broken?"]
