"""The same BERT encoder as an ONNX graph built in memory from the safetensors weights.

No torch, no export step, no file written, no download: :func:`build_model`
assembles standard ONNX operators (opset 20) around the arrays of
:class:`~engram.recall._bert.BertWeights`, and :func:`open_session` hands the
serialised graph to onnxruntime, whose optimiser fuses attention, layer norm
and GELU. Needs the ``onnx`` extra (``onnx`` + ``onnxruntime``).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from engram.errors import MissingDependencyError
from engram.recall._bert import F32, I64, BertWeights, _Layer

OPSET = 20
_HINT = "pip install 'engram[onnx]'"


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"the onnx runtime needs {module!r}: {_HINT}") from exc


class _Graph:
    """Accumulates nodes and initialisers with generated names."""

    def __init__(self, helper: Any, numpy_helper: Any) -> None:
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._count = 0

    def const(self, name: str, array: np.ndarray[Any, Any]) -> str:
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, kind: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{kind.lower()}_{self._count}"
        self.nodes.append(self.helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def dense(self, x: str, weight: F32, bias: F32, name: str) -> str:
        product = self.op("MatMul", x, self.const(f"{name}.w", weight))
        return self.op("Add", product, self.const(f"{name}.b", bias))

    def layer_norm(self, x: str, gamma: F32, beta: F32, name: str, eps: float) -> str:
        g, b = self.const(f"{name}.g", gamma), self.const(f"{name}.b", beta)
        return self.op("LayerNormalization", x, g, b, axis=-1, epsilon=eps)


def _heads(g: _Graph, x: str, perm: list[int]) -> str:
    split = g.op("Reshape", x, "heads_shape")
    return g.op("Transpose", split, perm=perm)


def _attention(g: _Graph, x: str, layer: _Layer, hidden: int, i: int) -> str:
    w, b = layer.qkv_w, layer.qkv_b
    q, k, v = (
        g.dense(
            x, w[:, j * hidden : (j + 1) * hidden], b[j * hidden : (j + 1) * hidden], f"l{i}.{n}"
        )
        for j, n in enumerate("qkv")
    )
    scores = g.op("MatMul", _heads(g, q, [0, 2, 1, 3]), _heads(g, k, [0, 2, 3, 1]))
    scores = g.op("Add", g.op("Div", scores, "head_scale"), "mask_bias")
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), _heads(g, v, [0, 2, 1, 3]))
    merged = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), "hidden_shape")
    return g.dense(merged, layer.out_w, layer.out_b, f"l{i}.o")


def _layer(g: _Graph, x: str, layer: _Layer, hidden: int, eps: float, i: int) -> str:
    x = g.layer_norm(
        g.op("Add", x, _attention(g, x, layer, hidden, i)),
        layer.ln1_g,
        layer.ln1_b,
        f"l{i}.ln1",
        eps,
    )
    up = g.op("Gelu", g.dense(x, layer.up_w, layer.up_b, f"l{i}.up"))
    down = g.dense(up, layer.down_w, layer.down_b, f"l{i}.down")
    return g.layer_norm(g.op("Add", x, down), layer.ln2_g, layer.ln2_b, f"l{i}.ln2", eps)


def _embeddings(g: _Graph, weights: BertWeights) -> str:
    words = g.op("Gather", g.const("word", weights.word), "input_ids", axis=0)
    width = g.op("Shape", "input_ids", start=1, end=2)
    positions = g.op("Slice", g.const("position", weights.position), "zero_1d", width, "zero_1d")
    x = g.op("Add", g.op("Add", words, positions), g.const("token_type", weights.token_type[0]))
    return g.layer_norm(x, weights.ln_g, weights.ln_b, "emb.ln", weights.eps)


def _constants(g: _Graph, weights: BertWeights) -> None:
    hidden = weights.word.shape[1]
    g.const("zero_1d", np.zeros(1, dtype=np.int64))
    g.const("heads_shape", np.array([0, 0, weights.heads, hidden // weights.heads], dtype=np.int64))
    g.const("hidden_shape", np.array([0, 0, hidden], dtype=np.int64))
    g.const("head_scale", np.array(np.sqrt(hidden // weights.heads), dtype=np.float32))
    g.const("one", np.array(1.0, dtype=np.float32))
    g.const("neg_big", np.array(-1e9, dtype=np.float32))
    g.const("mask_axes", np.array([1, 2], dtype=np.int64))


def build_model(weights: BertWeights) -> bytes:
    """The encoder as a serialised ONNX model: ``(input_ids, attention_mask) -> hidden``."""
    onnx = _import("onnx")
    g = _Graph(onnx.helper, onnx.numpy_helper)
    _constants(g, weights)
    mask = g.op("Cast", "attention_mask", to=onnx.TensorProto.FLOAT)
    inverted = g.op("Mul", g.op("Sub", "one", mask), "neg_big")
    g.nodes.append(onnx.helper.make_node("Unsqueeze", [inverted, "mask_axes"], ["mask_bias"]))
    x = _embeddings(g, weights)
    hidden = weights.word.shape[1]
    for i, layer in enumerate(weights.layers):
        x = _layer(g, x, layer, hidden, weights.eps, i)
    g.nodes.append(onnx.helper.make_node("Identity", [x], ["hidden"]))
    ids = [
        onnx.helper.make_tensor_value_info(n, onnx.TensorProto.INT64, ["batch", "tokens"])
        for n in ("input_ids", "attention_mask")
    ]
    out = onnx.helper.make_tensor_value_info(
        "hidden", onnx.TensorProto.FLOAT, ["batch", "tokens", hidden]
    )
    graph = onnx.helper.make_graph(g.nodes, "minilm", ids, [out], g.inits)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", OPSET)])
    return bytes(model.SerializeToString())


class OnnxEncoder:
    """An onnxruntime session over :func:`build_model`, with explicit thread counts."""

    def __init__(self, weights: BertWeights, threads: int | None) -> None:
        ort = _import("onnxruntime")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            build_model(weights), options, providers=["CPUExecutionProvider"]
        )

    def __call__(self, ids: I64, mask: I64) -> F32:
        (hidden,) = self._session.run(["hidden"], {"input_ids": ids, "attention_mask": mask})
        result: F32 = hidden
        return result
