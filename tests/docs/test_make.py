"""The two commands the README gives, ``make demo`` and ``make test``, run what it says
(their blocks are not run by the docs tests: each installs packages into ./.venv). ``make -n``
prints the recipes without running them."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from docs_blocks import ROOT, blocks_of


def _recipe(target: str) -> list[str]:
    if shutil.which("make") is None:
        pytest.fail("make is not installed (the README's two commands need it)")
    # Under `make test` itself (as CI runs it) the inner make would inherit the outer
    # one's flags and print "make[1]: Entering directory" lines around the recipe.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_readme_gives_exactly_the_two_commands() -> None:
    (block,) = [b for b in blocks_of(ROOT / "README.md") if b.not_run is not None]
    assert [line.split("#")[0].strip() for line in block.code.splitlines()] == [
        "make demo",
        "make test",
    ]


def test_make_demo_installs_the_local_model_and_runs_the_demo() -> None:
    lines = _recipe("demo")
    assert any("pip install" in line and "[local,onnx]" in line for line in lines)
    assert lines[-1] == ".venv/bin/engram demo"


def test_make_test_runs_lint_types_and_the_whole_suite() -> None:
    lines = _recipe("test")
    assert lines[-3:] == [
        ".venv/bin/ruff check src tests bench",
        ".venv/bin/mypy",
        ".venv/bin/pytest",
    ]
    assert any("pip install" in line and ".[dev]" in line for line in lines)
