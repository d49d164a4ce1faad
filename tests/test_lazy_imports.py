"""``import engram`` and the command line's start stay light: public names are imported on
first use, and a command's module only when that command runs.

Each check of ``sys.modules`` runs in a fresh interpreter, so nothing this test process
imported before can hide an eager import.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

import engram
import engram.cli
from engram.cli import COMMAND_MODULES, LAZY_COMMANDS

SOURCE = Path(engram.__file__).resolve().parent
HEAVY = ("langchain", "langchain_core", "langgraph", "langsmith", "numpy", "torch", "pydantic")
"""Packages that cost seconds of CPU to import (measured with ``python -X importtime``)."""


def _loaded_after(code: str) -> list[str]:
    """The top-level packages in ``sys.modules`` after running ``code`` in a fresh process."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.splitlines()[-1])


def _heavy(modules: list[str]) -> set[str]:
    return {m.split(".")[0] for m in modules} & set(HEAVY)


def test_import_engram_loads_no_heavy_package() -> None:
    loaded = _loaded_after("import engram")
    assert _heavy(loaded) == set()
    assert not {"engram.memory", "engram.context", "engram.stores.cold"} & set(loaded)


def test_the_cli_and_its_help_load_no_heavy_package() -> None:
    loaded = _loaded_after(
        "import sys\nfrom engram.cli import main\n"
        "try:\n    main(['--help'], prog_name='engram')\nexcept SystemExit:\n    pass"
    )
    assert _heavy(loaded) == set()
    assert not set(loaded) & {module for module, _ in LAZY_COMMANDS.values()}


def test_running_a_command_imports_its_module_only() -> None:
    loaded = _loaded_after(
        "from click.testing import CliRunner\nfrom engram.cli import main\n"
        "assert CliRunner().invoke(main, ['keys', '--help']).exit_code == 0"
    )
    commands = {module for module, _ in LAZY_COMMANDS.values()}
    assert set(loaded) & commands == {"engram.cli._keys"}


def test_a_heavy_name_is_imported_when_first_used() -> None:
    loaded = _loaded_after("from engram import Memory")
    assert "engram.memory" in loaded and "langchain_core" in _heavy(loaded)


def test_every_public_name_resolves_in_a_fresh_process() -> None:
    """``from engram import X`` for every X of ``__all__``, first thing in a new interpreter."""
    lines = [f"from engram import {name}" for name in engram.__all__]
    lines += ["import engram", *(f"assert engram.{n} is {n}" for n in engram.__all__)]
    subprocess.run([sys.executable, "-c", "\n".join(lines)], check=True)


def test_every_public_name_is_the_object_of_its_module() -> None:
    lazy: dict[str, str] = engram._LAZY
    for name in engram.__all__:
        value = getattr(engram, name)
        if name in lazy:
            assert getattr(importlib.import_module(lazy[name]), name) is value
    assert set(engram.__all__) <= set(dir(engram))
    with pytest.raises(AttributeError, match="no attribute 'Memroy'"):
        engram.Memroy  # noqa: B018 - the attribute access is the test


def _type_checking_imports() -> dict[str, str]:
    """Names the ``if TYPE_CHECKING:`` block of ``engram/__init__.py`` imports, by module."""
    tree = ast.parse((SOURCE / "__init__.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If))
    return {
        alias.asname or alias.name: node.module or ""
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_the_lazy_table_matches_the_type_checking_imports() -> None:
    assert _type_checking_imports() == engram._LAZY
    assert set(engram._LAZY) <= set(engram.__all__)


# --- the command table --------------------------------------------------------------------


def _registered(module: str) -> dict[str, click.Command]:
    group = click.Group()
    importlib.import_module(module).register(group)
    return dict(group.commands)


def test_every_command_module_is_in_the_lazy_table() -> None:
    """A module missing from LAZY_COMMANDS would be imported at every start of the CLI."""
    assert {module for module, _ in LAZY_COMMANDS.values()} == set(COMMAND_MODULES)


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_the_table_names_exactly_the_commands_of_each_module(module: str) -> None:
    named = {name for name, (owner, _) in LAZY_COMMANDS.items() if owner == module}
    assert set(_registered(module)) == named


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_the_tables_help_is_the_commands_own(name: str) -> None:
    module, text = LAZY_COMMANDS[name]
    command = _registered(module)[name]
    for limit in (30, 45, 60, 80, 200):
        shown = click.Command(name, help=text).get_short_help_str(limit)
        assert shown == command.get_short_help_str(limit)


HELP_TWICE = """
import click
from engram.cli import main

def text():
    with click.Context(main, info_name="engram", terminal_width=100) as ctx:
        return main.get_help(ctx)

before = text()
ctx = click.Context(main)
assert all(main.get_command(ctx, name) for name in main.list_commands(ctx))
assert main.get_command(ctx, "no-such-command") is None
assert text() == before, (before, text())
print(before)
"""


def test_help_is_the_same_before_and_after_the_commands_load() -> None:
    out = subprocess.run(
        [sys.executable, "-c", HELP_TWICE], capture_output=True, text=True, check=True
    ).stdout
    assert all(f"  {name} " in out for name in LAZY_COMMANDS)
