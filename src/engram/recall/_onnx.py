"""The same BERT encoder as an ONNX graph built in memory from the safetensors weights.

No torch, no export step, no file written, no download: :func:`build_model`
assembles standard ONNX operators (opset 20) around the arrays of
:class:`~engram.recall._bert.BertWeights`, and :func:`open_session` hands the
serialised graph to onnxruntime, whose optimiser fuses attention, layer norm
and GELU. Needs the ``onnx`` extra (``onnx`` + ``onnxruntime``).

With ``int8=True`` the four matrix products of each layer run in int8:
weights quantised per output channel (symmetric, 7-bit range, which AVX2
without VNNI needs to avoid saturating its 16-bit products), activations
quantised per call (``DynamicQuantizeLinear``) - the layout
``onnxruntime.quantization.quantize_dynamic(per_channel=True, reduce_range=True)``
produces, emitted directly so nothing is written to disk. Those vectors are
close to, not equal to, the float32 ones (see ``MiniLMEmbedder``).
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
_INT8_LEVELS = 64
"""Reduced range: weights in [-64, 64], so u8 x s8 pair sums fit AVX2's int16 lanes."""


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"the onnx runtime needs {module!r}: {_HINT}") from exc


class _Graph:
    """Accumulates nodes and initialisers with generated names."""

    def __init__(self, helper: Any, numpy_helper: Any, *, int8: bool = False) -> None:
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.int8 = int8
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._count = 0

    def const(self, name: str, array: np.ndarray[Any, Any]) -> str:
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, kind: str, *inputs: str, domain: str = "", **attrs: Any) -> str:
        return self.ops(kind, 1, *inputs, domain=domain, **attrs)[0]

    def ops(
        self, kind: str, outputs: int, *inputs: str, domain: str = "", **attrs: Any
    ) -> list[str]:
        self._count += 1
        outs = [f"{kind.lower()}_{self._count}_{i}" for i in range(outputs)]
        node = self.helper.make_node(kind, list(inputs), outs, domain=domain or None, **attrs)
        self.nodes.append(node)
        return outs

    def quantised(self, name: str, matrix: F32) -> tuple[str, str, str]:
        """``(weights, scales, zero points)`` of ``matrix`` in int8, one scale per column."""
        scale = np.maximum(np.abs(matrix).max(axis=0), 1e-12) / _INT8_LEVELS
        q = np.clip(np.rint(matrix / scale), -_INT8_LEVELS, _INT8_LEVELS).astype(np.int8)
        zero = np.zeros(matrix.shape[1], dtype=np.int8)
        scales = scale.astype(np.float32)
        return (
            self.const(f"{name}.q", q),
            self.const(f"{name}.s", scales),
            self.const(f"{name}.z", zero),
        )

    def matmul(self, x: str, matrix: F32, name: str) -> str:
        """``x @ matrix``, in int8 (dynamically quantised ``x``) when the graph is int8."""
        if not self.int8:
            return self.op("MatMul", x, self.const(name, matrix))
        return self.op("DynamicQuantizeMatMul", x, *self.quantised(name, matrix), domain=MS)

    def attention(self, x: str, layer: _Layer, heads: int, name: str) -> str:
        """Self-attention with the fused Q/K/V projection (``QAttention`` when int8)."""
        bias = self.const(f"{name}.b", layer.qkv_b)
        if not self.int8:
            w = self.const(f"{name}.w", layer.qkv_w)
            return self.op("Attention", x, w, bias, "mask_index", domain=MS, num_heads=heads)
        xq, x_scale, x_zero = self.ops("DynamicQuantizeLinear", 3, x)
        w, w_scale, w_zero = self.quantised(f"{name}.w", layer.qkv_w)
        inputs = (xq, w, bias, x_scale, w_scale, "mask_index", x_zero, w_zero)
        return self.op("QAttention", *inputs, domain=MS, num_heads=heads)

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
    context = g.attention(x, layer, heads, f"l{i}.qkv")
    attended = g.matmul(context, layer.out_w, f"l{i}.o.w")
    x = g.skip_layer_norm(x, attended, layer.out_b, layer.ln1_g, layer.ln1_b, f"l{i}.ln1", eps)
    up = g.matmul(x, layer.up_w, f"l{i}.up.w")
    up = g.op("BiasGelu", up, g.const(f"l{i}.up.b", layer.up_b), domain=MS)
    down = g.matmul(up, layer.down_w, f"l{i}.down.w")
    return g.skip_layer_norm(x, down, layer.down_b, layer.ln2_g, layer.ln2_b, f"l{i}.ln2", eps)


def _embeddings(g: _Graph, weights: BertWeights) -> str:
    words = g.op("Gather", g.const("word", weights.word), "input_ids", axis=0)
    width = g.op("Shape", "input_ids", start=1, end=2)
    positions = g.op("Slice", g.const("position", weights.position), "zero_1d", width, "zero_1d")
    x = g.op("Add", g.op("Add", words, positions), g.const("token_type", weights.token_type[0]))
    return g.layer_norm(x, weights.ln_g, weights.ln_b, "emb.ln", weights.eps)


def _constants(g: _Graph) -> None:
    g.const("zero_1d", np.zeros(1, dtype=np.int64))


def build_model(weights: BertWeights, *, int8: bool = False) -> bytes:
    """The encoder as a serialised ONNX model: ``(input_ids, attention_mask) -> hidden``."""
    onnx = _import("onnx")
    g = _Graph(onnx.helper, onnx.numpy_helper, int8=int8)
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
    """An onnxruntime session over :func:`build_model`, with explicit thread counts.

    ``threads`` is the session's intra-op thread count. Calls from several Python
    threads at once are safe and run in parallel (onnxruntime releases the GIL).
    """

    def __init__(self, weights: BertWeights, threads: int | None, *, int8: bool = False) -> None:
        ort = _import("onnxruntime")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0
        options.inter_op_num_threads = 1
        # Idle pool threads sleep instead of spinning: on a small machine a spinning
        # pool steals the cores the store and the agent need between embed calls.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            build_model(weights, int8=int8), options, providers=["CPUExecutionProvider"]
        )

    def __call__(self, ids: I64, mask: I64) -> F32:
        (hidden,) = self._session.run(["hidden"], {"input_ids": ids, "attention_mask": mask})
        result: F32 = hidden
        return result
