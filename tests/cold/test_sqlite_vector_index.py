"""The SQLite cold tier's on-disk vector index: shared by processes, crash-safe, erasable.

Every test uses real files and, where a second party matters, a real second
process: one that writes while this one searches, one killed with SIGKILL in the
middle of a write.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from engram.backends.sqlite import _index_file
from engram.backends.sqlite._vectors import _quantize
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore, Scan, View

EMBEDDER = HashEmbedder(32)
MODEL = EMBEDDER.model_id
SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_index_file, "BLOCK", 16)  # sealed int8 blocks at a few dozen rows
    yield


def _store(path: Path, **options: object) -> LongTermStore:
    store = LongTermStore(SQLiteColdBackend(path, quantize_from=1, **options), embedder=EMBEDDER)  # type: ignore[arg-type]
    store.setup()
    return store


def _search(
    backend: SQLiteColdBackend, prefix: tuple[str, ...], text: str, k: int
) -> list[tuple[str, float]]:
    scan = Scan(prefix, View(datetime.now(UTC) + timedelta(seconds=1)), (), ())
    return backend.vector_candidates(scan, EMBEDDER.embed([text])[0], MODEL, k)


def _exact(path: Path, prefix: tuple[str, ...], text: str, k: int) -> list[tuple[str, float]]:
    """The answer of a store whose index is rebuilt from SQLite alone (float32 only)."""
    for part in path.parent.glob(f"{path.name}-vec-*"):
        part.unlink()
    fresh = SQLiteColdBackend(path, quantize_from=None)
    fresh.setup()
    try:
        return _search(fresh, prefix, text, k)
    finally:
        fresh.close()


def _seed(store: LongTermStore, users: int, per_user: int) -> None:
    store.put_many(
        [
            (("t", f"u{i % users}"), f"k{i}", {"text": f"fact {i} about topic {i % 7} lake"})
            for i in range(users * per_user)
        ]
    )


def _child(script: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


WRITER = """
import sys
from engram.backends.sqlite import _index_file
from engram.backends.sqlite._vectors import _quantize
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore
_index_file.BLOCK = 16
store = LongTermStore(SQLiteColdBackend(sys.argv[1], quantize_from=1), embedder=HashEmbedder(32))
store.setup()
for line in sys.stdin:
    kind, key, text = line.rstrip("\\n").split("|")
    if kind == "put":
        store.put(("t", "writer"), key, {"text": text})
        print(store.backend.heads(("t", "writer"), [key])[key].id, flush=True)
    else:
        store.delete(("t", "writer"), key)
        print("-", flush=True)
store.close()
"""


def test_a_searcher_sees_each_acknowledged_write_of_another_process(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = _store(path)
    _seed(store, users=5, per_user=12)
    writer = _child(WRITER, str(path))
    assert writer.stdin is not None and writer.stdout is not None
    try:
        _search(store.backend, ("t",), "warm up", 5)  # this process's state is built
        index = store.backend._indexes[MODEL]
        rebuilds = index.rebuilds
        for i in range(12):
            text = f"wrote {uuid.uuid4().hex} number {i}"
            writer.stdin.write(f"put|w{i}|{text}\n")
            writer.stdin.flush()
            written = writer.stdout.readline().strip()  # acknowledged: committed
            assert [i for i, _ in _search(store.backend, ("t",), text, 1)] == [written]
            assert [i for i, _ in _search(store.backend, ("t", "writer"), text, 1)] == [written]
            if i % 3 == 2:
                writer.stdin.write(f"delete|w{i}|-\n")
                writer.stdin.flush()
                assert writer.stdout.readline().strip() == "-"
                assert written not in [i for i, _ in _search(store.backend, ("t",), text, 80)]
        assert index.rebuilds == rebuilds  # followed the log, never rebuilt
    finally:
        writer.stdin.close()
        writer.wait(timeout=60)
        store.close()
    assert writer.returncode == 0


KILLED = """
import os, signal, sys
from engram.backends.sqlite import _index_file
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore
_index_file.BLOCK = 16
store = LongTermStore(SQLiteColdBackend(sys.argv[1], quantize_from=1), embedder=HashEmbedder(32))
store.setup()
where = sys.argv[2]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
if where == "before-header":  # slots written, the header not yet advanced
    _index_file.IndexFile._write_head = die
elif where == "before-index":  # committed to SQLite, the index not touched
    SQLiteColdBackend._after_commit = die
elif where == "mid-slots":  # some slots written, the rest and the header not
    original = _index_file.IndexFile._write_rows
    def half(self, rows):
        original(self, rows[: len(rows) // 2])
        die()
    _index_file.IndexFile._write_rows = half
items = [(("t", "killed"), f"x{i}", {"text": f"after the crash {i} lake"}) for i in range(20)]
store.put_many(items)
"""


@pytest.mark.parametrize("where", ["before-header", "before-index", "mid-slots"])
def test_sigkill_in_the_middle_of_a_write_leaves_the_index_consistent(
    tmp_path: Path, where: str
) -> None:
    path = tmp_path / "m.db"
    store = _store(path)
    _seed(store, users=4, per_user=10)
    _search(store.backend, ("t",), "warm up", 5)
    store.close()
    child = _child(KILLED, str(path), where)
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    reopened = _store(path)
    try:
        committed = reopened.backend.heads(("t", "killed"), [f"x{i}" for i in range(20)])
        assert len(committed) == 20  # committed before the kill: SQLite is the truth
        for prefix, text in ((("t",), "after the crash 3 lake"), (("t", "killed"), "lake 7")):
            got = _search(reopened.backend, prefix, text, 25)
            assert got == _exact(path, prefix, text, 25)
    finally:
        reopened.close()


def test_a_torn_header_makes_the_index_rebuild_from_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = _store(path)
    _seed(store, users=3, per_user=10)
    want = _search(store.backend, ("t",), "topic 3 lake", 10)
    store.close()
    (head,) = path.parent.glob(f"{path.name}-vec-*.head")
    head.write_bytes(head.read_bytes()[:10])  # torn
    reopened = _store(path)
    try:
        assert _search(reopened.backend, ("t",), "topic 3 lake", 10) == want
    finally:
        reopened.close()


def test_erased_content_leaves_every_file_of_the_store(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = _store(path)
    _seed(store, users=3, per_user=20)
    marker = "zq" + uuid.uuid4().hex[:12]
    text = f"my codename is {marker}"
    vector = EMBEDDER.embed([text])[0].astype(np.float32)
    store.put(("t", "me"), "codename", {"text": text})
    later = [(("t", "u1"), f"after{i}", {"text": f"later fact {i}"}) for i in range(40)]
    store.put_many(later)  # the secret's block is sealed: its codes sit in an int8 session
    assert _search(store.backend, ("t",), text, 1)[0][1] > 0.99
    codes = _quantize(vector[None, :])[0][0]
    index = store.backend._indexes[MODEL]

    def in_sessions() -> bool:
        return any(np.all(codes == s.codes.T, axis=1).any() for s in index.sessions.values())

    assert in_sessions()
    needles = (marker.encode(), vector.tobytes())

    def holding() -> list[str]:
        files = [p for p in tmp_path.rglob("*") if p.is_file()]
        return sorted(p.name for p in files for n in needles if n in p.read_bytes())

    assert any("-vec-" in name for name in holding())  # the scan can see the index files
    store.forget(("t", "me"))
    assert holding() == []
    _search(store.backend, ("t",), text, 5)  # sessions rebuilt from the zeroed codes
    assert not in_sessions()
    assert all(score < 0.99 for _, score in _search(store.backend, ("t",), text, 5))
    store.close()


def test_a_selective_prefix_still_returns_k_rows_and_the_exact_ones(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = _store(path)
    _seed(store, users=40, per_user=6)  # 240 rows: one user holds 1/40 of them
    try:
        for prefix in (("t", "u3"), ("t", "u13"), ("t",), ()):
            got = _search(store.backend, prefix, "topic 2 lake", 6)
            assert len(got) == 6
            assert got == _exact(path, prefix, "topic 2 lake", 6)
        got = _search(store.backend, ("t", "u3"), "topic 2 lake", 6)
        records = store.backend.fetch([i for i, _ in got])
        assert {r.namespace for r in records} == {("t", "u3")}
    finally:
        store.close()


def test_prefixes_deeper_than_the_hashed_ones_are_checked_in_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = _store(path)
    deep = ("t", "u1", "a", "b", "c")
    other = ("t", "u1", "a", "b", "d")
    store.put_many(
        [(ns, f"k{i}", {"text": f"deep fact {i}"}) for i in range(6) for ns in (deep, other)]
    )
    try:
        got = _search(store.backend, deep, "deep fact 2", 20)
        assert len(got) == 6
        assert {r.namespace for r in store.backend.fetch([i for i, _ in got])} == {deep}
    finally:
        store.close()


def test_a_first_search_answers_exactly_while_sessions_build_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.backends.sqlite import _index_search

    monkeypatch.setattr(_index_search, "BACKGROUND_FROM", 1)
    path = tmp_path / "m.db"
    store = _store(path)
    _seed(store, users=4, per_user=30)  # 120 rows: 7 sealed blocks of 16
    store.close()
    want = _exact(path, ("t",), "topic 5 lake", 12)
    reopened = _store(path)
    try:
        assert _search(reopened.backend, ("t",), "topic 5 lake", 12) == want
        index = reopened.backend._indexes[MODEL]
        assert index._builder is not None
        index._builder.join(timeout=60)
        assert len(index.sessions) == 7  # built meanwhile, then used
        assert _search(reopened.backend, ("t",), "topic 5 lake", 12) == want
    finally:
        reopened.close()


def test_the_change_log_is_pruned_and_a_state_older_than_it_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.backends.sqlite import cold

    monkeypatch.setattr(cold, "LOG_KEPT", 5)
    path = tmp_path / "m.db"
    writer, reader = _store(path), _store(path)
    try:
        _seed(writer, users=2, per_user=5)
        _search(reader.backend, ("t",), "warm up", 3)  # the reader's state: seq of now
        seen = reader.backend._indexes[MODEL].seq
        for i in range(30):
            writer.put(("t", "u1"), f"late{i}", {"text": f"late fact {i} lake"})
        (first,) = writer.backend._read("SELECT MIN(seq) FROM cold_vector_log")[0]
        assert first > seen + 1  # pruned past what the reader saw
        got = _search(reader.backend, ("t",), "late fact 17 lake", 8)
        assert got == _exact(path, ("t",), "late fact 17 lake", 8)
    finally:
        writer.close()
        reader.close()
