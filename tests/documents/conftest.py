"""Document-store fixtures: the file store and the PostgreSQL store, as the app role."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Principal
from engram.backends.files import FileDocumentStore
from engram.recall import HashEmbedder
from engram.stores.documents import DocumentStore

ALICE = Principal("acme", "alice")
BOB = Principal("globex", "bob")


@pytest.fixture
def file_store(tmp_path: Path) -> Iterator[FileDocumentStore]:
    with FileDocumentStore(home=tmp_path / ".engram", embedder=HashEmbedder()) as store:
        assert isinstance(store, FileDocumentStore)
        yield store


@pytest.fixture
def app_url(postgres_url: str) -> str:
    """Schema set up by the superuser; the URL of the role without BYPASSRLS."""
    from engram.backends.postgres.documents import AppRole, setup

    return setup(postgres_url, AppRole("engram_docs_app", "app-secret"))


@pytest.fixture
def pg_store(app_url: str) -> Iterator[DocumentStore]:
    from engram.backends.postgres.documents import PostgresDocumentStore

    with PostgresDocumentStore(app_url, embedder=HashEmbedder()) as store:
        yield store


@pytest.fixture(
    params=["files", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def store(request: pytest.FixtureRequest) -> DocumentStore:
    name = "file_store" if request.param == "files" else "pg_store"
    result: DocumentStore = request.getfixturevalue(name)
    return result
