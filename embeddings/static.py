"""The static model: token embeddings shipped inside a PyPI wheel, offline and ten times
faster to enrich with than the default encoder (`SESSION_RECALL_EMBEDDER=static`).

The weights are WordLlama's `l2_supercat` (MIT licence, 32,000 Llama-2 tokens x 256
dimensions, float16, 16 MB), which the `wordllama` wheel carries with its tokenizer.
They are read straight from the installed package: nothing is downloaded, and the
`wordllama` module itself is never imported (importing it configures the root logger).
A text's vector is the mean of its tokens' vectors, as WordLlama was trained, cut to
`dims` dimensions (the model is trained so its leading 64, 128 or 256 stand alone),
leaving out the tokens of English function words ("what", "did", "we"): they are in
every text, and pull every vector towards the same average. On the evaluation set
(tests/support/memory_eval.py) this lifts semantic recall@10 on paraphrases at 256
dimensions from 0.56 to 0.63. It is done by zeroing their rows once, at load: free per
text. The `-v1` in the model id names this recipe; another recipe must get another id.

64 dimensions by default: a quarter of the vector for Elasticsearch to parse, store and
link into its HNSW graph, and a quarter of the sums to add up here, which is what lets
`ingest` keep up its events/s with vectors; recall on paraphrases is a little lower
(hybrid 0.56 rather than 0.63 on the evaluation set). 256 is there for whoever prefers
recall to ingest speed (SESSION_RECALL_EMBEDDINGS_DIMS); docs/memory-search.md has the figures.

Why this model: it is the one static model found on PyPI with its weights inside the
wheel and a clear licence; see docs/memory-search.md ("Semantic recall") for the figures.
"""

import hashlib
import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from session_recall.core.errors import ConfigurationError
from session_recall.core.stopwords import STOPWORDS
from session_recall.embeddings.embedder import Vector
from session_recall.embeddings.pooling import WordSums, unit_vectors

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

PACKAGE = "wordllama"
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
# The weights this release was checked with. Another file under the same name would
# give other vectors under the same model id, mixed with the stored ones: refused.
WEIGHTS_SHA256 = "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5"
DIMS = (64, 128, 256)
DEFAULT_DIMS = 64
# A message's meaning is in its first few thousand characters; the bound keeps a
# megabyte-long tool output from costing a megabyte of tokenizing.
MAX_CHARS = 4000


@dataclass(frozen=True)
class _Model:
    weights: "NDArray[np.float16]"  # one row per token, as stored
    silent: list[int]  # the function words' tokens
    tokenizer: Any

    def table(self, dims: int) -> "NDArray[np.float32]":
        """The leading `dims` columns as float32, plus a zero row for padding, with the
        function words' rows zeroed. Only these columns are copied: at start-up, the
        copy is most of the load time."""
        import numpy as np

        rows = self.weights.shape[0]
        table = np.zeros((rows + 1, dims), dtype=np.float32)
        table[:rows] = self.weights[:, :dims]
        # A zero row adds nothing to a sum: the same as leaving the token out of the
        # mean (only the direction of a vector counts under cosine similarity).
        table[self.silent] = 0.0
        return table


class StaticEmbedder:
    """WordLlama l2_supercat vectors, computed locally. Thread-safe; loads on first use."""

    def __init__(self, dims: int = DEFAULT_DIMS) -> None:
        if dims not in DIMS:
            raise ConfigurationError(
                f"The static embedder has no {dims}-dimensional form.",
                hint=f"Use one of {', '.join(map(str, DIMS))}.",
            )
        self._dims = dims
        self._model_id = f"wordllama-l2-supercat-{dims}-v1"
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dims(self) -> int:
        return self._dims

    def load(self) -> None:
        """Read the weights now rather than on the first `embed` (about 0.3 s, 33 MB)."""
        with self._lock:
            _word_sums(self._dims)

    def embed(self, texts: Sequence[str]) -> list[Vector | None]:
        self.load()
        return unit_vectors(_word_sums(self._dims).sums([text[:MAX_CHARS] for text in texts]))


def package_folder() -> Path:
    """Where the `wordllama` package is installed, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(
            "The static embedder needs the `wordllama` package, which is not installed.",
            hint="Install it (`pip install wordllama`), or set SESSION_RECALL_EMBEDDER=none.",
        )
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def _model() -> _Model:
    """The weights and tokenizer, read once per process and shared by every embedder."""
    import numpy as np
    from safetensors import safe_open
    from tokenizers import Tokenizer

    folder = package_folder()
    weights = folder / WEIGHTS
    try:
        data = weights.read_bytes()
    except OSError as err:
        raise ConfigurationError(
            f"The static embedder's weights cannot be read: {err}.",
            hint="Reinstall the `wordllama` package.",
        ) from None
    if hashlib.sha256(data).hexdigest() != WEIGHTS_SHA256:
        raise ConfigurationError(
            f"{weights} is not the file this release was checked with, so its vectors "
            "would not match the stored ones.",
            hint="Install the wordllama version in this release's requirements.",
        )
    with safe_open(str(weights), framework="np") as tensors:
        stored = tensors.get_tensor("embedding.weight")
    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    silent = sorted(_function_word_tokens(tokenizer))
    return _Model(weights=stored.astype(np.float16, copy=False), silent=silent, tokenizer=tokenizer)


@cache
def _word_sums(dims: int) -> WordSums:
    """The per-word sums of the leading `dims` columns, shared by that size's embedders:
    the sums of a column do not depend on the others, so the vectors are the leading
    `dims` columns of the full sums, at a fraction of the cost and cache size."""

    model = _model()
    return WordSums(model.tokenizer, model.table(dims))


def _function_word_tokens(tokenizer: Any) -> set[int]:
    """The tokens that are a function word on their own (lower or capitalized)."""
    tokens = set()
    for word in STOPWORDS:
        for form in (word, word.capitalize()):
            ids = tokenizer.encode(form, add_special_tokens=False).ids
            if len(ids) == 1:
                tokens.add(ids[0])
    return tokens
