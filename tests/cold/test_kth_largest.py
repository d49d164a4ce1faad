"""The selection behind the exact vector search's cut: the same value as np.partition
on every kind of score list (ties, -inf, NaN, sorted), without its slowdown on ties."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from engram.backends.sqlite._vectors import SELECT_DIRECT, kth_largest

F32 = npt.NDArray[np.float32]


def _scores(kind: str, n: int, rng: np.random.Generator) -> F32:
    if kind == "continuous":
        return rng.standard_normal(n).astype(np.float32)
    if kind == "sparse":  # a sparse embedder: most rows share no word with the query
        v = np.zeros(n, np.float32)
        hit = rng.choice(n, int(rng.integers(0, n + 1)), replace=False)
        v[hit] = rng.random(len(hit))
        return v - np.float32(1e-5)
    if kind == "few values":
        return np.round(rng.standard_normal(n) * 2).astype(np.float32)
    if kind == "two values":
        v = np.full(n, 0.25, np.float32)
        v[: int(rng.integers(0, n + 1))] = 0.75
        return v
    if kind == "masked":  # rows outside the prefix at -inf
        v = rng.standard_normal(n).astype(np.float32)
        v[rng.random(n) < 0.6] = -np.inf
        return v
    if kind == "ascending":  # the best rows all in the last chunks
        return np.sort(rng.standard_normal(n)).astype(np.float32)
    if kind == "descending":
        return np.sort(rng.standard_normal(n))[::-1].astype(np.float32).copy()
    v = rng.standard_normal(n).astype(np.float32)  # "nan"
    v[rng.integers(0, n)] = np.nan
    return v


KINDS = ["continuous", "sparse", "few values", "two values", "masked", "ascending",
         "descending", "nan"]  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_the_kth_largest_is_what_partition_gives(kind: str) -> None:
    rng = np.random.default_rng(sum(map(ord, kind)))
    for trial in range(60):
        n = int(rng.integers(1, 300)) if trial % 3 == 0 else int(rng.integers(1, 40_000))
        values = _scores(kind, n, rng)
        count = int(rng.integers(1, min(n, 60) + 1)) if trial % 2 else int(rng.integers(1, n + 1))
        want = np.partition(values, n - count)[n - count]
        got = kth_largest(values, count)
        assert got == want or (np.isnan(got) and np.isnan(want)), (kind, n, count)


def test_a_mass_of_ties_is_narrowed_before_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a million sparse scores the value is found from at most a few thousand of them
    (np.partition over all of them is what slows down on ties)."""
    rng = np.random.default_rng(3)
    values = _scores("sparse", 1_000_000, rng)
    sizes: list[int] = []
    partition = np.partition

    def counted(a: F32, kth: int) -> F32:
        sizes.append(len(a))
        return partition(a, kth)

    monkeypatch.setattr(np, "partition", counted)
    got = kth_largest(values, 50)
    monkeypatch.undo()
    assert got == np.partition(values, len(values) - 50)[len(values) - 50]
    assert sizes and max(sizes) <= max(SELECT_DIRECT, 8 * 50 + 1)
