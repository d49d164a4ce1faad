"""Backend URLs shared by the hot-tier tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def hot_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for every hot-tier backend engram offers."""
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'hot.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for the backends that persist (SQLite file, real PostgreSQL)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'hot.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_ENCRYPTION_KEY", raising=False)
