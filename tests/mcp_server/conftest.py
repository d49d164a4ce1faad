"""Fixtures of the MCP tests; their support module sits beside this file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from mcp_support import seed


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An engram home holding Alice's fact, document and thread (see ``seed``)."""
    path = tmp_path / ".engram"
    seed(path)
    return path
