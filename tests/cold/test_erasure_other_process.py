"""An erasure by one process empties the caches of every other process on the store.

A re-ranked recall keeps the stems and term counts of the texts it scored, and the
embedder keeps the vectors of recent texts, keyed by the text itself. ``forget`` drops
them in its own process; a second process serving the same SQLite store (another
server worker) must drop them too before its next recall, or the erased text would
stay in its memory for as long as it runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder, RecentEmbeddings, _lexical
from engram.stores.cold import LongTermStore

SECRET = "My locker code at the Quarry Street gym is 7319 zephyrine"
OTHER = "Bob takes the early train to the harbour office"

ERASER = """
import sys
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore

store = LongTermStore(SQLiteColdBackend(sys.argv[1]), embedder=HashEmbedder(64))
store.setup()
print(store.forget(("t", "alice")).versions)
store.close()
"""


def _counted(text: str) -> bool:
    """Whether the keyword scorer's cache holds ``text`` (a lookup that hits)."""
    before = _lexical._counted.cache_info().hits
    _lexical._counted(text)
    return _lexical._counted.cache_info().hits > before


def _store(path: Path) -> tuple[LongTermStore, RecentEmbeddings]:
    embedder = RecentEmbeddings(HashEmbedder(64))
    store = LongTermStore(SQLiteColdBackend(str(path)), embedder=embedder)
    store.setup()
    return store, embedder


def _erase_elsewhere(path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", ERASER, str(path)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout.strip()


def test_another_process_erasure_empties_this_process_caches(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store, embedder = _store(path)
    store.remember(("t", "alice"), SECRET)
    store.remember(("t", "bob"), OTHER)
    assert store.recall(("t", "alice"), "what is my locker code at the gym")
    assert _counted(SECRET) and SECRET in embedder._kept  # the recall cached it

    assert _erase_elsewhere(path) == "1"
    assert [r.record.text for r in store.recall(("t", "bob"), "train to the office")] == [OTHER]

    assert not _counted(SECRET)
    assert SECRET not in embedder._kept and SECRET not in embedder._held
    assert store.recall(("t", "alice"), "what is my locker code at the gym") == []
    store.close()


def test_caches_stay_when_nothing_was_erased(tmp_path: Path) -> None:
    """The check costs no cache: another process's forget of an empty namespace erases
    nothing and leaves this process's caches as they are."""
    path = tmp_path / "memory.db"
    store, embedder = _store(path)
    store.remember(("t", "bob"), OTHER)
    assert store.recall(("t", "bob"), "train to the office")
    assert _erase_elsewhere(path) == "0"
    assert store.recall(("t", "bob"), "train to the office")
    assert _counted(OTHER) and OTHER in embedder._kept
    store.close()


def test_this_process_forget_counts_as_seen(tmp_path: Path) -> None:
    """A store's own forget drops the caches once; its next recall does not drop them
    again: what was cached after the forget is hit, not scored anew."""
    path = tmp_path / "memory.db"
    store, _ = _store(path)
    store.remember(("t", "alice"), SECRET)
    store.remember(("t", "bob"), OTHER)
    assert store.recall(("t", "alice"), "what is my locker code at the gym")
    store.forget(("t", "alice"))
    assert not _counted(SECRET)
    assert not _counted(OTHER)  # dropped too; this lookup caches it again
    misses = _lexical._counted.cache_info().misses
    assert store.recall(("t", "bob"), "train to the office")
    assert _lexical._counted.cache_info().misses == misses  # (a drop resets the count)
    store.close()
