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


def test_recent_embeddings_are_the_inner_vectors_bounded_and_cleared() -> None:
    from engram.recall import RecentEmbeddings

    inner = HashEmbedder()
    recent = RecentEmbeddings(inner, size=2)
    texts = ["alpha beta", "gamma", "alpha beta", "delta"]
    assert np.array_equal(recent.embed(texts), inner.embed(texts))
    assert recent.embed([]).shape == (0, inner.dim)
    assert (recent.model_id, recent.dim) == (inner.model_id, inner.dim)
    assert recent.clear() == 2 and recent.clear() == 0
