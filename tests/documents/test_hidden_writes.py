"""A shared path holding a document hidden from a user (a person saved it naming another
user) is not that user's to replace: a write or create there is refused, so the document is
never overwritten into one the writer may then delete."""

from __future__ import annotations

import pytest

from engram import Principal
from engram.backends.files import FileDocumentStore
from engram.errors import AccessDeniedError, InvalidInputError, NotFoundError
from engram.stores.documents import DocumentStore
from engram.tools import MemoryTool

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
PATH = "research/bob-notes.md"
BOBS = "---\nuser: bob\n---\n# Bob\n\nbob's private plan quokka-42\n"


def _plant(store: DocumentStore) -> None:
    if isinstance(store, FileDocumentStore):
        file = store.root(BOB).joinpath(*PATH.split("/"))
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(BOBS, encoding="utf-8")
    else:
        store._write_text(BOB, PATH, BOBS)


def test_another_user_cannot_replace_a_hidden_document(store: DocumentStore) -> None:
    _plant(store)
    with pytest.raises(NotFoundError):
        store.read_text(ALICE, PATH)
    for overwrite in (True, False):
        with pytest.raises(AccessDeniedError):
            store.write_text(ALICE, PATH, "# Mine now\n", overwrite=overwrite)
    tool = MemoryTool(store, ALICE)
    answer = tool.execute({"command": "create", "path": f"/memories/{PATH}", "file_text": "x\n"})
    assert answer.startswith("Error"), answer
    with pytest.raises(NotFoundError):
        store.delete(ALICE, PATH)
    assert store.read_text(BOB, PATH) == BOBS
    assert [d.path for d in store.about_user(BOB)] == [PATH]


def test_its_own_user_still_writes_it(store: DocumentStore) -> None:
    _plant(store)
    replaced = "---\nuser: bob\n---\n# Bob\n\nnew plan\n"
    with pytest.raises(InvalidInputError, match="shared by the tenant"):
        store.write_text(BOB, PATH, replaced)
    store.write_text(BOB, PATH, "# Bob\n\nnow the tenant's\n")
    assert store.read_text(ALICE, PATH) == "# Bob\n\nnow the tenant's\n"
