"""LangGraph's own checkpointer conformance suite, on every saver configuration engram offers.

Each configuration (memory, SQLite, PostgreSQL, Redis; strict allow-list alone and with
AES-GCM encryption) runs ``langgraph.checkpoint.conformance.validate`` through
the async API. Base capabilities must all pass; every extended capability the
saver implements must pass too. engram adds ``prune``, ``copy_thread`` and
``delete_for_runs`` to LangGraph's SQLite and in-memory savers, and
``copy_thread`` / ``delete_for_runs`` to its PostgreSQL saver (which brings
``prune`` itself); its own Redis saver has all of them; so every configuration is
checked on all 8 capabilities. Redis runs against a real ``redis-server``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import CapabilityReport

from engram.stores.hot import aopen_checkpointer, generate_key

KEY = generate_key()


def _failures(report: CapabilityReport) -> str:
    lines = []
    for name, result in report.results.items():
        lines += [f"{name}: {failure}" for failure in result.failures]
    return "\n".join(lines)


async def _conformance(name: str, url: str, **options: Any) -> CapabilityReport:
    async def factory() -> AsyncGenerator[BaseCheckpointSaver[Any], None]:
        async with aopen_checkpointer(url, **options) as saver:
            yield saver

    return await validate(checkpointer_test(name=name)(factory))


def _check(report: CapabilityReport, detected: set[str]) -> None:
    assert report.passed_all_base(), _failures(report)
    assert report.passed_all(), _failures(report)
    found = {name for name, r in report.results.items() if r.detected}
    assert found == detected


BASE = {"put", "put_writes", "get_tuple", "list", "delete_thread"}
EXTENDED = {"prune", "copy_thread", "delete_for_runs"}

ENCRYPTION = pytest.mark.parametrize(
    "options", [{"encryption_key": None}, {"encryption_key": KEY}], ids=["strict", "encrypted"]
)


@ENCRYPTION
async def test_memory_saver_conforms(options: dict[str, Any]) -> None:
    _check(await _conformance("engram-memory", "memory://", **options), BASE | EXTENDED)


@ENCRYPTION
async def test_sqlite_saver_conforms(options: dict[str, Any], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'conformance.db'}"
    _check(await _conformance("engram-sqlite", url, **options), BASE | EXTENDED)


@pytest.mark.postgres
@ENCRYPTION
async def test_postgres_saver_conforms(options: dict[str, Any], postgres_url: str) -> None:
    report = await _conformance("engram-postgres", postgres_url, **options)
    _check(report, BASE | EXTENDED)


@pytest.mark.redis
@ENCRYPTION
async def test_redis_saver_conforms(options: dict[str, Any], redis_url: str) -> None:
    _check(await _conformance("engram-redis", redis_url, **options), BASE | EXTENDED)
