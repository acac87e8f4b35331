"""Embedding many texts when the model may refuse some of them.

A server refuses a whole request for one text it cannot take (too long, say): the
other texts of the batch would go without vectors too, and be sent again, and billed
again, at every try. `embed_isolated` splits a refused batch in halves and tries each,
down to single texts, so that only the texts refused on their own are left without a
vector, each with the reason. A refusal of the caller rather than of the texts (a bad
key, an unknown model) is not split: it is raised, as an outage is; so is a refusal of
a text on its own when the model refuses a plain word too (a server that answers 400
for a model it does not serve).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from session_recall.embeddings.embedder import Embedder, Vector
from session_recall.embeddings.errors import EmbedderRefused, EmbeddingError


@dataclass
class Isolated:
    """One vector per text (None for a text refused, or with nothing to embed), and
    the reason of each text refused on its own, by position."""

    vectors: list["Vector | None"]
    refused: dict[int, str] = field(default_factory=dict)
    plain_word_passes: bool = False  # the model was seen to take a text: refusals are of texts


def embed_isolated(embedder: Embedder, texts: Sequence[str]) -> Isolated:
    """`embedder.embed(texts)`, with the texts the model refuses on their own set apart.
    Raises what `embed` raises for anything else (an `EmbeddingError` for an outage)."""
    result = Isolated([None] * len(texts))
    _embed(embedder, texts, list(range(len(texts))), result)
    return result


def _embed(embedder: Embedder, texts: Sequence[str], positions: list[int], into: Isolated) -> None:
    try:
        vectors = embedder.embed([texts[i] for i in positions])
    except EmbedderRefused as err:
        if not err.of_texts:
            raise
        if len(positions) == 1:
            _check_the_model_takes_a_word(embedder, into, err)
            into.refused[positions[0]] = err.message
            return
        half = len(positions) // 2
        _embed(embedder, texts, positions[:half], into)
        _embed(embedder, texts, positions[half:], into)
        return
    for i, vector in zip(positions, vectors, strict=True):
        into.vectors[i] = vector


# What any model embeds: when it refuses this too, the refusal is not the text's.
_PLAIN_WORD = "hello"


def _check_the_model_takes_a_word(embedder: Embedder, into: Isolated, err: EmbedderRefused) -> None:
    if into.plain_word_passes:
        return
    try:
        embedder.embed([_PLAIN_WORD])
    except EmbedderRefused:
        raise EmbeddingError(
            f"The embeddings server refuses every text, a plain word too: {err.message}",
            hint=err.hint,
        ) from None
    into.plain_word_passes = True
