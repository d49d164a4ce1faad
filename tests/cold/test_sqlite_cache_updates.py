"""Writes update the SQLite cold backend's vector index in place.

A long-lived store (its index state built by earlier searches, then patched by
every write) must answer exactly as a store freshly opened on the same file; an
erased version's vector must leave the index files and the process's int8
sessions; writes from another process reach it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cold_support import Clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.backends.sqlite import _index_file, _index_search
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore, Scan, View

NAMESPACES = [("t", "u1"), ("t", "u10"), ("t", "u1x"), ("t", "u1", "a"), ("t2", "u1")]
PREFIXES = [(), ("t",), ("t", "u1"), ("t", "u10"), ("t", "u1x"), ("t2",)]
WORDS = ["sail", "lake", "tea", "bike", "rain", "jazz", "chess", "snow"]
EMBEDDER = HashEmbedder(32)


@pytest.fixture(autouse=True)
def _block_size_restored() -> Iterator[None]:
    block = _index_file.BLOCK
    yield
    _index_file.BLOCK = block


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


def _apply(store: LongTermStore, clock: Clock, step: tuple[Any, ...], serial: int) -> None:
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
    monkeypatch.setattr(_index_file, "BLOCK", 4)  # many sealed blocks and patches
    monkeypatch.setattr(_index_search, "PATCH_LIMIT", 2)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.db"
        clock = Clock()
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


def _cached_store(path: Path, clock: Clock) -> tuple[LongTermStore, SQLiteColdBackend]:
    _index_file.BLOCK = 16  # (put back by the autouse fixture)
    backend = SQLiteColdBackend(path, quantize_from=1)
    store = LongTermStore(backend, embedder=EMBEDDER, clock=clock)
    store.setup()
    store.put_many(
        [(("t", f"u{i % 3}"), f"k{i}", {"text": _text([i % 8, i % 5])}) for i in range(60)]
    )
    return store, backend


def test_a_write_patches_the_index_state_instead_of_reloading_it(tmp_path: Path) -> None:
    clock = Clock()
    store, backend = _cached_store(tmp_path / "m.db", clock)
    try:
        scan = _scan(("t",), clock.now)
        backend.vector_candidates(scan, _query("sail"), EMBEDDER.model_id, 5)
        index = backend._indexes[EMBEDDER.model_id]
        sessions, rebuilds = dict(index.sessions), index.rebuilds
        assert sessions  # the int8 pass runs over the sealed blocks
        store.put(("t", "u1"), "new", {"text": "marmalade on toast"})
        found = backend.vector_candidates(
            _scan(("t",), clock.now), _query("marmalade on toast"), EMBEDDER.model_id, 1
        )
        assert backend._indexes[EMBEDDER.model_id] is index and index.rebuilds == rebuilds
        assert all(index.sessions[b] is s for b, s in sessions.items())  # none rebuilt
        assert [i for i, _ in found] == [backend.heads(("t", "u1"), ["new"])["new"].id]
    finally:
        store.close()


def test_an_erased_vector_leaves_the_index_and_its_sessions(tmp_path: Path) -> None:
    clock = Clock()
    store, backend = _cached_store(tmp_path / "m.db", clock)
    marker = "zanzibar quokka marmalade"
    try:
        store.put(("t", "u1"), "secret", {"text": marker})
        store.put_many([(("t", "u2"), f"pad{i}", {"text": _text([i % 8])}) for i in range(20)])
        vector = _query(marker).astype(np.float32)
        scan = _scan(("t",), clock.now)
        assert backend.vector_candidates(scan, vector, EMBEDDER.model_id, 1)[0][1] > 0.99
        index = backend._indexes[EMBEDDER.model_id]
        record = backend.heads(("t", "u1"), ["secret"])["secret"]
        slot = backend._read("SELECT rowid FROM cold_memories WHERE id = ?", (record.id,))[0][0]
        block = slot // index.file.block
        assert block in index.sessions  # its codes sit in a built session
        store.delete(("t", "u1"), "secret")  # an erase
        offset = slot % index.file.block
        assert not index.file.f32[slot].any() and not index.file.i8[block, :, offset].any()
        ids = [i for i, _ in backend.vector_candidates(scan, vector, EMBEDDER.model_id, 200)]
        assert len(ids) == 80 and record.id not in ids
        assert block not in index.sessions or not np.any(index.sessions[block].codes[:, offset])
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
    clock = Clock()
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
