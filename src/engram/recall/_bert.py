"""The BERT encoder of all-MiniLM-L6-v2 as a numpy forward pass (no torch).

Weights are read from ``model.safetensors`` and pre-arranged once: matrices
transposed to ``(in, out)``, query/key/value fused into one matrix so each layer
is four matrix products on a ``(tokens, hidden)`` block.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights, pre-transposed to ``(in, out)`` and Q/K/V fused."""

    qkv_w: F32
    qkv_b: F32
    out_w: F32
    out_b: F32
    ln1_g: F32
    ln1_b: F32
    up_w: F32
    up_b: F32
    down_w: F32
    down_b: F32
    ln2_g: F32
    ln2_b: F32


@dataclass(frozen=True)
class BertWeights:
    """The encoder's tensors as contiguous float32 arrays."""

    word: F32
    position: F32
    token_type: F32
    ln_g: F32
    ln_b: F32
    layers: tuple[_Layer, ...]
    heads: int
    eps: float

    @classmethod
    def load(cls, model_dir: Path) -> BertWeights:
        config = json.loads((model_dir / "config.json").read_text())
        st_numpy = importlib.import_module("safetensors.numpy")
        raw: dict[str, F32] = st_numpy.load_file(str(model_dir / "model.safetensors"))
        layers = tuple(
            _load_layer(raw, f"encoder.layer.{i}.") for i in range(config["num_hidden_layers"])
        )
        return cls(
            word=raw["embeddings.word_embeddings.weight"],
            position=raw["embeddings.position_embeddings.weight"],
            token_type=raw["embeddings.token_type_embeddings.weight"],
            ln_g=raw["embeddings.LayerNorm.weight"],
            ln_b=raw["embeddings.LayerNorm.bias"],
            layers=layers,
            heads=int(config["num_attention_heads"]),
            eps=float(config["layer_norm_eps"]),
        )


def _t(matrix: F32) -> F32:
    return np.ascontiguousarray(matrix.T, dtype=np.float32)


def _load_layer(raw: dict[str, F32], prefix: str) -> _Layer:
    att = prefix + "attention."
    qkv = [raw[f"{att}self.{name}.weight"] for name in ("query", "key", "value")]
    qkv_b = [raw[f"{att}self.{name}.bias"] for name in ("query", "key", "value")]
    return _Layer(
        qkv_w=_t(np.concatenate(qkv, axis=0)),
        qkv_b=np.concatenate(qkv_b).astype(np.float32),
        out_w=_t(raw[f"{att}output.dense.weight"]),
        out_b=raw[f"{att}output.dense.bias"],
        ln1_g=raw[f"{att}output.LayerNorm.weight"],
        ln1_b=raw[f"{att}output.LayerNorm.bias"],
        up_w=_t(raw[f"{prefix}intermediate.dense.weight"]),
        up_b=raw[f"{prefix}intermediate.dense.bias"],
        down_w=_t(raw[f"{prefix}output.dense.weight"]),
        down_b=raw[f"{prefix}output.dense.bias"],
        ln2_g=raw[f"{prefix}output.LayerNorm.weight"],
        ln2_b=raw[f"{prefix}output.LayerNorm.bias"],
    )


def _layer_norm(x: F32, gamma: F32, beta: F32, eps: float) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    x = x - mean
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    x *= 1.0 / np.sqrt(var + eps)
    x *= gamma
    x += beta
    return x


# Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, below float32 rounding of the activations.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(
    np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)


def gelu(x: F32) -> F32:
    """BERT's exact (erf) GELU, in place: ``x * (1 + erf(x / sqrt 2)) / 2``."""
    z = np.abs(x) * np.float32(0.7071067811865476)
    t = 1.0 / (1.0 + _ERF_P * z)
    poly = np.full_like(t, _ERF_A[0])
    for coeff in _ERF_A[1:]:
        poly *= t
        poly += coeff
    poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # poly = 1 - erf(|x| / sqrt 2)
    # x * (1 + erf(x/√2)) / 2 = max(x, 0) - |x|·poly/2 for either sign of x.
    poly *= np.abs(x)
    poly *= 0.5
    np.maximum(x, 0.0, out=x)
    return np.subtract(x, poly, out=x)


def _attention(x: F32, layer: _Layer, bias: F32, heads: int) -> F32:
    batch, width, hidden = x.shape
    size = hidden // heads
    qkv = x.reshape(-1, hidden) @ layer.qkv_w
    qkv += layer.qkv_b
    qkv = qkv.reshape(batch, width, 3, heads, size).transpose(2, 0, 3, 1, 4)
    scores = qkv[0] @ qkv[1].transpose(0, 1, 3, 2)
    scores *= np.float32(1.0 / np.sqrt(size))
    scores += bias
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    context = (scores @ qkv[2]).transpose(0, 2, 1, 3).reshape(-1, hidden)
    out = context @ layer.out_w
    out += layer.out_b
    result: F32 = out.reshape(batch, width, hidden)
    return result


def _feed_forward(x: F32, layer: _Layer) -> F32:
    shape = x.shape
    up = x.reshape(-1, shape[-1]) @ layer.up_w
    up += layer.up_b
    down = gelu(up) @ layer.down_w
    down += layer.down_b
    return down.reshape(shape)


def forward(weights: BertWeights, ids: I64, mask: I64) -> F32:
    """Last hidden states ``(batch, tokens, hidden)`` for right-padded ``ids``."""
    width = ids.shape[1]
    x = weights.word[ids] + weights.position[:width] + weights.token_type[0]
    x = _layer_norm(x, weights.ln_g, weights.ln_b, weights.eps)
    bias = ((1 - mask[:, None, None, :]) * np.float32(-1e9)).astype(np.float32)
    for layer in weights.layers:
        x = _layer_norm(
            x + _attention(x, layer, bias, weights.heads), layer.ln1_g, layer.ln1_b, weights.eps
        )
        x = _layer_norm(x + _feed_forward(x, layer), layer.ln2_g, layer.ln2_b, weights.eps)
    return x


class NumpyEncoder:
    """:func:`forward` with the BLAS thread count capped (``threadpoolctl``) while it runs."""

    def __init__(self, weights: BertWeights, threads: int | None) -> None:
        self._weights = weights
        self._threads = threads
        self._controller: Any = None
        if threads:
            self._controller = importlib.import_module("threadpoolctl").ThreadpoolController()

    def __call__(self, ids: I64, mask: I64) -> F32:
        if self._controller is None:
            return forward(self._weights, ids, mask)
        with self._controller.limit(limits=self._threads, user_api="blas"):
            return forward(self._weights, ids, mask)
