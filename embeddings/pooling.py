"""Sums of rows of a table, one per text: how a static model pools its tokens.

A text's vector is the sum of its tokens' rows (its mean has the same direction, and
cosine similarity looks at nothing else). Words repeat across messages far more than
texts do, so the sums are taken per whitespace-delimited word first, and cached: the
tokenizer and the token rows are then paid once per distinct word, not per text. The
tokenizer's pieces never span whitespace (SentencePiece starts each word with '▁'), so
a text's sum is the sum of its words' sums.
"""

import itertools
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from session_recall.embeddings.embedder import Vector

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# Texts are summed in groups of similar length: a padded (group, longest, dims) gather
# summed over its middle axis is several times faster than numpy's reduceat.
_GROUP = 128
# The word cache's size: 32 MB of sums, whatever their width (131,072 distinct words at
# 64 dimensions, 32,768 at 256), a few weeks of one user's chats. A full cache starts
# over rather than tracking what was used least.
WORD_CACHE_BYTES = 32 * 2**20


def pooled_sums(
    table: "NDArray[np.float32]", rows: Sequence[Sequence[int]]
) -> "NDArray[np.float32]":
    """Per entry of `rows`, the sum of those rows of `table`, whose last row is zeros."""
    import numpy as np

    pad = table.shape[0] - 1
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    sums = np.zeros((len(rows), table.shape[1]), dtype=np.float32)
    order = np.argsort(lengths, kind="stable")
    for start in range(0, len(order), _GROUP):
        group = order[start : start + _GROUP]
        longest = int(lengths[group[-1]])
        if longest == 0:
            continue
        sizes = lengths[group]
        flat = np.fromiter(
            itertools.chain.from_iterable(rows[i] for i in group),
            dtype=np.int64,
            count=int(sizes.sum()),
        )
        padded = np.full((len(group), longest), pad, dtype=np.int64)
        # Row by row, the first `size` cells take the row's indices (in row-major order).
        padded[np.arange(longest) < sizes[:, None]] = flat
        sums[group] = table[padded].sum(axis=1)
    return sums


class WordSums:
    """Texts to the sums of their tokens' rows, through a cache of per-word sums.
    Thread-safe (one caller at a time: the cache's rows are reused when it fills)."""

    def __init__(
        self, tokenizer: Any, table: "NDArray[np.float32]", capacity: int | None = None
    ) -> None:
        import numpy as np

        self._tokenizer = tokenizer
        self._table = table
        self._capacity = capacity or WORD_CACHE_BYTES // (4 * table.shape[1])
        self._rows: dict[str, int] = {}
        # One row per cached word, and a last row of zeros for padding.
        self._words = np.zeros((self._capacity + 1, table.shape[1]), dtype=np.float32)
        self._lock = threading.Lock()

    def sums(self, texts: Sequence[str]) -> "NDArray[np.float32]":
        split = [text.split() for text in texts]
        with self._lock:
            missing = list(
                dict.fromkeys(w for words in split for w in words if w not in self._rows)
            )
            if len(missing) > self._capacity:  # more new words than the cache holds
                return pooled_sums(self._table, self._token_ids(texts))
            if len(self._rows) + len(missing) > self._capacity:
                self._rows.clear()
                missing = list(dict.fromkeys(w for words in split for w in words))
            if missing:
                start = len(self._rows)
                stop = start + len(missing)
                self._words[start:stop] = pooled_sums(self._table, self._token_ids(missing))
                self._rows.update(zip(missing, range(start, stop), strict=True))
            rows = self._rows
            return pooled_sums(self._words, [[rows[w] for w in words] for words in split])

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        return [encoding.ids for encoding in encodings]


# Four decimals of a unit vector's components move a cosine by less than 1e-3 and make
# the JSON of a vector a third shorter, for the bulk request and for Elasticsearch to
# parse.
_DECIMALS = 4


def unit_vectors(sums: "NDArray[np.float32]") -> list[Vector | None]:
    """Each row scaled to length 1 and rounded; None for a row with no direction (no
    token, or tokens that cancel out): cosine similarity has nothing to compare, and
    Elasticsearch refuses a zero vector."""
    import numpy as np

    norms = np.linalg.norm(sums, axis=1)
    empty = norms <= 1e-6
    norms[empty] = 1.0
    units = np.round(sums / norms[:, None], _DECIMALS)
    return [None if skip else row for row, skip in zip(units, empty, strict=True)]
