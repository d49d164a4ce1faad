"""The cold-tier conformance fixtures: every test here runs on every backend.

To add a backend, append its name to ``BACKENDS`` and teach ``cold_url`` its URL.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cold_support import Clock

from engram.recall import HashEmbedder, MiniLMEmbedder
from engram.stores.cold import LongTermStore, open_store

BACKENDS = [
    pytest.param("memory"),
    pytest.param("sqlite"),
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("qdrant"),
    pytest.param("qdrant-edge"),
    *(
        [pytest.param("qdrant-server")]
        if os.environ.get("ENGRAM_TEST_QDRANT_URL")  # a Qdrant server: qdrant://host:6333
        else []
    ),
]


StoreFactory = Callable[..., LongTermStore]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def cold_url(backend_name: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend_name == "memory":
        return "memory://"
    if backend_name == "sqlite":
        return f"sqlite:///{tmp_path}/memory.db"
    if backend_name == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    if backend_name == "qdrant":
        return f"qdrant+local:///{tmp_path}/qdrant"
    if backend_name == "qdrant-edge":
        return f"qdrant+edge:///{tmp_path}/qdrant-edge"
    if backend_name == "qdrant-server":  # a collection of its own per test
        return f"{os.environ['ENGRAM_TEST_QDRANT_URL']}?collection=t{uuid.uuid4().hex}"
    raise AssertionError(f"unknown backend {backend_name}")


@pytest.fixture
def make_store(cold_url: str, clock: Clock) -> Iterator[StoreFactory]:
    """Open stores on this test's backend (same data each time); closed at teardown."""
    opened: list[Any] = []

    def make(**options: Any) -> LongTermStore:
        options.setdefault("embedder", HashEmbedder())
        options.setdefault("clock", clock)
        manager = open_store(cold_url, **options)
        opened.append(manager)
        return manager.__enter__()

    yield make
    for manager in reversed(opened):
        manager.__exit__(None, None, None)


@pytest.fixture
def store(make_store: StoreFactory) -> LongTermStore:
    return make_store()


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The local all-MiniLM-L6-v2 embedder, loaded once for every test that needs it."""
    return MiniLMEmbedder()
