"""The embeddings library: where vectors go, and the offline static embedder."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.errors import ConfigurationError
from session_recall.embeddings import StaticEmbedder, vector_field, vector_key
from session_recall.embeddings.static import MAX_CHARS


@pytest.fixture(scope="module")
def static() -> StaticEmbedder:
    return StaticEmbedder()


def test_a_plain_model_id_is_its_own_field_name():
    assert vector_key("wordllama-l2-supercat-256-v1") == "wordllama-l2-supercat-256-v1"
    assert vector_field("m1") == "embeddings.m1"


@pytest.mark.parametrize("model_id", ["text-embedding-3-small@1536", "BAAI/bge-m3", "a.b", ""])
def test_any_other_model_id_becomes_a_field_name_without_dots(model_id: str):
    key = vector_key(model_id)
    assert "." not in key and "/" not in key and key == key.lower() and key


@given(st.text(max_size=30), st.text(max_size=30))
def test_two_model_ids_never_share_a_field(first: str, second: str):
    if first != second:
        assert vector_key(first) != vector_key(second)


def test_static_vectors_are_unit_length_and_the_same_on_every_call(static: StaticEmbedder):
    texts = ["We decided on Lisbon, the flights are cheaper.", "let's go with Postgres"]
    first, again = static.embed(texts), static.embed(list(reversed(texts)))
    for vector in first:
        assert vector is not None and vector.shape == (static.dims,)
        assert abs(float(np.linalg.norm(vector)) - 1) < 1e-3  # four decimals kept
    assert np.allclose(first[0], again[1]) and np.allclose(first[1], again[0])


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "what did we do about it"])
def test_a_text_with_nothing_to_embed_has_no_vector(static: StaticEmbedder, text: str):
    # Elasticsearch refuses a zero vector under cosine similarity: None, never zeros.
    assert static.embed([text, "the dog is sick"])[0] is None


def test_static_vectors_place_a_paraphrase_nearer_than_an_unrelated_text(static: StaticEmbedder):
    query, answer, other = static.embed(
        [
            "what did the vet say about my puppy?",
            "the animal doctor prescribed a bland diet for the dog",
            "the quarterly budget review moved to Friday",
        ]
    )
    assert float(query @ answer) > float(query @ other) + 0.1


@pytest.mark.parametrize("dims", [64, 128])
def test_smaller_static_forms_are_the_leading_dimensions(dims: int):
    # Each size sums its own columns (a cache of its width): the same vectors as
    # cutting the full sums, so a size's model id keeps meaning the same vectors.
    full_size, small = StaticEmbedder(256), StaticEmbedder(dims)
    assert small.model_id != full_size.model_id
    [full] = full_size.embed(["oak cabinets and a quartz countertop"])
    [cut] = small.embed(["oak cabinets and a quartz countertop"])
    assert np.allclose(cut, full[:dims] / np.linalg.norm(full[:dims]), atol=2e-4)


def test_an_unknown_static_size_is_refused():
    with pytest.raises(ConfigurationError, match="no 100-dimensional form"):
        StaticEmbedder(100)


def test_a_long_text_is_embedded_from_its_beginning(static: StaticEmbedder):
    text = "budget, deadline " * 100_000
    [long], [head] = static.embed([text]), static.embed([text[:MAX_CHARS]])
    assert long is not None and np.allclose(long, head, atol=1e-5)


def test_the_static_model_loads_offline_without_importing_wordllama():
    # Importing wordllama would configure the root logger; loading must not need it,
    # nor any network (there is none to reach from a test).
    code = (
        "import sys; from session_recall.embeddings import StaticEmbedder;"
        "StaticEmbedder().embed(['hello world']);"
        "assert 'wordllama' not in sys.modules, 'imported';"
        "import logging; assert not logging.getLogger().handlers, 'root logger configured'"
    )
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("capacity", [3, 10, 1000])
def test_word_sums_equal_token_sums_whatever_the_cache_size(capacity: int):
    from session_recall.embeddings.pooling import WordSums, pooled_sums
    from session_recall.embeddings.static import _model

    model = _model()
    texts = ["We decided on Lisbon, the flights are cheaper.", "", "决定 预算", "oak oak oak"]
    words = WordSums(model.tokenizer, model.table(256), capacity=capacity)
    tokens = [e.ids for e in model.tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
    expected = pooled_sums(model.table(256), tokens)
    for _ in range(2):  # cold, then from the cache (or after it started over)
        assert np.allclose(words.sums(texts), expected, atol=1e-4)
