"""Writes update the SQLite cold backend's cached matrices in place.

A long-lived store (its matrices cached by earlier searches, then patched by every
write) must answer exactly as a store freshly opened on the same file; an erased
version's vector must leave the cached matrix; writes from another process still
make the cache reload.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.backends.sqlite import _vectors
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore, Scan, View

NAMESPACES = [("t", "u1"), ("t", "u10"), ("t", "u1x"), ("t", "u1", "a"), ("t2", "u1")]
PREFIXES = [(), ("t",), ("t", "u1"), ("t", "u10"), ("t", "u1x"), ("t2",)]
WORDS = ["sail", "lake", "tea", "bike", "rain", "jazz", "chess", "snow"]
EMBEDDER = HashEmbedder(32)


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1)
        return self.now


def _text(words: list[int]) -> str:
    return " ".join(WORDS[w] for w in words)


texts = st.lists(st.integers(0, len(WORDS) - 1), min_size=1, max_size=3).map(_text)
spaces = st.integers(0, len(NAMESPACES) - 1)
keys = st.sampled_from(["k0", "k1", "k2", "k3"])
operations = st.one_of(
    st.tuples(st.just("put"), spaces, keys, texts, st.sampled_from([None, 1.0, 600.0])),
    st.tuples(st.just("many"), spaces, st.lists(texts, min_size=1, max_size=4)),
    st.tuples(st.just("update"), spaces, keys, texts),
    st.tuples(st.just("delete"), spaces, keys),
    st.tuples(st.just("forget"), st.integers(0, len(PREFIXES) - 1), st.booleans()),
    st.tuples(st.just("sweep"), st.integers(1, 120)),
    st.tuples(st.just("search"), st.integers(0, len(PREFIXES) - 1), texts),
)


def _apply(store: LongTermStore, clock: _Clock, step: tuple[Any, ...], serial: int) -> None:
    kind, *args = step
    if kind == "put":
        space, key, text, ttl = args
        store.put(NAMESPACES[space], str(key), {"text": text}, ttl=ttl)
    elif kind == "many":
        space, batch = args
        items = [(NAMESPACES[space], f"m{serial}-{i}", {"text": t}) for i, t in enumerate(batch)]
        store.put_many(items)
    elif kind == "update":
        space, key, text = args
        if store.get(NAMESPACES[space], str(key)) is not None:
            store.update(NAMESPACES[space], str(key), str(text))
    elif kind == "delete":
        space, key = args
        store.delete(NAMESPACES[space], str(key))
    elif kind == "forget":
        prefix, by_key = args
        keys = ["k0", "k1"] if by_key else None
        store.backend.erase(PREFIXES[prefix], keys)
    elif kind == "sweep":
        (minutes,) = args
        clock.now += timedelta(minutes=float(minutes))
        store.sweep()
    elif kind == "search":
        prefix, text = args
        store.backend.vector_candidates(
            _scan(PREFIXES[prefix], clock.now), _query(str(text)), EMBEDDER.model_id, 5
        )


def _scan(prefix: tuple[str, ...], now: datetime, **view: bool) -> Scan:
    return Scan(prefix, View(now, **view), (), ())


def _query(text: str) -> np.ndarray:
    return EMBEDDER.embed([text])[0]


def _answers(backend: SQLiteColdBackend, now: datetime) -> list[object]:
    found: list[object] = []
    for prefix in PREFIXES:
        for flags in ({}, {"include_expired": True}):
            for text in ("sail lake", "tea jazz snow"):
                scan = _scan(prefix, now, **flags)
                found.append(backend.vector_candidates(scan, _query(text), EMBEDDER.model_id, 6))
    return found


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(operations, min_size=1, max_size=25))
def test_a_long_lived_store_answers_as_a_freshly_opened_one(
    steps: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_vectors, "_TAIL", 3)  # extend the int8 pass often
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.db"
        clock = _Clock()
        store = LongTermStore(
            SQLiteColdBackend(path, quantize_from=1), embedder=EMBEDDER, clock=clock
        )
        store.setup()
        try:
            _answers(store.backend, clock.now)
            for serial, step in enumerate(steps):
                _apply(store, clock, step, serial)
                fresh = SQLiteColdBackend(path, quantize_from=None)
                fresh.setup()
                try:
                    assert _answers(store.backend, clock.now) == _answers(fresh, clock.now)
                finally:
                    fresh.close()
        finally:
            store.close()


def _cached_store(path: Path, clock: _Clock) -> tuple[LongTermStore, SQLiteColdBackend]:
    backend = SQLiteColdBackend(path, quantize_from=1)
    store = LongTermStore(backend, embedder=EMBEDDER, clock=clock)
    store.setup()
    store.put_many(
        [(("t", f"u{i % 3}"), f"k{i}", {"text": _text([i % 8, i % 5])}) for i in range(60)]
    )
    return store, backend


def test_a_write_patches_the_cached_matrix_instead_of_dropping_it(tmp_path: Path) -> None:
    clock = _Clock()
    store, backend = _cached_store(tmp_path / "m.db", clock)
    try:
        scan = _scan(("t",), clock.now)
        backend.vector_candidates(scan, _query("sail"), EMBEDDER.model_id, 5)
        matrix = backend._cache[(("t",), EMBEDDER.model_id)]
        store.put(("t", "u1"), "new", {"text": "marmalade on toast"})
        found = backend.vector_candidates(
            _scan(("t",), clock.now), _query("marmalade on toast"), EMBEDDER.model_id, 1
        )
        assert backend._cache[(("t",), EMBEDDER.model_id)] is matrix  # not reloaded
        assert matrix.count == 61
        assert [i for i, _ in found] == [store.get(("t", "u1"), "new").value and matrix.ids[60]]
    finally:
        store.close()


def test_an_erased_vector_leaves_the_cached_matrix(tmp_path: Path) -> None:
    clock = _Clock()
    store, backend = _cached_store(tmp_path / "m.db", clock)
    marker = "zanzibar quokka marmalade"
    try:
        store.put(("t", "u1"), "secret", {"text": marker})
        vector = _query(marker).astype(np.float32)
        scan = _scan(("t",), clock.now)
        assert backend.vector_candidates(scan, vector, EMBEDDER.model_id, 1)[0][1] > 0.99
        matrix = backend._cache[(("t",), EMBEDDER.model_id)]
        assert matrix.nearest.quantized
        codes_before = matrix.nearest._int8.codes.copy()
        store.delete(("t", "u1"), "secret")  # an erase, applied to the cache in place
        assert backend._cache[(("t",), EMBEDDER.model_id)] is matrix
        buffer = matrix.nearest._buffer
        assert not np.any(np.all(buffer == vector, axis=1))  # no copy left in the buffer
        assert not np.any(buffer @ vector > 0.99)
        int8 = matrix.nearest._int8
        gone = [
            c
            for c in range(codes_before.shape[1])
            if not np.array_equal(codes_before[:, c], int8.codes[:, c])
        ]
        assert len(gone) == 1 and not int8.codes[:, gone[0]].any()
        ids = [i for i, _ in backend.vector_candidates(scan, vector, EMBEDDER.model_id, 61)]
        assert len(ids) == 60 and "" not in ids
        assert all(
            score < 0.99
            for _, score in backend.vector_candidates(scan, vector, EMBEDDER.model_id, 5)
        )
    finally:
        store.close()


WRITER = """
import sys
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore
store = LongTermStore(SQLiteColdBackend(sys.argv[1]), embedder=HashEmbedder(32))
store.setup()
store.put(("t", "u1"), "other", {"text": "written by another process"})
store.delete(("t", "u0"), "k0")
store.close()
"""


def test_writes_by_another_process_still_reach_a_patched_cache(tmp_path: Path) -> None:
    clock = _Clock()
    path = tmp_path / "m.db"
    store, backend = _cached_store(path, clock)
    try:
        before = _answers(backend, clock.now)
        store.put(("t", "u2"), "mine", {"text": "sail lake"})  # patched in place
        subprocess.run([sys.executable, "-c", WRITER, str(path)], check=True)
        fresh = SQLiteColdBackend(path)
        fresh.setup()
        try:
            now = datetime.now(UTC) + timedelta(seconds=1)  # the writer used the real clock
            assert _answers(backend, now) == _answers(fresh, now) != before
            query = _query("written by another process")
            found = backend.vector_candidates(_scan(("t",), now), query, EMBEDDER.model_id, 1)
            assert [i for i, _ in found] == [fresh.heads(("t", "u1"), ["other"])["other"].id]
        finally:
            fresh.close()
    finally:
        store.close()
