"""What a user's export and erasure reach in the document tier (``about_user``,
``erase_user``): the user's own paths, and every shared document whose front matter names
them, alone or with other users; one document nobody can read stops nothing."""

from __future__ import annotations

from engram import Principal
from engram.backends.files import FileDocumentStore
from engram.stores.documents import DocumentStore

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
MEETING = "---\nusers: [alice, bob]\n---\n# Meeting\n\nalice zanzibar-7731 medical leave\n"


def _plant(store: DocumentStore, path: str, text: str | bytes) -> None:
    """A document written by hand (files) or before paths said whose it is (a row)."""
    if isinstance(store, FileDocumentStore):
        file = store.root(ALICE).joinpath(*path.split("/"))
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    else:
        assert isinstance(text, str)
        store._write_text(ALICE, path, text)


def _fill(store: DocumentStore) -> None:
    _plant(store, "research/meeting.md", MEETING)
    _plant(store, "research/alice-only.md", "---\nuser: alice\n---\n# A\n\nalice solo\n")
    store.write_text(ALICE, "users/alice/notes.md", "# N\n\nalice note\n")
    store.write_text(ALICE, "user-profiles/alice.md", "# Alice\n\nlikes tea\n")
    store.write_text(BOB, "users/bob/notes.md", "# N\n\nbob note\n")
    store.write_text(ALICE, "research/shared.md", "# Shared\n\nthe tenant's\n")


def test_a_document_naming_two_users_is_about_each_and_erased_with_either(
    store: DocumentStore,
) -> None:
    _fill(store)
    alices = ["research/alice-only.md", "research/meeting.md", "user-profiles/alice.md",
              "users/alice/notes.md"]  # fmt: skip
    assert [d.path for d in store.about_user(ALICE)] == alices
    assert store.about_user(ALICE)[1].content == "# Meeting\n\nalice zanzibar-7731 medical leave\n"
    assert store.about_user(ALICE)[1].metadata == {"users": ["alice", "bob"]}
    assert [d.path for d in store.about_user(BOB)] == ["research/meeting.md", "users/bob/notes.md"]
    assert store.erase_user(ALICE) == tuple(alices)
    assert store.about_user(ALICE) == []
    assert [i.path for i in store.list(ALICE)] == ["research/shared.md"]
    assert [d.path for d in store.about_user(BOB)] == ["users/bob/notes.md"]
    assert "zanzibar" not in repr(store.search(BOB, "zanzibar-7731 medical leave", k=20))
    assert store.erase_user(ALICE) == ()


def test_a_file_nobody_can_read_stops_no_erasure(file_store: FileDocumentStore) -> None:
    _fill(file_store)
    _plant(file_store, "research/legacy.md", "# Caf\xe9 notes\n\nold text\n".encode("latin-1"))
    _plant(file_store, "users/alice/latin.md", "# Caf\xe9\n\nalice text\n".encode("latin-1"))
    about = [d.path for d in file_store.about_user(ALICE)]
    assert "research/legacy.md" not in about and "users/alice/latin.md" not in about
    assert "users/alice/latin.md" in file_store.erase_user(ALICE)
    root = file_store.root(ALICE)
    assert not (root / "users/alice").exists() and (root / "research/legacy.md").exists()
