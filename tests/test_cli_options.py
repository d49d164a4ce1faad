"""One vocabulary across command groups: ``--home``, ``--url``, ``--tenant``, ``--user`` with
the same meaning everywhere, and ``ENGRAM_HOME`` / ``ENGRAM_TENANT`` / ``ENGRAM_USER`` shown
in ``--help`` and honoured by every group."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from engram.cli import main

VARIABLES = {"home": "ENGRAM_HOME", "tenant": "ENGRAM_TENANT", "user": "ENGRAM_USER"}


def _subcommands(group: click.Group) -> list[tuple[str, click.Command]]:
    """A group's commands through click's API (the CLI imports a command's module on demand)."""
    ctx = click.Context(group)
    found = ((name, group.get_command(ctx, name)) for name in group.list_commands(ctx))
    return sorted((name, command) for name, command in found if command is not None)


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in _subcommands(group):
        if command.hidden:
            continue
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield (*prefix, name)


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, path
        command = found
    return command


PRINCIPAL_COMMANDS = [
    p for p in _commands(main) if any(o.name == "tenant" for o in _command(p).params)
]


def test_the_principal_commands_are_every_group_but_eval() -> None:
    groups = {p[0] if len(p) > 1 else "(top)" for p in PRINCIPAL_COMMANDS}
    assert groups == {"(top)", "agent", "docs", "keys", "memory", "review", "threads"}
    assert len(PRINCIPAL_COMMANDS) > 25


@pytest.mark.parametrize("path", PRINCIPAL_COMMANDS, ids=" ".join)
def test_every_principal_command_takes_home_tenant_user_from_the_same_variables(
    path: tuple[str, ...],
) -> None:
    options = {o.name: o for o in _command(path).params if isinstance(o, click.Option)}
    for name, variable in VARIABLES.items():
        assert name in options, f"engram {' '.join(path)} has no --{name}"
        assert options[name].envvar == variable and options[name].show_envvar
        assert options[name].opts[0] == f"--{name}"
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0
    for variable in VARIABLES.values():
        assert variable in result.output


def test_every_group_honours_the_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "elsewhere"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    monkeypatch.setenv("ENGRAM_TENANT", "acme")
    monkeypatch.setenv("ENGRAM_USER", "alice")
    monkeypatch.delenv("ENGRAM_HOT_URL", raising=False)

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, list(args))
        assert result.exit_code == 0, f"{args}: {result.output}"
        return result.output

    assert run("remember", "I live in Oslo", "--embedder", "hash").startswith("added")
    assert "I live in Oslo" in run("memory", "recall", "Oslo", "--embedder", "hash")
    run("agent", "run", "Compare NVDA and AMD", "--thread", "t1", "--embedder", "hash")
    listed = run("threads", "list-threads")
    assert listed.startswith("t1\tacme/alice\t")
    run("docs", "write", "notes/today.md", "--text", "# Today\n\nOslo weather\n")
    assert "notes/today.md" in run("docs", "list")
    exported = json.loads(run("export", "--embedder", "hash"))
    assert exported["principal"] == {"tenant_id": "acme", "user_id": "alice"}
    assert [t["thread_id"] for t in exported["threads"]] == ["t1"]
    assert run("review", "list", "--embedder", "hash") == "(nothing held for review)\n"
    assert "I live in Oslo" in run("memory", "list")
    assert not (tmp_path / ".engram").exists() and (home / "checkpoints.db").is_file()


def test_memory_forget_was_renamed_to_say_its_reach(tmp_path: Path) -> None:
    url = ["--url", f"sqlite:///{tmp_path / 'm.db'}", "--tenant", "a", "--user", "b"]
    added = CliRunner().invoke(
        main, ["memory", "remember", "Likes tea", *url, "--embedder", "hash"]
    )
    assert added.exit_code == 0, added.output
    old = CliRunner().invoke(main, ["memory", "forget", "--yes", *url])
    assert old.exit_code == 2
    assert "engram memory forget-facts" in old.output and "engram forget erases" in old.output
    new = CliRunner().invoke(main, ["memory", "forget-facts", "--yes", *url])
    assert new.exit_code == 0 and new.output.startswith("keys=1 ")


def _required(name: str) -> list[tuple[str, ...]]:
    return [
        p
        for p in PRINCIPAL_COMMANDS
        if any(o.name == name and o.required for o in _command(p).params)
    ]


def _placeholders(command: click.Command) -> list[str]:
    """A value for each argument and other required option of ``command``."""
    found = [p for p in command.params if p.required and p.name not in VARIABLES]
    options = [[p.opts[0], "x"] for p in found if isinstance(p, click.Option)]
    return [v for p in found if isinstance(p, click.Argument) for v in ["x"] * max(p.nargs, 1)] + [
        v for pair in options for v in pair
    ]


@pytest.mark.parametrize("name", ["tenant", "user"])
def test_a_missing_tenant_or_user_is_missing_everywhere(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for variable in VARIABLES.values():
        monkeypatch.delenv(variable, raising=False)
    commands = _required(name)
    assert len(commands) > 10 and ("erasures",) in _required("tenant")
    other = {"tenant": ["--user", "alice"], "user": ["--tenant", "acme"]}[name]
    for path in commands:
        command = _command(path)
        given = other if any(o.name == other[0][2:] for o in command.params) else []
        result = CliRunner().invoke(main, [*path, *_placeholders(command), *given])
        assert result.exit_code == 2, f"{' '.join(path)}: {result.output}"
        assert f"Missing option '--{name}'" in result.output, f"{' '.join(path)}: {result.output}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("tenant", ["../x", "", "a/b", "x" * 200])
def test_erasures_refuses_a_tenant_that_is_no_id(tenant: str, tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    who = ["--tenant", "acme", "--user", "alice", "--home", home, "--embedder", "hash"]
    assert CliRunner().invoke(main, ["remember", "a fact", *who]).exit_code == 0
    result = CliRunner().invoke(main, ["erasures", "--tenant", tenant, "--home", home])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert result.output.startswith("Error: InvalidInputError: tenant_id")
