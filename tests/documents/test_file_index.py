"""The file store's index: updated on write, notices hand edits, never re-reads the corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import engram.backends.files._safepath as safepath
import engram.backends.files.documents as documents
from engram import BackendError, Principal
from engram.backends.files import FileDocumentStore

ALICE = Principal("acme", "alice")


@pytest.fixture
def store(tmp_path: Path) -> FileDocumentStore:
    store = FileDocumentStore(home=tmp_path / ".engram")
    for n in range(40):
        store.write_text(ALICE, f"notes/n{n:02d}.md", f"# Note {n}\n\nordinary text number {n}\n")
    return store


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the store reads from disk."""
    seen: list[str] = []

    def counting(dir_fd: int, name: str) -> tuple[bytes, os.stat_result]:
        seen.append(name)
        return safepath.read_bytes(dir_fd, name)

    monkeypatch.setattr(documents, "read_bytes", counting)
    return seen


def test_queries_do_not_reread_unchanged_files(store: FileDocumentStore, reads: list[str]) -> None:
    for _ in range(3):
        assert store.search(ALICE, "ordinary text 7", k=3)
        store.list(ALICE, "notes/*")
    assert reads == []
    assert store.refresh(ALICE).checked == 40


def test_a_hand_edit_is_noticed_and_only_that_file_is_read(
    store: FileDocumentStore, reads: list[str]
) -> None:
    path = store.root(ALICE) / "notes/n07.md"
    path.write_text("# Note 7\n\nnow about a capybara\n")
    hits = store.search(ALICE, "capybara")
    assert [(h.path, h.line_start) for h in hits] == [("notes/n07.md", 3)]
    assert reads == ["n07.md"]


def test_a_touch_without_change_is_read_but_not_reindexed(store: FileDocumentStore) -> None:
    path = store.root(ALICE) / "notes/n03.md"
    os.utime(path, ns=(1, 1))
    report = store.refresh(ALICE)
    assert (report.read, report.reindexed) == (1, 0)
    assert store.refresh(ALICE).read == 0


def test_files_added_or_removed_by_hand(store: FileDocumentStore) -> None:
    root = store.root(ALICE)
    (root / "notes/n01.md").unlink()
    (root / "learnings").mkdir()
    (root / "learnings/hand.md").write_text("---\ntitle: [unclosed\n---\nwombat facts\n")
    report = store.refresh(ALICE)
    assert (report.removed, report.reindexed) == (1, 1)
    assert store.search(ALICE, "ordinary text number 1", k=50)[0].path != "notes/n01.md"
    assert [h.path for h in store.search(ALICE, "wombat")] == ["learnings/hand.md"]


def test_a_failed_write_leaves_the_old_document_whole(
    store: FileDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(safepath.os, "fsync", crash)
    with pytest.raises(BackendError):
        store.write_text(ALICE, "notes/n05.md", "half" * 1000)
    monkeypatch.undo()
    assert store.read_text(ALICE, "notes/n05.md") == "# Note 5\n\nordinary text number 5\n"
    leftovers = [p.name for p in (store.root(ALICE) / "notes").iterdir()]
    assert len(leftovers) == 40 and all(n.endswith(".md") for n in leftovers)


def test_nothing_is_created_before_a_write(tmp_path: Path) -> None:
    store = FileDocumentStore(home=tmp_path / "home")
    assert store.list(ALICE) == [] and store.search(ALICE, "anything") == []
    assert not (tmp_path / "home/documents").exists()


def test_the_index_lives_outside_the_document_root(store: FileDocumentStore) -> None:
    root = store.root(ALICE)
    assert not any(p.suffix == ".db" for p in root.rglob("*"))
    assert (root.parent.parent / "index/documents.db").is_file()


def test_deleted_text_leaves_the_index_files(tmp_path: Path) -> None:
    store = FileDocumentStore(home=tmp_path / ".engram")
    for n in range(30):
        store.write_text(ALICE, f"keep/{n}.md", f"# Keep {n}\n\nplain words {n}\n")
    store.write_text(ALICE, "secret.md", "# Secret\n\nzanzibarquokka account 4411\n")
    assert store.search(ALICE, "zanzibarquokka")
    store.delete(ALICE, "secret.md")
    assert store.search(ALICE, "zanzibarquokka") == []
    assert store.compact()
    for path in (tmp_path / ".engram/index").iterdir():
        assert b"zanzibarquokka" not in path.read_bytes(), path.name
    store.close()


def test_a_refresh_interval_skips_the_stat_walk(tmp_path: Path, reads: list[str]) -> None:
    store = FileDocumentStore(home=tmp_path / ".engram", refresh_interval=3600)
    store.write_text(ALICE, "a.md", "first words\n")
    assert store.search(ALICE, "first")
    reads.clear()  # (the write looked for a document there; searches are what is counted)
    (store.root(ALICE) / "a.md").write_text("second words, longer\n")
    assert store.search(ALICE, "second") == [] and reads == []
    assert store.refresh(ALICE).reindexed == 1
    assert [h.path for h in store.search(ALICE, "second")] == ["a.md"]


def test_cached_vectors_follow_writes_from_another_process(tmp_path: Path) -> None:
    from engram.recall import HashEmbedder

    home = tmp_path / ".engram"
    first = FileDocumentStore(home=home, embedder=HashEmbedder())
    second = FileDocumentStore(home=home, embedder=HashEmbedder())
    first.write_text(ALICE, "a.md", "alpaca grazing\n")
    assert [h.path for h in second.search(ALICE, "alpaca", mode="semantic")] == ["a.md"]
    first.write_text(ALICE, "b.md", "llama grazing\n")  # the other store's index changes
    second._refresh_interval = 3600  # no refresh by stat: only the index tells
    assert "b.md" in [h.path for h in second.search(ALICE, "llama", mode="semantic")]
    first.close()
    second.close()


@pytest.mark.parametrize("front", ['title: "x \\uD800 y"', 'title: "a\\x00b"', "title: [unclosed"])
def test_a_hand_written_front_matter_that_cannot_be_read_breaks_nothing(
    store: FileDocumentStore, front: str
) -> None:
    """A file edited by hand whose front matter is malformed, or decodes to a lone surrogate
    or a control character, indexes as plain text: its owner reads, lists, searches and
    deletes it, and every other user of the tenant searches and lists as before."""
    bob = Principal("acme", "bob")
    store.write_text(bob, "users/bob/seats.md", "I prefer window seats\n")
    (store.root(ALICE) / "notes/bad.md").write_text(f"---\n{front}\n---\nwombat facts\n")
    assert [h.path for h in store.search(ALICE, "wombat")] == ["notes/bad.md"]
    assert "wombat facts" in store.read_text(ALICE, "notes/bad.md")
    assert "notes/bad.md" in [i.path for i in store.list(ALICE, "notes/*")]
    assert [h.path for h in store.search(bob, "window seats")] == ["users/bob/seats.md"]
    assert [i.path for i in store.list(bob, "users/bob/*")] == ["users/bob/seats.md"]
    store.delete(ALICE, "notes/bad.md")
    assert "notes/bad.md" not in [i.path for i in store.list(ALICE, "notes/*")]


def test_an_index_from_before_front_matter_was_indexed_learns_it_on_opening(
    tmp_path: Path,
) -> None:
    """An index written before it kept the users a front matter names is brought up to
    date when the store opens: every file is read once, and a shared document naming
    another user is hidden from the rest of the tenant at once."""
    import sqlite3

    home = tmp_path / ".engram"
    bob = Principal("acme", "bob")
    with FileDocumentStore(home=home) as old:
        old.write_text(bob, "notes/menu.md", "soup of the day\n")
        (old.root(ALICE) / "notes/alice-health.md").write_text(
            "---\nuser_id: alice\n---\nAlice is allergic to penicillin.\n"
        )
        old.refresh(ALICE)
    index = next(home.rglob("documents.db"))
    with sqlite3.connect(index) as conn:  # the index as the earlier version left it
        conn.execute("ALTER TABLE doc_files DROP COLUMN users")
        conn.execute("DELETE FROM doc_index_version WHERE version >= 2")
    with FileDocumentStore(home=home) as upgraded:
        assert [i.path for i in upgraded.list(bob, "notes/*")] == ["notes/menu.md"]
        assert upgraded.search(bob, "penicillin") == []
        assert upgraded.refresh(bob).read == 0


def test_an_index_from_before_digests_covered_every_byte_learns_them_on_opening(
    tmp_path: Path,
) -> None:
    """Digests an earlier version indexed (of the parsed body and metadata) become the
    digests of the bytes when the store opens: a compare-and-swap on what the listing
    says succeeds without reading the corpus again."""
    import sqlite3

    from engram.stores.documents import digest_of

    home = tmp_path / ".engram"
    text = "---\n# a comment\ntitle: R\n---\n# R\n\nbody\n"
    with FileDocumentStore(home=home) as old:
        old.write_text(ALICE, "r.md", text)
    index = next(home.rglob("documents.db"))
    with sqlite3.connect(index) as conn:  # the index as the earlier version left it
        conn.execute("UPDATE doc_files SET digest = 'parsed'")
        conn.execute("DELETE FROM doc_index_version WHERE version >= 3")
    with FileDocumentStore(home=home) as upgraded:
        assert upgraded.refresh(ALICE).read == 0
        [info] = upgraded.list(ALICE)
        assert info.digest == digest_of(text)
        upgraded.write_text(ALICE, "r.md", text + "more\n", expected=info.digest)
