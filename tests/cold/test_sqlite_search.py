"""SQLite cold search returns exactly what scoring every row returns.

The first passes of ``engram.backends.sqlite._vectors`` (int8 or float32) only
prune: these tests pin that the rows, their order (best first, ties by id) and
their scores are those of scoring every row (float64, rounded to float32), on
random, clustered and tied vectors, with and without masks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from engram.backends.sqlite import _index_file, _vectors
from engram.backends.sqlite._vectors import NearestRows
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import normalise
from engram.stores.cold import LongTermStore, Scan, View

F32 = npt.NDArray[np.float32]


@pytest.fixture(autouse=True)
def _int8_runtime(unavailable: Callable[[str], None]) -> None:
    """The int8 pass needs onnxruntime: without it these tests would pass on the float32
    path alone, so they skip locally and fail under CI."""
    if _vectors._onnxruntime() is None:
        unavailable("capability: onnxruntime (the int8 pass) missing")


def _unit(rng: np.random.Generator, n: int, dim: int) -> F32:
    return normalise(rng.standard_normal((n, dim)))


def _clustered(rng: np.random.Generator, n: int, dim: int) -> F32:
    """Rows near a few centres, with one large component (as sentence embeddings have)."""
    centres = _unit(rng, 8, dim)
    rows = centres[rng.integers(0, 8, n)] + 0.15 * rng.standard_normal((n, dim))
    rows[:, 3] += 0.8
    return normalise(rows)


def _reference(
    vectors: F32, query: F32, allowed: npt.NDArray[np.bool_] | None, k: int
) -> list[int]:
    """Top ``k`` allowed rows of a full scan, best first, ties by row number."""
    scores = _scores(vectors, query)
    rows = np.arange(len(vectors)) if allowed is None else np.flatnonzero(allowed)
    order = np.lexsort((rows, -scores[rows]))
    return [int(r) for r in rows[order][:k]]


def _scores(vectors: F32, query: F32) -> F32:
    """Every row's score: float64 dot products rounded to float32."""
    return np.asarray(np.einsum("ij,j->i", vectors, query, dtype=np.float64), dtype=np.float32)


def _top(
    nearest: NearestRows, query: F32, allowed: npt.NDArray[np.bool_] | None, k: int
) -> list[int]:
    rows, scores = nearest.candidates(query, allowed, k)
    order = np.lexsort((rows, -scores))
    return [int(r) for r in rows[order][:k]]


@pytest.mark.parametrize("shape", ["random", "clustered"])
@pytest.mark.parametrize("dim", [64, 384])
def test_the_int8_pass_keeps_every_row_of_the_exact_top_k(shape: str, dim: int) -> None:
    rng = np.random.default_rng(dim)
    vectors = (_unit if shape == "random" else _clustered)(rng, 6000, dim)
    quantized = NearestRows(vectors, quantize_from=1)
    plain = NearestRows(vectors, quantize_from=None)
    queries = [*_unit(rng, 20, dim), *vectors[:5], *(vectors[5:10] * 0.5)]  # incl. non-unit
    for i, query in enumerate(queries):
        allowed = None if i % 3 else rng.random(len(vectors)) < 0.3
        for k in (1, 10, 50):
            want = _reference(vectors, query, allowed, k)
            assert _top(quantized, query, allowed, k) == want
            assert _top(plain, query, allowed, k) == want
    assert quantized.quantized  # the int8 pass really ran
    assert not plain.quantized


def test_the_int8_pass_prunes_most_rows() -> None:
    rng = np.random.default_rng(1)
    vectors = _clustered(rng, 20_000, 384)
    nearest = NearestRows(vectors, quantize_from=1)
    counts = [len(nearest.candidates(q, None, 50)[0]) for q in vectors[:20]]
    assert max(counts) < len(vectors) // 10


def test_scores_are_the_float32_scores() -> None:
    rng = np.random.default_rng(2)
    vectors = _unit(rng, 3000, 384)
    query = _unit(rng, 1, 384)[0]
    rows, scores = NearestRows(vectors, quantize_from=1).candidates(query, None, 20)
    assert scores.dtype == np.float32
    np.testing.assert_allclose(scores, vectors[rows] @ query, rtol=0, atol=1e-6)


@pytest.mark.parametrize("slice_bytes", [8 * 384, 8 * 384 * 7, 1 << 20, 1 << 30])
def test_rescoring_in_slices_gives_each_row_its_one_product_score(
    monkeypatch: pytest.MonkeyPatch, slice_bytes: int
) -> None:
    """Slices of one row, of 7 rows (the last one short), the default and one slice:
    every selected row, in the given order, gets the float64 product of the whole
    selection rounded to float32, bit for bit (repeated and unsorted rows included)."""
    monkeypatch.setattr(_vectors, "EXACT_BYTES", slice_bytes)
    rng = np.random.default_rng(4)
    vectors = _unit(rng, 3000, 384)
    query = _unit(rng, 1, 384)[0]
    rows = np.concatenate([rng.permutation(3000)[:2500], [5, 5, 2999, 0]])
    want = (vectors[rows].astype(np.float64) @ query.astype(np.float64)).astype(np.float32)
    got = _vectors.exact_scores(vectors, rows, query)
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    assert len(_vectors.exact_scores(vectors, rows[:0], query)) == 0


def test_tied_rows_are_cut_by_id_and_masks_apply() -> None:
    rng = np.random.default_rng(3)
    base = _unit(rng, 50, 32)
    vectors = np.repeat(base, 40, axis=0)  # every score appears 40 times
    nearest = NearestRows(vectors, quantize_from=1)
    allowed = np.arange(len(vectors)) % 7 != 0
    for query in base[:5]:
        assert _top(nearest, query, allowed, 30) == _reference(vectors, query, allowed, 30)
    nothing = np.zeros(len(vectors), dtype=bool)
    assert len(nearest.candidates(base[0], nothing, 10)[0]) == 0
    assert _top(nearest, np.zeros(32, dtype=np.float32), None, 5) == [0, 1, 2, 3, 4]


class _TableEmbedder:
    """Fixed vectors for known texts (clustered, like sentence embeddings)."""

    model_id = "test-table"
    dim = 48

    def __init__(self, texts: Sequence[str]) -> None:
        rows = _clustered(np.random.default_rng(5), len(texts) + 40, self.dim)
        self.table = {t: rows[i] for i, t in enumerate(texts)}
        self.extra = rows[len(texts) :]

    def embed(self, texts: Sequence[str]) -> F32:
        return np.stack([self.table.get(t, self.extra[hash(t) % 40]) for t in texts])


@pytest.mark.parametrize("prefix", [("t",), ("t", "u3")])
def test_backend_search_is_the_same_with_and_without_the_int8_pass(
    tmp_path: Path, prefix: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_index_file, "BLOCK", 128)  # sealed blocks at 1,500 rows
    texts = [f"fact {i} about topic {i % 13}" for i in range(1500)]
    embedder = _TableEmbedder(texts)
    path = tmp_path / "m.db"
    store = LongTermStore(SQLiteColdBackend(path), embedder=embedder)
    store.setup()
    store.put_many([(("t", f"u{i % 7}"), f"k{i}", {"text": t}) for i, t in enumerate(texts)])
    store.close()
    fast, slow = (
        SQLiteColdBackend(path, quantize_from=1),
        SQLiteColdBackend(path, quantize_from=None),
    )
    for backend in (fast, slow):
        backend.setup()
    try:
        scan = Scan(prefix, View(datetime.now(UTC)), (), ())
        for query in embedder.extra[:10]:
            got = fast.vector_candidates(scan, query, embedder.model_id, 25)
            want = slow.vector_candidates(scan, query, embedder.model_id, 25)
            assert [i for i, _ in got] == [i for i, _ in want]
            assert got == want
            assert len(got) == 25
        assert fast._indexes[embedder.model_id].sessions  # the int8 pass ran
    finally:
        fast.close()
        slow.close()
