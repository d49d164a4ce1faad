"""Erasure: forget removes rows, history, keyword entries, vectors and caches, verifiably."""

from __future__ import annotations

import uuid
from pathlib import Path

from engram import Principal
from engram.stores.cold import LongTermStore

ME = Principal("t", "me")
OTHER = Principal("t", "other")


def _seed(store: LongTermStore, marker: str) -> None:
    store.remember(ME, f"my codename is {marker}", slot="codename", tags=["profile"])
    store.remember(ME, f"my codename is {marker} version two", slot="codename")
    store.remember(ME, f"{marker} likes tea", tags=["preference"])
    store.put(("t", "me", "notes"), "n1", {"text": f"note with {marker}", "extra": marker})
    store.remember(OTHER, "unrelated fact about sailing", tags=["preference"])
    assert store.recall(ME, marker)  # vectors and keyword index populated, caches warm


def test_forget_reports_and_removes(store: LongTermStore) -> None:
    marker = f"zq{uuid.uuid4().hex[:10]}k"
    _seed(store, marker)
    report = store.forget(ME)
    assert (report.keys, report.versions, report.vectors, report.keyword_entries) == (3, 4, 4, 4)
    assert store.recall(ME, marker, include_superseded=True, include_expired=True) == []
    assert store.search(("t", "me")) == []
    assert store.list_namespaces(prefix=("t", "me")) == []
    assert len(store.recall(OTHER, "sailing")) == 1


def test_forget_selected_keys(store: LongTermStore) -> None:
    a = store.remember(ME, "fact one about kites", tags=["profile"])
    store.remember(ME, "fact two about boats", tags=["profile"])
    assert a.record is not None
    report = store.forget(ME, [a.record.key])
    assert report.keys == 1
    assert [r.record.text for r in store.recall(ME, "fact kites boats")] == ["fact two about boats"]


def test_no_byte_of_erased_content_remains_in_sqlite_files(
    store: LongTermStore, backend_name: str, tmp_path: Path
) -> None:
    marker = f"zq{uuid.uuid4().hex[:10]}k"
    _seed(store, marker)
    files = sorted(tmp_path.glob("memory.db*"))
    if backend_name == "sqlite":
        assert any(marker.encode() in f.read_bytes() for f in files)  # the scan can see it
    report = store.forget(ME)
    assert report.compacted is (backend_name != "memory")
    for path in sorted(tmp_path.glob("memory.db*")):
        assert marker.encode() not in path.read_bytes(), path.name
    assert store.recall(OTHER, "sailing")  # the rest still works after compaction
