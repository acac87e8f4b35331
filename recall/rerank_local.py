"""A cross-encoder that the operator brings, run here with onnxruntime.

No permissively licensed cross-encoder ships inside a package the registries serve,
so there is none to fetch: `session-recall models add-reranker --onnx PATH
--tokenizer PATH` copies the operator's two files under the models folder
(`reranker/`) and records their SHA-256 digests beside them (`reranker.json`). The
reranker reads only that folder and checks the digests again when it loads, so a file
replaced under the same name is refused rather than trusted.

The model takes a tokenized pair (the question, a candidate's text) as `input_ids`
and `attention_mask` (and `token_type_ids` when it has that input), and gives one
logit per pair (its last column, for a model with two classes): higher ranks first.
"""

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from session_recall.core.errors import ConfigurationError
from session_recall.embeddings import OnnxModel, onnx_model
from session_recall.recall.rerank import RerankFailed

FOLDER = "reranker"
MANIFEST = "reranker.json"
WEIGHTS, TOKENIZER = "model.onnx", "tokenizer.json"
MAX_TOKENS = 512  # the pair together, as cross-encoders of the BERT family take it
_ADD = "run `session-recall models add-reranker --onnx PATH --tokenizer PATH`"


@dataclass(frozen=True)
class RerankerFiles:
    weights: Path
    tokenizer: Path
    weights_sha256: str
    tokenizer_sha256: str


def add_reranker(onnx: Path, tokenizer: Path, models_folder: Path) -> RerankerFiles:
    """Copy the operator's cross-encoder (`onnx`) and its tokenizer (`tokenizer.json`)
    under `models_folder`, with their digests; replaces the one added before. Both
    files are read before anything is replaced, so a file that does not load is
    refused and the previous reranker stays."""
    models_folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_folder, prefix=".reranker-") as scratch:
        staged = Path(scratch) / FOLDER
        staged.mkdir()
        try:
            shutil.copyfile(onnx, staged / WEIGHTS)
            shutil.copyfile(tokenizer, staged / TOKENIZER)
        except OSError as err:
            raise ConfigurationError(
                f"The reranker's files could not be copied ({err.strerror}: {err.filename}).",
                hint="Give the paths of an ONNX cross-encoder and of its tokenizer.json.",
            ) from None
        manifest = {
            "weights": {"file": WEIGHTS, "sha256": _sha256(staged / WEIGHTS)},
            "tokenizer": {"file": TOKENIZER, "sha256": _sha256(staged / TOKENIZER)},
            "from": {"weights": onnx.name, "tokenizer": tokenizer.name},
        }
        (staged / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        _load(installed_reranker(Path(scratch)))  # it loads, before anything is replaced
        target = models_folder / FOLDER
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staged, target)
    return installed_reranker(models_folder)


def installed_reranker(models_folder: Path) -> RerankerFiles:
    """The checked files of the reranker added under `models_folder`; a
    `ConfigurationError` naming the command when they are missing or differ from the
    digests recorded when it was added."""
    folder = models_folder / FOLDER
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        weights, tokenizer = manifest["weights"], manifest["tokenizer"]
        files = RerankerFiles(
            folder / weights["file"],
            folder / tokenizer["file"],
            str(weights["sha256"]),
            str(tokenizer["sha256"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigurationError(
            f"No reranker is added under {models_folder} (SESSION_RECALL_RERANKER=local).",
            hint=f"To add the cross-encoder you bring, {_ADD}; or set "
            "SESSION_RECALL_MODELS to the folder that holds it.",
        ) from None
    for path, expected in (
        (files.weights, files.weights_sha256),
        (files.tokenizer, files.tokenizer_sha256),
    ):
        if not path.is_file() or _sha256(path) != expected:
            raise ConfigurationError(
                f"{path} is missing or is not the file added as the reranker.",
                hint=f"To add it again, {_ADD}.",
            )
    return files


class LocalReranker:
    """The added cross-encoder. Thread-safe; loads (and checks the digests) on first use."""

    def __init__(self, models_folder: Path) -> None:
        self._folder = models_folder

    @property
    def name(self) -> str:
        return "local cross-encoder"

    def load(self) -> None:
        """Check and read the files now rather than at the first search."""
        _loaded(self._folder)

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        import numpy as np

        if not documents:
            return []
        loaded = _loaded(self._folder)
        encodings = loaded.tokenizer.encode_batch([(query, text) for text in documents])
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }
        if "token_type_ids" in loaded.inputs:
            feed["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        try:
            [logits] = loaded.session.run(None, feed)[:1]
        except Exception as err:  # onnxruntime raises its own, unexported, kinds
            raise RerankFailed(f"the model did not run: {type(err).__name__}") from None
        flat = np.asarray(logits, dtype=np.float64).reshape(len(documents), -1)
        return [float(x) for x in flat[:, -1]]


@cache
def _loaded(models_folder: Path) -> OnnxModel:
    """The added reranker, checked and read once per process."""
    return _load(installed_reranker(models_folder))


def _load(files: RerankerFiles) -> OnnxModel:
    try:
        loaded = onnx_model(
            files.weights, files.tokenizer, threads=1,  # a question's candidates, beside others
            needed_by="The local reranker", otherwise="unset SESSION_RECALL_RERANKER",
        )  # fmt: skip
    except ConfigurationError:
        raise
    except Exception as err:  # tokenizers and onnxruntime raise their own kinds
        raise ConfigurationError(
            f"The reranker's files do not load ({type(err).__name__}: {str(err)[:200]}).",
            hint="Give an ONNX cross-encoder and the tokenizer.json it was trained with.",
        ) from None
    if not {"input_ids", "attention_mask"} <= loaded.inputs:
        raise ConfigurationError(
            f"The reranker's model takes {sorted(loaded.inputs)}, not input_ids and "
            "attention_mask.",
            hint="Give an ONNX export of a cross-encoder (a BERT-family sequence classifier).",
        )
    loaded.tokenizer.enable_truncation(MAX_TOKENS)
    loaded.tokenizer.enable_padding()
    return loaded


def _sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
