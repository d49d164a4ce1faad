"""The same BERT encoder as an ONNX graph built in memory from the safetensors weights.

No torch, no export step, no file written, no download: :func:`build_model`
assembles standard ONNX operators (opset 20) around the arrays of
:class:`~engram.recall._bert.BertWeights`, and :func:`open_session` hands the
serialised graph to onnxruntime, whose optimiser fuses attention, layer norm
and GELU. Needs the ``onnx`` extra (``onnx`` + ``onnxruntime``).

Given an :class:`~engram.recall._int8.Int8Plan`, the matrix products it names
run in int8 (see that module): each token row of activations is quantised on
its own, so a text's vector does not depend on the batch it is embedded in.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from engram.errors import MissingDependencyError
from engram.recall._bert import F32, I64, BertWeights, _Layer
from engram.recall._int8 import GELU_SHIFT, Int8Plan, Int8Product

OPSET = 20
MS = "com.microsoft"
"""onnxruntime's contrib operators: fused attention, skip layer norm, bias GELU."""
_HINT = "pip install 'engram[onnx]'"
_TAPS = ("qkv", "up", "down")
"""Matrix products whose inputs :func:`build_model` can expose (``taps=True``) for calibration."""


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"the onnx runtime needs {module!r}: {_HINT}") from exc


class _Graph:
    """Accumulates nodes and initialisers with generated names."""

    def __init__(self, helper: Any, numpy_helper: Any, plan: Int8Plan | None = None) -> None:
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.plan = plan
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.taps: list[str] = []
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

    def product(self, name: str, matrix: F32, shift: float = 0.0) -> Int8Product | None:
        """The int8 form of ``matrix`` if the plan quantises product ``name``, else ``None``."""
        return None if self.plan is None else self.plan.product(name, matrix, shift)

    def matmul(self, x: str, matrix: F32, name: str, q: Int8Product | None) -> str:
        """``x @ matrix``: float32, or int8 with one activation scale per token row."""
        if q is None:
            return self.op("MatMul", x, self.const(name, matrix))
        if q.shift:
            x = self.op("Add", x, self.const(f"{name}.shift", np.array(q.shift, np.float32)))
        if q.inverse_smoothing is not None:
            x = self.op("Mul", x, self.const(f"{name}.smooth", q.inverse_smoothing))
        axes = self.const(f"{name}.axes", np.array([-1], np.int64))
        peak = self.op("ReduceMax", x if q.shift else self.op("Abs", x), axes, keepdims=1)
        peak = self.op("Max", peak, self.const(f"{name}.tiny", np.array(1e-12, np.float32)))
        step = self.const(f"{name}.step", np.array(1.0 / q.levels, np.float32))
        zero = self.const(f"{name}.zero", np.array(q.zero_point, np.uint8))
        codes = self.op("QuantizeLinear", self.op("Div", x, peak), step, zero)
        weights = (self.const(f"{name}.q", q.codes), self.const(f"{name}.s", q.scales))
        w_zero = self.const(f"{name}.z", np.zeros(q.codes.shape[1], np.int8))
        inputs = (codes, weights[0], step, weights[1], zero, w_zero)
        return self.op("Mul", self.op("MatMulIntegerToFloat", *inputs, domain=MS), peak)

    def attention(self, x: str, layer: _Layer, heads: int, name: str) -> str:
        """Self-attention; int8 Q/K/V projections feed ``MultiHeadAttention``."""
        bias = self.const(f"{name}.b", layer.qkv_b)
        q = self.product(name, layer.qkv_w)
        if q is None:
            w = self.const(f"{name}.w", layer.qkv_w)
            return self.op("Attention", x, w, bias, "mask_index", domain=MS, num_heads=heads)
        qkv = self.matmul(x, layer.qkv_w, f"{name}.w", q)
        thirds = self.const(f"{name}.split", np.full(3, layer.qkv_w.shape[1] // 3, np.int64))
        query, key, value = self.ops("Split", 3, qkv, thirds, axis=-1)
        inputs = (query, key, value, bias, "mask_index")
        return self.op("MultiHeadAttention", *inputs, domain=MS, num_heads=heads)

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
    g.taps.append(x)
    context = g.attention(x, layer, heads, f"l{i}.qkv")
    out = g.product(f"l{i}.o", layer.out_w)
    attended = g.matmul(context, layer.out_w, f"l{i}.o.w", out)
    x = g.skip_layer_norm(x, attended, layer.out_b, layer.ln1_g, layer.ln1_b, f"l{i}.ln1", eps)
    g.taps.append(x)
    up = g.matmul(x, layer.up_w, f"l{i}.up.w", g.product(f"l{i}.up", layer.up_w))
    up = g.op("BiasGelu", up, g.const(f"l{i}.up.b", layer.up_b), domain=MS)
    g.taps.append(up)
    down_q = g.product(f"l{i}.down", layer.down_w, GELU_SHIFT)
    down = g.matmul(up, layer.down_w, f"l{i}.down.w", down_q)
    down_b = layer.down_b if down_q is None else layer.down_b - down_q.correction
    return g.skip_layer_norm(x, down, down_b, layer.ln2_g, layer.ln2_b, f"l{i}.ln2", eps)


def _embeddings(g: _Graph, weights: BertWeights) -> str:
    words = g.op("Gather", g.const("word", weights.word), "input_ids", axis=0)
    width = g.op("Shape", "input_ids", start=1, end=2)
    positions = g.op("Slice", g.const("position", weights.position), "zero_1d", width, "zero_1d")
    x = g.op("Add", g.op("Add", words, positions), g.const("token_type", weights.token_type[0]))
    return g.layer_norm(x, weights.ln_g, weights.ln_b, "emb.ln", weights.eps)


def tap_names(layers: int) -> list[str]:
    """Names of the products whose inputs a ``taps=True`` model outputs, in output order."""
    return [f"l{i}.{kind}" for i in range(layers) for kind in _TAPS]


def build_model(weights: BertWeights, *, int8: Int8Plan | None = None, taps: bool = False) -> bytes:
    """The encoder as a serialised ONNX model: ``(input_ids, attention_mask) -> hidden``.

    ``int8`` quantises the products its plan names; ``taps`` adds one output per
    entry of :func:`tap_names` (the input of that product) for calibration.
    """
    onnx = _import("onnx")
    g = _Graph(onnx.helper, onnx.numpy_helper, int8)
    g.const("zero_1d", np.zeros(1, dtype=np.int64))
    mask = onnx.helper.make_node(
        "Cast", ["attention_mask"], ["mask_index"], to=onnx.TensorProto.INT32
    )
    g.nodes.append(mask)
    x = _embeddings(g, weights)
    for i, layer in enumerate(weights.layers):
        x = _layer(g, x, layer, weights.heads, weights.eps, i)
    g.nodes.append(onnx.helper.make_node("Identity", [x], ["hidden"]))
    ids = [
        onnx.helper.make_tensor_value_info(n, onnx.TensorProto.INT64, ["batch", "tokens"])
        for n in ("input_ids", "attention_mask")
    ]
    names = ["hidden"] + (tap_names(len(weights.layers)) if taps else [])
    for tensor, name in zip(g.taps if taps else [], names[1:], strict=True):
        g.nodes.append(onnx.helper.make_node("Identity", [tensor], [name]))
    outputs = [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in names]
    graph = onnx.helper.make_graph(g.nodes, "minilm", ids, outputs, g.inits)
    opsets = [onnx.helper.make_opsetid("", OPSET), onnx.helper.make_opsetid(MS, 1)]
    model = onnx.helper.make_model(graph, opset_imports=opsets)
    return bytes(model.SerializeToString())


def open_session(model: bytes, threads: int | None) -> Any:
    """An onnxruntime CPU session over ``model`` with explicit thread counts."""
    ort = _import("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or 0
    options.inter_op_num_threads = 1
    # Idle pool threads sleep instead of spinning: on a small machine a spinning
    # pool steals the cores the store and the agent need between embed calls.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def channel_peaks(weights: BertWeights, ids: I64, mask: I64) -> dict[str, F32]:
    """Per-channel max ``|x|`` of every tapped product's input over the real tokens of a batch."""
    session = open_session(build_model(weights, taps=True), 1)
    names = tap_names(len(weights.layers))
    values = session.run(names, {"input_ids": ids, "attention_mask": mask})
    real = mask.astype(bool)
    return {name: np.abs(v[real]).max(axis=0) for name, v in zip(names, values, strict=True)}


class OnnxEncoder:
    """An onnxruntime session over :func:`build_model`, with explicit thread counts.

    ``threads`` is the session's intra-op thread count. Calls from several Python
    threads at once are safe and run in parallel (onnxruntime releases the GIL).
    """

    def __init__(
        self, weights: BertWeights, threads: int | None, *, int8: Int8Plan | None = None
    ) -> None:
        self._session = open_session(build_model(weights, int8=int8), threads)

    def __call__(self, ids: I64, mask: I64) -> F32:
        (hidden,) = self._session.run(["hidden"], {"input_ids": ids, "attention_mask": mask})
        result: F32 = hidden
        return result
