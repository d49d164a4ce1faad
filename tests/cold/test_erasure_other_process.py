"""An erasure by one process empties the caches of every other process on the store.

A re-ranked recall keeps the stems of the texts it scored (unless the backend stores
them, as SQLite does) and its candidates' excerpts, and the embedder keeps the vectors
of recent texts. ``forget`` drops them in its own process; a second process serving the
same store (another server worker) must drop them too before its next recall, or the
erased text would stay in its memory for as long as it runs. On SQLite, and on
PostgreSQL as the admin and as the application role under row-level security.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.backends.postgres import cold as postgres_cold
from engram.config import AppRole
from engram.recall import HashEmbedder, RecentEmbeddings, _lexical
from engram.stores.cold import LongTermStore, NewFact, backend_for

SECRET = "My locker code at the Quarry Street gym is 7319 zephyrine"
OTHER = "Bob takes the early train to the harbour office"
ROLE = AppRole("engram_erasure_app", "erasure-secret")

ERASER = """
import sys
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore, NewFact, backend_for

store = LongTermStore(backend_for(sys.argv[1]), embedder=HashEmbedder(64))
store.setup()
print(store.forget(("t", "alice"), compact=False).versions)
store.close()
"""


@pytest.fixture(params=["sqlite", "postgres", "postgres-app-role"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'memory.db'}"
        return
    admin: str = request.getfixturevalue("postgres_url")
    yield admin if request.param == "postgres" else postgres_cold.setup(admin, ROLE)


def _counted(text: str) -> bool:
    """Whether the keyword scorer's cache holds ``text`` (a lookup that hits)."""
    before = _lexical._counted.cache_info().hits
    _lexical._counted(text)
    return _lexical._counted.cache_info().hits > before


def _excerpted(store: LongTermStore) -> set[str]:
    """The texts of the candidate excerpts ``store`` keeps between recalls."""
    return {e.text for e in store._excerpts._kept.values()}


def _store(url: str) -> tuple[LongTermStore, RecentEmbeddings]:
    embedder = RecentEmbeddings(HashEmbedder(64))
    store = LongTermStore(backend_for(url), embedder=embedder)
    store.setup()
    return store, embedder


def _erase_elsewhere(url: str) -> str:
    """What another process's ``forget`` of alice erased (its count of versions)."""
    done = subprocess.run(
        [sys.executable, "-c", ERASER, url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_another_process_erasure_empties_this_process_caches(url: str) -> None:
    store, embedder = _store(url)
    store.remember(("t", "alice"), SECRET)
    store.remember(("t", "bob"), OTHER)
    assert store.recall(("t", "alice"), "what is my locker code at the gym")
    # SQLite stores each version's stems: its recall stems no text. A lookup that
    # misses caches the text, so the drop below is tested on every backend.
    assert _counted(SECRET) or url.startswith("sqlite")
    assert SECRET in embedder._kept  # the recall cached it
    assert SECRET in _excerpted(store)

    assert _erase_elsewhere(url) == "1"
    assert [r.record.text for r in store.recall(("t", "bob"), "train to the office")] == [OTHER]

    assert not _counted(SECRET)
    assert SECRET not in _excerpted(store)
    assert SECRET not in embedder._kept and SECRET not in embedder._held
    assert store.recall(("t", "alice"), "what is my locker code at the gym") == []
    store.close()


def test_caches_stay_when_nothing_was_erased(url: str) -> None:
    """The check costs no cache: another process's forget of an empty namespace erases
    nothing and leaves this process's caches as they are."""
    store, embedder = _store(url)
    store.remember(("t", "bob"), OTHER)
    assert store.recall(("t", "bob"), "train to the office")
    _counted(OTHER)  # (cached now, if the recall read stored stems)
    assert _erase_elsewhere(url) == "0"
    assert store.recall(("t", "bob"), "train to the office")
    assert _counted(OTHER) and OTHER in embedder._kept
    store.close()


def test_this_process_forget_counts_as_seen(url: str) -> None:
    """A store's own forget drops the caches once; its next recall does not drop them
    again: what was cached after the forget is hit, not scored anew."""
    store, _ = _store(url)
    store.remember(("t", "alice"), SECRET)
    store.remember(("t", "bob"), OTHER)
    assert store.recall(("t", "alice"), "what is my locker code at the gym")
    store.forget(("t", "alice"))
    assert not _counted(SECRET)
    assert not _counted(OTHER)  # dropped too; this lookup caches it again
    assert store.recall(("t", "bob"), "train to the office")
    assert _counted(OTHER)  # the recall did not drop it again
    store.close()


def test_a_process_that_only_writes_drops_the_erased_texts_at_its_next_write(url: str) -> None:
    """A worker that remembers and never recalls still embeds, and its embedder keeps
    what it embedded: its next write (one fact, a batch, a bulk load) follows the
    erasure first."""
    store, embedder = _store(url)
    writes = (
        lambda: store.remember(("t", "bob"), OTHER),
        lambda: store.remember_many(("t", "bob"), [NewFact(OTHER + " again")]),
        lambda: store.put_many([(("t", "bob"), "k-late", {"text": OTHER + " late"})]),
    )
    for write in writes:
        store.remember(("t", "alice"), SECRET)
        assert SECRET in embedder._kept  # the write's embedding, kept
        assert _erase_elsewhere(url) == "1"
        write()
        assert SECRET not in embedder._kept and SECRET not in embedder._held
    assert any(OTHER in text for text in embedder._kept)  # what came after is kept again
    store.close()
