"""Shapes every backend treats alike: a document never goes under another document, and a
document of a million distinct words is stored and searched (PostgreSQL indexes the first
60,000 characters of a paragraph and of its heading: a ``tsvector`` holds at most 1 MB)."""

from __future__ import annotations

import random
import string

import pytest

from engram import InvalidInputError, Principal
from engram.stores.documents import DocumentStore

ALICE = Principal("acme", "alice")


def test_a_document_never_moves_under_a_document(store: DocumentStore) -> None:
    store.write_text(ALICE, "x.md", "# X\n\nx\n")
    store.write_text(ALICE, "y.md", "# Y\n\ny\n")
    for target in ("x.md/z.md", "x.md/deeper/z.md"):
        with pytest.raises(InvalidInputError):
            store.move(ALICE, "y.md", target)
    with pytest.raises(InvalidInputError):
        store.write_text(ALICE, "x.md/w.md", "w\n")
    assert [i.path for i in store.list(ALICE)] == ["x.md", "y.md"]
    assert store.read_text(ALICE, "y.md") == "# Y\n\ny\n"


def test_a_document_of_a_million_distinct_words_is_stored_and_found(store: DocumentStore) -> None:
    rng = random.Random(0)
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=12)) for _ in range(120_000)
    ]  # ~1.5 MB, past the 1 MB a tsvector holds
    text = f"# {' '.join(words)}\n\n{' '.join(words)}\n\n## Tail\n\nclosing remark\n"
    store.write_text(ALICE, "research/big.md", text)
    assert store.read_text(ALICE, "research/big.md") == text
    for query in (words[0], words[1000], "closing remark"):
        hits = store.search(ALICE, query, k=3, mode="keyword")
        assert hits and hits[0].path == "research/big.md", query
    store.write_text(ALICE, "research/big.md", text + "more\n")
    assert store.delete(ALICE, "research/big.md") == 1
