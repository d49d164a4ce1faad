"""The PostgreSQL the suite runs against is real and carries pgvector."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.postgres


def test_fresh_database_has_pgvector(postgres_url: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        assert row is not None
        assert tuple(int(p) for p in row[0].split(".")[:2]) >= (0, 8)
        conn.execute("CREATE TABLE t (v vector(3))")
        conn.execute("INSERT INTO t VALUES ('[1,2,3]')")
        assert conn.execute("SELECT v <-> '[1,2,4]' FROM t").fetchone() == (1.0,)
