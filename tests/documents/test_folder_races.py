"""A folder's delete or move acts on exactly what it checked the caller may see: another
user's save landing between the check and the act (another process, forced there by a
hook) is never moved, deleted or shown, on every backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engram import NotFoundError, Principal
from engram.backends.files import FileDocumentStore
from engram.errors import BackendError
from engram.stores.documents import DocumentStore

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
PLAN = "# Plan\n\nalice medical zanzibar-7731\n"


@pytest.fixture
def rival(
    store: DocumentStore, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[DocumentStore]:
    """Another store on the same documents, as another process opens it; its writer gives
    up after 0.2 s while the documents are held still."""
    if isinstance(store, FileDocumentStore):
        other: DocumentStore = FileDocumentStore(home=tmp_path / ".engram", lock_timeout=0.2)
    else:
        from engram.backends.postgres.documents import PostgresDocumentStore

        other = PostgresDocumentStore(request.getfixturevalue("app_url"))
    with other:
        yield other


def _alice_saves_after_bobs_check(
    monkeypatch: pytest.MonkeyPatch, store: DocumentStore, rival: DocumentStore
) -> list[str]:
    """Make Alice save users/alice/plan.md right after Bob's store decides what he may
    see; the list gets the path her save acknowledged ("" when it was refused)."""
    saved: list[str] = []
    original: Callable[..., set[str]] = type(store)._seen

    def seen(self: DocumentStore, principal: Principal, paths: list[str]) -> set[str]:
        result = original(self, principal, paths)
        if principal == BOB and not saved:
            try:
                saved.append(rival.write_text(ALICE, "users/alice/plan.md", PLAN).path)
            except BackendError:
                saved.append("")  # Bob's store held the documents still
        return result

    monkeypatch.setattr(type(store), "_seen", seen)
    return saved


def _alice_keeps_what_she_saved(saved: list[str], store: DocumentStore) -> None:
    assert len(saved) == 1, "the hook never ran"
    if saved[0]:
        assert store.read_text(ALICE, "users/alice/plan.md") == PLAN
    store.write_text(ALICE, "users/alice/plan.md", PLAN)  # either way, her next save works
    assert store.read_text(ALICE, "users/alice/plan.md") == PLAN
    assert [i.path for i in store.list(ALICE, "users/**")] == ["users/alice/plan.md"]


def test_a_folder_move_never_takes_a_save_that_lands_after_its_check(
    store: DocumentStore, rival: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write_text(BOB, "users/bob/todo.md", "# Todo\n\nbob's list\n")
    saved = _alice_saves_after_bobs_check(monkeypatch, store, rival)
    store.move(BOB, "users", "pub")
    monkeypatch.undo()
    assert [i.path for i in store.list(BOB)] == ["pub/bob/todo.md"]
    with pytest.raises(NotFoundError):
        store.read_text(BOB, "pub/alice/plan.md")
    assert "zanzibar" not in repr(store.search(BOB, "alice medical zanzibar-7731", k=20))
    _alice_keeps_what_she_saved(saved, store)


def test_a_folder_delete_never_takes_a_save_that_lands_after_its_check(
    store: DocumentStore, rival: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write_text(BOB, "users/bob/todo.md", "# Todo\n\nbob's list\n")
    saved = _alice_saves_after_bobs_check(monkeypatch, store, rival)
    assert store.delete(BOB, "users") == 1
    monkeypatch.undo()
    assert store.list(BOB) == []
    _alice_keeps_what_she_saved(saved, store)
