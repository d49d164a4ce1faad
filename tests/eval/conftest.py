"""Fixtures: the shared benchmark data beside the checkout (``<repo>/../shared/data``)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def data_root() -> Path:
    root = (REPO / ".." / "shared" / "data").resolve()
    if not (root / "locomo" / "locomo10.json").is_file():
        pytest.fail(f"benchmark data not found at {root} (shared/ must sit beside the repo)")
    return root
