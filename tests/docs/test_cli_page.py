"""Every command of the CLI is documented on the CLI page, in its group's section."""

from __future__ import annotations

import re

import click
import pytest
from docs_blocks import ROOT

from engram.cli import main

SECTIONS = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("\n## ")[1:]


def _leaves() -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None, name
        if command.hidden:
            continue
        if isinstance(command, click.Group):
            found += [(name, leaf) for leaf, c in sorted(command.commands.items()) if not c.hidden]
        else:
            found.append((name,))
    return found


@pytest.mark.parametrize("path", _leaves(), ids=" ".join)
def test_every_command_is_documented_in_its_groups_section(path: tuple[str, ...]) -> None:
    group, leaf = (path[0], path[-1]) if len(path) > 1 else (path[0], path[0])
    headed = [
        s
        for s in SECTIONS
        if f"`engram {group}`" in s.splitlines()[0] or f"`{group}`" in s.splitlines()[0]
    ]
    assert headed, f"docs/cli.md has no section headed `engram {group}`"
    assert any(re.search(rf"(?<![\w-]){re.escape(leaf)}(?![\w-])", s) for s in headed), (
        f"engram {' '.join(path)} is not documented in docs/cli.md"
    )
