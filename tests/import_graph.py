"""engram's import graph, read from the source with ``ast`` (nothing is imported).

Run it to see the arrows between packages and every import that breaks a layering rule:

    python tests/import_graph.py            # package -> package arrows, then violations
    python tests/import_graph.py --modules  # module -> module arrows instead

The rules (DESIGN.md, "Layout"):

- a private module (``pkg._x``) is imported only from inside ``pkg``; the top level's
  private modules are the kernel every package may use (:data:`KERNEL`);
- a backend imports its own package, the stores' public modules, ``engram.recall`` and
  the kernel: never another backend, nor anything above ``stores/``;
- under ``stores/`` only a tier's ``_open.py`` names a backend;
- nothing outside ``backends/`` imports a database driver.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"
KERNEL = frozenset({"engram._files", "engram._principal", "engram._retry", "engram._validate"})
"""Top-level private modules shared by every package of engram."""
ABOVE_STORES = ("memory", "tools", "agent", "cli", "eval", "context", "server")
DRIVERS = (
    "sqlite3",
    "aiosqlite",
    "psycopg",
    "psycopg_pool",
    "pgvector",
    "redis",
    "qdrant_client",
    "langgraph.checkpoint.sqlite",
    "langgraph.checkpoint.postgres",
)


@dataclass(frozen=True, slots=True)
class Arrow:
    """``source`` (a module of engram) imports ``target`` (any module), at ``line``."""

    source: str
    target: str
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(path: Path, module: str) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(node: ast.ImportFrom, package: str) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*parts, node.module] if node.module else parts)
    # ``from pkg import name`` may name a submodule: count both.
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def arrows(source: Path = SOURCE) -> Iterator[Arrow]:
    """Every import in engram's source; ``from a import b`` yields ``a`` and ``a.b``."""
    for path in sorted((source / "engram").rglob("*.py")):
        module = module_name(path)
        package = _package(path, module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = _resolve(node, package)
            else:
                continue
            for target in targets:
                yield Arrow(module, target, node.lineno)


def _modules(source: Path = SOURCE) -> set[str]:
    return {module_name(p) for p in (source / "engram").rglob("*.py")}


def _private_owner(target: str) -> str | None:
    """The package owning the first private segment of ``target`` (``None``: public)."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _area(module: str) -> tuple[str, ...]:
    """``engram.backends.sqlite.cold`` -> ``("backends", "sqlite")``; ``engram.x`` -> ``("x",)``."""
    parts = module.split(".")[1:]
    return tuple(parts[:2]) if parts[:1] in (["backends"], ["stores"]) else tuple(parts[:1])


def private_violations(found: list[Arrow]) -> list[str]:
    bad = []
    for arrow in found:
        owner = _private_owner(arrow.target)
        kernel = any(_inside(arrow.target, module) for module in KERNEL)
        if owner is None or not owner.startswith("engram") or kernel:
            continue
        if not _inside(arrow.source, owner) or owner == "engram":
            bad.append(f"{arrow.source}:{arrow.line} imports private {arrow.target}")
    return bad


def backend_violations(found: list[Arrow]) -> list[str]:
    bad = []
    for arrow in found:
        if not arrow.source.startswith("engram.backends.") or not arrow.target.startswith("engram"):
            continue
        own, target = _area(arrow.source), _area(arrow.target)
        if target[:1] == ("backends",) and len(target) == 2 and target != own:
            bad.append(f"{arrow.source}:{arrow.line} imports another backend: {arrow.target}")
        elif arrow.target == "engram" or target[:1] in [(name,) for name in ABOVE_STORES]:
            bad.append(f"{arrow.source}:{arrow.line} imports above the stores: {arrow.target}")
        elif target[:1] == ("stores",) and _tier(arrow.source) not in (None, target[1:2]):
            bad.append(f"{arrow.source}:{arrow.line} imports another tier: {arrow.target}")
    return bad


TIERS = ("hot", "cold", "documents")


def _tier(backend: str) -> tuple[str, ...] | None:
    """The tier a backend module implements when its name says (``...sqlite.cold``)."""
    last = backend.rpartition(".")[2]
    return (last,) if last in TIERS else None


def store_violations(found: list[Arrow]) -> list[str]:
    return [
        f"{a.source}:{a.line} names a backend: {a.target}"
        for a in found
        if a.source.startswith("engram.stores.")
        and a.target.startswith("engram.backends")
        and not a.source.endswith("._open")
    ]


def driver_violations(found: list[Arrow]) -> list[str]:
    return [
        f"{a.source}:{a.line} imports the driver {a.target}"
        for a in found
        if not a.source.startswith("engram.backends.")
        and any(a.target == d or a.target.startswith(d + ".") for d in DRIVERS)
    ]


def violations(found: list[Arrow] | None = None) -> list[str]:
    """Every broken rule, one line each (empty when the layering holds)."""
    found = list(arrows()) if found is None else found
    checks = (private_violations, backend_violations, store_violations, driver_violations)
    return sorted({line for check in checks for line in check(found)})


def package_graph(found: list[Arrow]) -> Counter[tuple[str, str]]:
    """Arrows between areas (``stores.cold``, ``backends.sqlite``, ``memory``...), counted."""
    known = _modules()
    counts: Counter[tuple[str, str]] = Counter()
    for arrow in found:
        if arrow.target in known:
            source, target = _area(arrow.source), _area(arrow.target)
            if source != target:
                counts[".".join(source) or "engram", ".".join(target) or "engram"] += 1
    return counts


def main(argv: list[str]) -> int:
    found = list(arrows())
    if "--modules" in argv:
        known = _modules()
        for arrow in sorted({(a.source, a.target) for a in found if a.target in known}):
            print(f"{arrow[0]} -> {arrow[1]}")
    else:
        for (source, target), count in sorted(package_graph(found).items()):
            marker = (
                "  <-- backend named here"
                if source.startswith("stores") and (target.startswith("backends"))
                else ""
            )
            print(f"{source:18} -> {target:18} {count:3}{marker}")
    problems = violations(found)
    print(f"\n{len(problems)} layering violations")
    for line in problems:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
