"""SQLite cold backend: a store written before moments were bounded may hold
``datetime.max``, which its float epoch seconds round up to year 10000. Its reads, export
and erasure still work: such a moment reads as ``datetime.max``."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from engram import Principal
from engram.recall import HashEmbedder
from engram.stores.cold import open_store

ALICE = Principal("acme", "alice")
YEAR_10000 = datetime.max.replace(tzinfo=UTC).timestamp()  # 253402300800.0


def test_a_stored_moment_rounded_past_the_last_datetime_reads_as_the_last(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/memory.db"
    with open_store(url, embedder=HashEmbedder()) as store:
        store.remember(
            ALICE, "Owns a kayak", key="kayak", valid_from=datetime(2020, 1, 1, tzinfo=UTC)
        )
        store.remember(
            ALICE, "Plays chess", key="chess", expires_at=datetime(2030, 1, 1, tzinfo=UTC)
        )
    with sqlite3.connect(tmp_path / "memory.db") as conn:  # what an older engram wrote
        conn.execute("UPDATE cold_memories SET valid_to = ? WHERE key = 'kayak'", (YEAR_10000,))
        conn.execute("UPDATE cold_memories SET expires_at = ? WHERE key = 'chess'", (YEAR_10000,))
    last = datetime.max.replace(tzinfo=UTC)
    with open_store(url, embedder=HashEmbedder()) as store:
        got = {r.key: r for r in store.records(ALICE)}
        assert got["kayak"].valid_to == last and got["chess"].expires_at == last
        assert [r.valid_to for r in store.history(ALICE, "kayak")] == [last]
        assert {h.record.key for h in store.recall(ALICE, "kayak chess")} == {"kayak", "chess"}
        assert store.forget(ALICE).versions == 2
