"""Dispatch ``python -m bench <name> [args]`` to ``bench.<name>.main(args)``.

Thread counts are pinned before numpy/torch load (2-core machines: BLAS and
torch both default to every core and fight each other).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def _available() -> list[str]:
    import bench

    return sorted(
        m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_")
    )


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m bench <name> [options]; names:", ", ".join(_available()))
        return 0
    name = argv[0].replace("-", "_")
    if name not in _available():
        print(f"unknown benchmark {argv[0]!r}; known: {', '.join(_available())}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"bench.{name}")
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
