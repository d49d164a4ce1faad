"""What a test needs from the machine: missing locally, the test is skipped with the
reason; under ``CI`` or ``ENGRAM_REQUIRE_ALL_BACKENDS`` the run fails instead, so CI
never silently skips a backend."""

from __future__ import annotations

import os

import pytest


def required_by_ci() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("ENGRAM_REQUIRE_ALL_BACKENDS"))


def unavailable(reason: str) -> None:
    """Skip for ``reason`` on a laptop; fail the run in CI."""
    if required_by_ci():
        pytest.fail(f"backend required in CI but unavailable: {reason}")
    pytest.skip(reason)
