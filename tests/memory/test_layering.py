"""DESIGN.md's layering rule: nothing above the backends imports a database driver."""

from __future__ import annotations

import ast
from pathlib import Path

import engram

DRIVERS = (
    "sqlite3",
    "aiosqlite",
    "psycopg",
    "psycopg_pool",
    "redis",
    "langgraph.checkpoint.sqlite",
    "langgraph.checkpoint.postgres",
)
PACKAGE = Path(engram.__file__).parent


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _drivers(path: Path) -> list[str]:
    return sorted(
        name for name in _imports(path) for d in DRIVERS if name == d or name.startswith(f"{d}.")
    )


def test_the_memory_layer_imports_no_driver() -> None:
    modules = [PACKAGE / "memory.py", *PACKAGE.glob("_memory_*.py")]
    assert len(modules) >= 3
    assert {p.name: _drivers(p) for p in modules if _drivers(p)} == {}


def test_nothing_above_the_backends_imports_a_driver() -> None:
    modules = [p for p in PACKAGE.rglob("*.py") if "backends" not in p.relative_to(PACKAGE).parts]
    assert len(modules) > 20
    leaks = {str(p.relative_to(PACKAGE)): _drivers(p) for p in modules if _drivers(p)}
    assert leaks == {}
