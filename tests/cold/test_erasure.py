"""Erasure: forget removes rows, history, keyword entries, vectors and caches, verifiably."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from cold_support import Clock

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


def _files_holding(root: Path, marker: str) -> list[str]:
    return [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*"))
        if path.is_file() and marker.encode() in path.read_bytes()
    ]


def test_a_langgraph_delete_and_an_expiry_sweep_leave_no_byte_of_what_they_removed(
    make_store: Any, clock: Clock, backend_name: str, tmp_path: Path
) -> None:
    """``forget`` compacted what it erased; LangGraph's ``delete`` (a put of None) and
    the expiry sweep erased rows but left their words in SQLite's keyword index (and dead
    rows on PostgreSQL, payload pages in Qdrant Edge). An agent told "forget my address"
    deletes through the store; an expiry is a promise to forget: both erase now."""
    store = make_store()
    deleted, expired = (f"zq{uuid.uuid4().hex[:10]}{end}" for end in "dx")
    store.put(("t", "me", "notes"), "n1", {"text": f"my address is {deleted} street"})
    store.remember(ME, f"gate code {expired} this week", tags=["fact"], ttl=timedelta(days=2))
    store.remember(ME, "likes sailing on lakes", tags=["preference"])
    assert store.recall(ME, deleted) and store.recall(ME, expired)
    if backend_name == "sqlite":
        assert _files_holding(tmp_path, deleted) and _files_holding(tmp_path, expired)
    store.delete(("t", "me", "notes"), "n1")
    clock.advance(days=3)
    assert store.sweep() == 1
    assert _files_holding(tmp_path, deleted) == [] and _files_holding(tmp_path, expired) == []
    for gone in (deleted, expired):  # (the other fact may still come back, by its vector)
        found = store.recall(ME, gone, include_expired=True, include_superseded=True)
        assert [r.record.text for r in found if gone in r.record.text] == []
    assert [r.record.text for r in store.recall(ME, "sailing")] == ["likes sailing on lakes"]


def test_a_delete_inside_a_transaction_erases_when_it_commits(
    store: LongTermStore, tmp_path: Path
) -> None:
    """SQLite cannot VACUUM inside a transaction, and PostgreSQL's VACUUM FULL would wait
    for the locks the transaction holds: the compaction runs when it commits."""
    marker = f"zq{uuid.uuid4().hex[:10]}t"
    store.put(("t", "me", "notes"), "n1", {"text": f"my address is {marker} street"})
    store.put(("t", "me", "notes"), "n2", {"text": "likes sailing on lakes"})
    with store.backend.atomically(("t", "me", "notes")):
        store.delete(("t", "me", "notes"), "n1")
        assert store.get(("t", "me", "notes"), "n1") is None
    assert _files_holding(tmp_path, marker) == []
    assert store.get(("t", "me", "notes"), "n2") is not None
