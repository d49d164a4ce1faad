from __future__ import annotations

import numpy as np

from engram.recall import Embedder, HashEmbedder


def test_hash_embedder_is_deterministic_unit_and_lexical() -> None:
    emb = HashEmbedder(dim=64)
    assert isinstance(emb, Embedder)
    a, b, c = emb.embed(["NVDA risk tolerance", "risk tolerance NVDA", "weather in Paris"])
    assert np.allclose(np.linalg.norm([a, b, c], axis=1), 1.0, atol=1e-5)
    assert float(a @ b) > 0.99 > float(a @ c)
    assert np.array_equal(emb.embed(["NVDA risk tolerance"])[0], a)
    assert emb.embed([]).shape == (0, 64)
