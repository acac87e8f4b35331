"""A small transformer encoder run on this machine with onnxruntime: better recall than
the static model, at the cost of CPU (`SESSION_RECALL_EMBEDDER=e5-small` or `minilm`).

A text's vector is the mean of the encoder's last hidden states over its tokens, the
pooling both models were trained with. Texts are cut to their first `MAX_TOKENS`
tokens: a message's meaning is near its start, and attention costs grow with the
square of the length. A batch is padded to its longest text, so texts are sorted by
length and batched with their like: on LoCoMo's turns that doubles the rate.

The weights are read from the folder `session-recall models fetch` filled (see
`local_models`); onnxruntime is an extra (`local`: in the checkout, `pip install -e '.[local]'`).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from session_recall.core.errors import ConfigurationError
from session_recall.core.extras import extra_hint
from session_recall.embeddings.embedder import Vector
from session_recall.embeddings.local_models import installed, model
from session_recall.embeddings.pooling import unit_vectors

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MAX_TOKENS = 256
MAX_CHARS = 4000  # a megabyte-long tool output costs no megabyte of tokenizing
BATCH = 16  # on 2 cores, 16 was faster than 8, 32 or 64 (fewer pad tokens, warm caches)


class TransformerEmbedder:
    """One of `local_models.MODELS`, run with onnxruntime. Thread-safe; loads on first use."""

    def __init__(self, name: str, models_folder: Path) -> None:
        self._spec = model(name)
        self._folder = models_folder

    @property
    def model_id(self) -> str:
        return self._spec.model_id

    @property
    def dims(self) -> int:
        return self._spec.dims

    def load(self) -> None:
        """Check and read the weights now rather than on the first `embed` (about 1 s).
        Each model is read once per process, whatever the number of embedders."""
        _loaded(self._spec.name, self._folder)

    def embed(self, texts: Sequence[str]) -> list[Vector | None]:
        """Stored texts' vectors (with the model's passage prefix)."""
        return self._vectors([text[:MAX_CHARS] for text in texts], self._spec.passage_prefix)

    def embed_query(self, text: str) -> Vector | None:
        """A question's vector (with the model's query prefix)."""
        [vector] = self._vectors([text[:MAX_CHARS]], self._spec.query_prefix)
        return vector

    def _vectors(self, texts: list[str], prefix: str) -> list[Vector | None]:
        """A text with no word gets None, as with the static model: the prefix alone
        would give every empty text one vector, near everything and meaning nothing."""
        import numpy as np

        loaded = _loaded(self._spec.name, self._folder)
        worded = [i for i, text in enumerate(texts) if text.strip()]
        pooled = np.zeros((len(texts), self.dims), dtype=np.float32)
        order = sorted(worded, key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            pooled[batch] = _pooled(loaded, [prefix + texts[i] for i in batch])
        return unit_vectors(pooled)


def _pooled(loaded: "_Loaded", texts: list[str]) -> "NDArray[np.float32]":
    """The mean of each text's last hidden states over its tokens (padding left out)."""
    import numpy as np

    encodings = loaded.tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in loaded.inputs:
        feed["token_type_ids"] = np.zeros_like(ids)
    [hidden] = loaded.session.run(["last_hidden_state"], feed)
    weights = mask[..., None].astype(np.float32)
    summed: NDArray[np.float32] = (hidden * weights).sum(axis=1)
    return summed / np.maximum(weights.sum(axis=1), 1.0)


@dataclass(frozen=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession: thread-safe
    tokenizer: Any
    inputs: frozenset[str]


@cache
def _loaded(name: str, folder: Path) -> _Loaded:
    """Model `name`'s inference session, tokenizer and input names, read from `folder`
    once per process (the digests are checked then): sessions are thread-safe."""
    spec = model(name)
    try:
        import onnxruntime
    except ImportError:
        raise ConfigurationError(
            f"The local model {spec.name!r} needs onnxruntime, which is not installed.",
            hint=f"Install {extra_hint('local')}, or set SESSION_RECALL_EMBEDDER=static.",
        ) from None
    from tokenizers import Tokenizer

    files = installed(spec.name, folder)
    tokenizer = Tokenizer.from_file(str(files.tokenizer))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding()
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # its warnings are about graph fusions, not us
    session = onnxruntime.InferenceSession(
        str(files.weights), options, providers=["CPUExecutionProvider"]
    )
    return _Loaded(session, tokenizer, frozenset(i.name for i in session.get_inputs()))
