"""A small transformer encoder run on this machine with onnxruntime: better recall than
the static model, at the cost of CPU (`SESSION_RECALL_EMBEDDER=e5-small` or `minilm`).

A text's vector is the mean of the encoder's last hidden states over its tokens, or
its first token's ([CLS]), as each model was trained (`LocalModel.pooling`). Texts are
cut to their first `MAX_TOKENS` tokens: a message's meaning is near its start, and
attention costs grow with the square of the length. A batch is padded to its longest
text, so texts are sorted by length and batched with their like: on LoCoMo's turns
that doubles the rate.

Questions run on an inference session of their own, with one thread: a question is
one short text, and it never waits behind a page of the enrichment pass on the
stored texts' session (two threads, for the batches). The vectors of recent questions
are kept (`QUERY_CACHE`): an agent often asks the same thing again.

The weights are read from the folder `session-recall models fetch` filled (see
`local_models`); onnxruntime comes with the default install.
"""

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from session_recall.embeddings.embedder import Vector
from session_recall.embeddings.local_models import LocalModel, installed, model
from session_recall.embeddings.onnx_model import OnnxModel, onnx_model
from session_recall.embeddings.pooling import unit_vectors

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MAX_TOKENS = 256
MAX_CHARS = 4000  # a megabyte-long tool output costs no megabyte of tokenizing
BATCH = 16  # on 2 cores, 16 was faster than 8, 32 or 64 (fewer pad tokens, warm caches)
# The questions whose vectors are kept, per embedder: 384 floats each, 1.5 kB.
QUERY_CACHE = 1024


class TransformerEmbedder:
    """One of `local_models.MODELS`, run with onnxruntime. Thread-safe; loads on first use."""

    def __init__(self, name: str, models_folder: Path) -> None:
        self._spec = model(name)
        self._folder = models_folder
        self._asked: OrderedDict[str, Vector | None] = OrderedDict()
        self._asked_lock = threading.Lock()
        self.query_cache_hits = 0

    @property
    def model_id(self) -> str:
        return self._spec.model_id

    @property
    def dims(self) -> int:
        return self._spec.dims

    def load(self) -> None:
        """Check and read the weights now rather than on the first `embed` (about 1 s).
        Each model is read once per process, whatever the number of embedders."""
        _loaded(self._spec.name, self._folder, _STORED)

    def embed(self, texts: Sequence[str]) -> list[Vector | None]:
        """Stored texts' vectors (with the model's passage prefix)."""
        texts = [text[:MAX_CHARS] for text in texts]
        return self._vectors(texts, self._spec.passage_prefix, _STORED)

    def embed_query(self, text: str) -> Vector | None:
        """A question's vector (with the model's query prefix), on the questions'
        session; a question asked lately is answered from the cache."""
        text = text[:MAX_CHARS]
        with self._asked_lock:
            if text in self._asked:
                self._asked.move_to_end(text)
                self.query_cache_hits += 1
                return self._asked[text]
        [vector] = self._vectors([text], self._spec.query_prefix, _QUESTIONS)
        with self._asked_lock:
            self._asked[text] = vector
            while len(self._asked) > QUERY_CACHE:
                self._asked.popitem(last=False)
        return vector

    def sessions(self) -> tuple[object, object]:
        """The inference sessions of stored texts and of questions: two, so that a
        question never queues behind a batch."""
        return (
            _loaded(self._spec.name, self._folder, _STORED).session,
            _loaded(self._spec.name, self._folder, _QUESTIONS).session,
        )

    def _vectors(self, texts: list[str], prefix: str, role: str) -> list[Vector | None]:
        """A text with no word gets None, as with the static model: the prefix alone
        would give every empty text one vector, near everything and meaning nothing."""
        import numpy as np

        loaded = _loaded(self._spec.name, self._folder, role)
        worded = [i for i, text in enumerate(texts) if text.strip()]
        pooled = np.zeros((len(texts), self.dims), dtype=np.float32)
        order = sorted(worded, key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            pooled[batch] = _pooled(loaded, [prefix + texts[i] for i in batch], self._spec)
        return unit_vectors(pooled)


# The two inference sessions of a model: stored texts (batches, the enrichment pass)
# and questions (one at a time, memory_search).
_STORED, _QUESTIONS = "stored", "questions"
_THREADS = {_STORED: 0, _QUESTIONS: 1}  # 0: onnxruntime's default, one per core


def _pooled(loaded: OnnxModel, texts: list[str], spec: LocalModel) -> "NDArray[np.float32]":
    """Each text's vector before normalising: the mean of its last hidden states over
    its tokens (padding left out), or its first token's."""
    import numpy as np

    encodings = loaded.tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in loaded.inputs:
        feed["token_type_ids"] = np.zeros_like(ids)
    [hidden] = loaded.session.run(["last_hidden_state"], feed)
    if spec.pooling == "cls":
        first: NDArray[np.float32] = hidden[:, 0, :]
        return first
    weights = mask[..., None].astype(np.float32)
    summed: NDArray[np.float32] = (hidden * weights).sum(axis=1)
    return summed / np.maximum(weights.sum(axis=1), 1.0)


@cache
def _loaded(name: str, folder: Path, role: str) -> OnnxModel:
    """Model `name`'s inference session for `role`, tokenizer and input names, read
    from `folder` once per process and role (the digests are checked then): sessions
    are thread-safe."""
    spec = model(name)
    files = installed(spec.name, folder)
    loaded = onnx_model(
        files.weights, files.tokenizer, threads=_THREADS[role],
        needed_by=f"The local model {spec.name!r}", otherwise="set SESSION_RECALL_EMBEDDER=static",
    )  # fmt: skip
    loaded.tokenizer.enable_truncation(MAX_TOKENS)
    loaded.tokenizer.enable_padding()
    return loaded
