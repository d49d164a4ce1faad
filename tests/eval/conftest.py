"""Fixtures: small benchmark files the tests write, and the real benchmark data if present.

``fixture_data`` is a folder in the real layout (``locomo/locomo10.json``,
``longmemeval/longmemeval_oracle_sample_seed_42.json``) holding the stand-ins of
:mod:`benchmark_files`; every harness test runs on it. ``real_data`` is the public data:
``$ENGRAM_EVAL_DATA``, else ``../shared/data`` beside the checkout. Without it the
tests over the real files skip; under ``CI`` or ``ENGRAM_REQUIRE_ALL_BACKENDS`` they fail.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from benchmark_files import LOCOMO_FILE, LONGMEMEVAL_FILE, write_benchmarks

from engram.eval._data import DATA_ENV

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fixture_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_benchmarks(tmp_path_factory.mktemp("benchmarks"))


def _has_both(root: Path) -> bool:
    return (root / LOCOMO_FILE).is_file() and (root / LONGMEMEVAL_FILE).is_file()


@pytest.fixture
def real_data(unavailable: Callable[[str], None]) -> Path:
    """The public benchmark folder (see the module): skip locally, fail in CI when absent."""
    named = os.environ.get(DATA_ENV)
    if named:
        if not _has_both(Path(named)):
            pytest.fail(f"${DATA_ENV}={named} holds no {LOCOMO_FILE} and {LONGMEMEVAL_FILE}")
        return Path(named)
    beside = (REPO.parent / "shared" / "data").resolve()
    if not _has_both(beside):
        unavailable(f"benchmark data: set ${DATA_ENV} or put shared/data beside the checkout")
    return beside
