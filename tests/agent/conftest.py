"""Fixtures for the Market Analyst tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from analyst_support import CliRunner, make_cli


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    """Run one ``engram agent`` command in a new Python process and wait for it."""
    return make_cli(tmp_path)
