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
MS = "com.microsoft"
"""onnxruntime's contrib operators: fused attention, skip layer norm, bias GELU."""
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

    def op(self, kind: str, *inputs: str, domain: str = "", **attrs: Any) -> str:
        self._count += 1
        out = f"{kind.lower()}_{self._count}"
        node = self.helper.make_node(kind, list(inputs), [out], domain=domain or None, **attrs)
        self.nodes.append(node)
        return out

    def skip_layer_norm(
        self, x: str, skip: str, bias: F32, gamma: F32, beta: F32, name: str, eps: float
    ) -> str:
        """``LayerNorm(x + skip + bias)`` in one kernel."""
        b, g = self.const(f"{name}.bias", bias), self.const(f"{name}.g", gamma)
        inputs = (x, skip, g, self.const(f"{name}.b", beta), b)
        return self.op("SkipLayerNormalization", *inputs, domain=MS, epsilon=eps)

    def layer_norm(self, x: str, gamma: F32, beta: F32, name: str, eps: float) -> str:
        g, b = self.const(f"{name}.g", gamma), self.const(f"{name}.b", beta)
        return self.op("LayerNormalization", x, g, b, axis=-1, epsilon=eps)


def _layer(g: _Graph, x: str, layer: _Layer, heads: int, eps: float, i: int) -> str:
    """One encoder layer from onnxruntime's fused CPU kernels (com.microsoft domain)."""
    qkv_w, qkv_b = g.const(f"l{i}.qkv.w", layer.qkv_w), g.const(f"l{i}.qkv.b", layer.qkv_b)
    context = g.op("Attention", x, qkv_w, qkv_b, "mask_index", domain=MS, num_heads=heads)
    attended = g.op("MatMul", context, g.const(f"l{i}.o.w", layer.out_w))
    x = g.skip_layer_norm(x, attended, layer.out_b, layer.ln1_g, layer.ln1_b, f"l{i}.ln1", eps)
    up = g.op("MatMul", x, g.const(f"l{i}.up.w", layer.up_w))
    up = g.op("BiasGelu", up, g.const(f"l{i}.up.b", layer.up_b), domain=MS)
    down = g.op("MatMul", up, g.const(f"l{i}.down.w", layer.down_w))
    return g.skip_layer_norm(x, down, layer.down_b, layer.ln2_g, layer.ln2_b, f"l{i}.ln2", eps)


def _embeddings(g: _Graph, weights: BertWeights) -> str:
    words = g.op("Gather", g.const("word", weights.word), "input_ids", axis=0)
    width = g.op("Shape", "input_ids", start=1, end=2)
    positions = g.op("Slice", g.const("position", weights.position), "zero_1d", width, "zero_1d")
    x = g.op("Add", g.op("Add", words, positions), g.const("token_type", weights.token_type[0]))
    return g.layer_norm(x, weights.ln_g, weights.ln_b, "emb.ln", weights.eps)


def _constants(g: _Graph) -> None:
    g.const("zero_1d", np.zeros(1, dtype=np.int64))


def build_model(weights: BertWeights) -> bytes:
    """The encoder as a serialised ONNX model: ``(input_ids, attention_mask) -> hidden``."""
    onnx = _import("onnx")
    g = _Graph(onnx.helper, onnx.numpy_helper)
    _constants(g)
    mask = onnx.helper.make_node(
        "Cast", ["attention_mask"], ["mask_index"], to=onnx.TensorProto.INT32
    )
    g.nodes.append(mask)
    x = _embeddings(g, weights)
    hidden = weights.word.shape[1]
    for i, layer in enumerate(weights.layers):
        x = _layer(g, x, layer, weights.heads, weights.eps, i)
    g.nodes.append(onnx.helper.make_node("Identity", [x], ["hidden"]))
    ids = [
        onnx.helper.make_tensor_value_info(n, onnx.TensorProto.INT64, ["batch", "tokens"])
        for n in ("input_ids", "attention_mask")
    ]
    out = onnx.helper.make_tensor_value_info(
        "hidden", onnx.TensorProto.FLOAT, ["batch", "tokens", hidden]
    )
    graph = onnx.helper.make_graph(g.nodes, "minilm", ids, [out], g.inits)
    opsets = [onnx.helper.make_opsetid("", OPSET), onnx.helper.make_opsetid(MS, 1)]
    model = onnx.helper.make_model(graph, opset_imports=opsets)
    return bytes(model.SerializeToString())


class OnnxEncoder:
    """An onnxruntime session over :func:`build_model`, with explicit thread counts."""

    def __init__(self, weights: BertWeights, threads: int | None) -> None:
        ort = _import("onnxruntime")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0
        options.inter_op_num_threads = 1
        # Idle pool threads sleep instead of spinning: on a small machine a spinning
        # pool steals the cores the store and the agent need between embed calls.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            build_model(weights), options, providers=["CPUExecutionProvider"]
        )

    def __call__(self, ids: I64, mask: I64) -> F32:
        (hidden,) = self._session.run(["hidden"], {"input_ids": ids, "attention_mask": mask})
        result: F32 = hidden
        return result
