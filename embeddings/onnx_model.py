"""An ONNX model and its tokenizer, read with onnxruntime and tokenizers: the local
encoders' (`transformer`) and the operator's cross-encoder (`recall.rerank_local`)."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from session_recall.core.errors import ConfigurationError
from session_recall.core.extras import DISTRIBUTION


@dataclass(frozen=True)
class OnnxModel:
    session: Any  # onnxruntime.InferenceSession: thread-safe
    tokenizer: Any  # tokenizers.Tokenizer
    inputs: frozenset[str]  # the session's input names


def onnx_model(
    weights: Path, tokenizer: Path, *, threads: int, needed_by: str, otherwise: str
) -> OnnxModel:
    """The model at `weights` on `threads` threads (0: one per core) and the tokenizer
    at `tokenizer`, on the CPU. Without onnxruntime, a `ConfigurationError` saying that
    `needed_by` needs it, and `otherwise` what to do instead of installing it."""
    try:
        import onnxruntime
    except ImportError:
        raise ConfigurationError(
            f"{needed_by} needs onnxruntime, which is not installed.",
            hint=f"Install {DISTRIBUTION} again (in its checkout: `pip install -e .`), which "
            f"brings onnxruntime, or {otherwise}.",
        ) from None
    from tokenizers import Tokenizer

    read = Tokenizer.from_file(str(tokenizer))
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # its warnings are about graph fusions, not us
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(
        str(weights), options, providers=["CPUExecutionProvider"]
    )
    return OnnxModel(session, read, frozenset(i.name for i in session.get_inputs()))
