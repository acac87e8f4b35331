"""What the reranker's tests build themselves: a tiny cross-encoder exported to ONNX
with its tokenizer, and a `/rerank` server run in a thread of the test's process."""

from pathlib import Path
from typing import Any

from tests.support.json_server import json_server

# The tiny cross-encoder's words, and each one's weight: a pair's logit is the sum of
# its tokens' weights, so a text scores by how often it names "apple" (and loses by
# "pear").
WEIGHTS = {"[PAD]": 0.0, "[UNK]": 0.0, "[CLS]": 0.0, "[SEP]": 0.0, "apple": 1.0, "pear": -1.0}


def tiny_cross_encoder(folder: Path, *, with_type_ids: bool = True) -> tuple[Path, Path]:
    """Export a cross-encoder of one layer to `folder`: `model.onnx` (input_ids,
    attention_mask, optionally token_type_ids; logits of shape [batch, 1]) and its
    `tokenizer.json` (lowercased words, [CLS] query [SEP] text [SEP])."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {word: i for i, word in enumerate(WEIGHTS)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.enable_padding(pad_id=vocab["[PAD]"], pad_token="[PAD]")
    tokenizer_path = folder / "tokenizer.json"
    tokenizer.save(str(tokenizer_path))

    table = numpy_helper.from_array(np.array(list(WEIGHTS.values()), dtype=np.float32), "table")
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
    ]
    if with_type_ids:  # read by no node, as a model that ignores segments has it
        inputs.append(
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "tokens"])
        )
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["weights"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["weights", "mask"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", "axes"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[table, axes],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    model_path = folder / "model.onnx"
    onnx.save(model, str(model_path))
    return model_path, tokenizer_path


def reversing(body: dict[str, Any]) -> tuple[int, Any]:
    """Scores the documents in the reverse of the order they came in."""
    count = len(body["documents"])
    # Best first, as such servers answer: the last document sent first.
    results = [{"index": i, "relevance_score": float(i)} for i in reversed(range(count))]
    return 200, {"results": results}


# The `/rerank` server of these tests: a JSON server as any endpoint's test starts one.
rerank_server = json_server
