"""The int8 runtime: per-row activations, smoothing, pair-safe weights (engram.recall._int8)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from engram.recall import MiniLMEmbedder, _local
from engram.recall._int8 import GELU_SHIFT, Int8Plan, pair_safe_codes

TEXTS = [
    "Thanks!",
    "ok",
    "I prefer conservative risk",
    "Yoohoo! Hope you have a wonderful time at the concert tonight.",
    "babisutu bebegita sare betuzag kolimara",
    "My name is Alice and I live in Paris; I follow AMD, TSMC and ASML.",
    "Ünïcødé naïve café — 東京の株式市場 🚀📈",
    " ".join(f"Quarter {i}: revenue grew while margins compressed slightly." for i in range(40)),
]


@pytest.fixture(scope="module")
def reference() -> Any:
    st = pytest.importorskip("sentence_transformers")
    model = st.SentenceTransformer(str(_local.locate_model_dir()), device="cpu")
    return model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)


@pytest.fixture(scope="module")
def int8() -> MiniLMEmbedder:
    return MiniLMEmbedder(runtime="onnx-int8", threads=1, batch_size=8)


def test_int8_vectors_are_close_to_sentence_transformers(
    int8: MiniLMEmbedder, reference: Any
) -> None:
    cosines = (int8.embed(TEXTS) * reference).sum(axis=1)
    # Over 1,658 varied texts: min 0.9944, mean 0.9991 (README, Embeddings).
    assert cosines.min() >= 0.985 and cosines.mean() >= 0.995, cosines.round(4)
    assert cosines.min() < 0.9999  # really int8: not the float32 graph


def test_a_text_gets_the_same_vector_in_any_batch(int8: MiniLMEmbedder) -> None:
    together = int8.embed(TEXTS)
    small_batches = MiniLMEmbedder(runtime="onnx-int8", threads=2, batch_size=3).embed(TEXTS[::-1])
    for i, text in enumerate(TEXTS):
        alone = int8.embed([text])[0]
        assert float(alone @ together[i]) > 0.99999, text
        assert float(small_batches[len(TEXTS) - 1 - i] @ together[i]) > 0.99999, text


def _exact_and_onnx(codes: Any, activations: Any) -> tuple[Any, Any]:
    """``activations @ codes`` exactly and through onnxruntime's uint8 x int8 kernel."""
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        numpy_helper.from_array(codes, "w"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.ones(codes.shape[1], np.float32), "ones"),
        numpy_helper.from_array(np.array(0, np.uint8), "az"),
        numpy_helper.from_array(np.zeros(codes.shape[1], np.int8), "wz"),
    ]
    node = helper.make_node(
        "MatMulIntegerToFloat", ["x", "w", "one", "ones", "az", "wz"], ["y"], domain="com.microsoft"
    )
    x = helper.make_tensor_value_info("x", TensorProto.UINT8, ["m", codes.shape[0]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", codes.shape[1]])
    graph = helper.make_graph([node], "g", [x], [y], inits)
    opsets = [helper.make_opsetid("", 20), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets).SerializeToString()
    import onnxruntime as ort

    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    exact = activations.astype(np.int64) @ codes.astype(np.int64)
    return exact, session.run(None, {"x": activations})[0]


INT16_MAX = 2**15 - 1


def _extreme_pair_sums(codes: Any) -> tuple[Any, Any]:
    """Largest and smallest ``a_k q_k + a_k+1 q_k+1`` over every uint8 activation pair.

    onnxruntime's AVX2 uint8 x int8 kernel adds these two products in one signed 16-bit
    lane before widening (VNNI kernels add them in 32 bits); this is the arithmetic
    alone, so the check holds, and can fail, the same on every CPU.
    """
    wide = codes.astype(np.int64)
    even, odd = wide[0::2], wide[1::2]
    high = 255 * (np.maximum(even, 0) + np.maximum(odd, 0))
    low = 255 * (np.minimum(even, 0) + np.minimum(odd, 0))
    return high, low


@pytest.fixture(scope="module")
def up_weights() -> Any:
    return _local.BertWeights.load(_local.locate_model_dir()).layers[0].up_w[:, :256]


def test_pair_safe_codes_keep_every_pair_sum_inside_int16(up_weights: Any) -> None:
    codes, _ = pair_safe_codes(up_weights)
    high, low = _extreme_pair_sums(codes)
    assert high.max() <= INT16_MAX and low.min() >= -INT16_MAX - 1
    # The usual full-range int8 codes break the bound: the check above can fail.
    full = np.clip(np.rint(up_weights / (np.abs(up_weights).max(axis=0) / 127)), -127, 127)
    assert _extreme_pair_sums(full.astype(np.int8))[0].max() > INT16_MAX


def test_pair_safe_codes_use_the_range_the_bound_allows(up_weights: Any) -> None:
    codes, scales = pair_safe_codes(up_weights)
    wide = np.abs(codes.astype(np.int64))
    same_sign = np.sign(codes[0::2]) == np.sign(codes[1::2])
    pairs = np.where(same_sign, wide[0::2] + wide[1::2], np.maximum(wide[0::2], wide[1::2]))
    widest = np.maximum(pairs.max(axis=0), wide.max(axis=0))
    assert widest.min() >= 126 and widest.max() <= 128  # 127 steps, up to one of rounding
    # Within half a step of the float weights, column by column.
    error = np.abs(codes.astype(np.float32) * scales - up_weights)
    assert np.all(error <= scales / 2 + 1e-7)


def test_the_int8_kernel_multiplies_pair_safe_codes_exactly(up_weights: Any) -> None:
    codes, _ = pair_safe_codes(up_weights)
    # Per column, the activations that push its pair sums to either extreme, plus noise.
    positive = np.where(codes.T > 0, 255, 0)
    negative = np.where(codes.T < 0, 255, 0)
    noise = np.random.default_rng(0).integers(0, 256, size=(16, codes.shape[0]))
    activations = np.concatenate([positive, negative, noise]).astype(np.uint8)
    exact, got = _exact_and_onnx(codes, activations)
    assert np.array_equal(got.astype(np.int64), exact)
    assert np.abs(exact).max() > INT16_MAX  # totals leave int16: only the pairs must not


def test_plan_keeps_named_products_in_float_and_corrects_the_shift() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((64, 8)).astype(np.float32)
    plan = Int8Plan({"l0.down": np.abs(rng.standard_normal(64)).astype(np.float32) + 0.1})
    assert Int8Plan(keep_float=frozenset({"l0.down"})).product("l0.down", matrix) is None
    q = plan.product("l0.down", matrix, GELU_SHIFT)
    assert q is not None and q.levels == 255 and q.zero_point == 0
    assert q.inverse_smoothing is not None
    x = rng.standard_normal((5, 64)).astype(np.float32)
    effective = q.codes.astype(np.float32) * q.scales * q.inverse_smoothing[:, None]
    shifted = ((x + GELU_SHIFT) * q.inverse_smoothing) @ (q.codes * q.scales) - q.correction
    assert np.allclose(shifted, x @ effective, atol=1e-4)
    half_step = (q.scales / 2)[None, :] * q.inverse_smoothing[:, None]
    assert np.all(np.abs(effective - matrix) <= half_step + 1e-6)
