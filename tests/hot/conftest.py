"""Backend URLs shared by the hot-tier tests."""

from __future__ import annotations

from pathlib import Path

import pytest

POSTGRES = pytest.param("postgres", marks=pytest.mark.postgres)
REDIS = pytest.param("redis", marks=pytest.mark.redis)


def _url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'hot.db'}"
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(params=["memory", "sqlite", POSTGRES, REDIS])
def hot_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for every hot-tier backend engram offers."""
    return _url(request, tmp_path)


@pytest.fixture(params=["sqlite", POSTGRES, REDIS])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for the backends that persist (SQLite file, real PostgreSQL, Redis)."""
    return _url(request, tmp_path)


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_ENCRYPTION_KEY", raising=False)
