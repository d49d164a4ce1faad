"""The package's front: public names, identity, URLs, the CLI's help."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import engram
from engram.cli import main
from engram.config import default_url, parse_url


def test_public_names_are_pinned() -> None:
    assert engram.__all__ == sorted(engram.__all__)
    for name in engram.__all__:
        assert hasattr(engram, name), name


def test_every_error_derives_from_one_root() -> None:
    errors = [getattr(engram, n) for n in engram.__all__ if n.endswith("Error")]
    assert errors and all(issubclass(e, engram.EngramError) for e in errors)


@pytest.mark.parametrize("bad", ["", "a/b", "../x", " x", "x" * 129, ".hidden", "a\x00b"])
def test_principal_rejects_unsafe_ids(bad: str) -> None:
    with pytest.raises(engram.InvalidInputError):
        engram.Principal(tenant_id=bad, user_id="u1")
    with pytest.raises(engram.InvalidInputError):
        engram.Principal(tenant_id="t1", user_id=bad)


def test_principal_is_a_value() -> None:
    assert engram.Principal("acme", "alice") == engram.Principal("acme", "alice")
    assert engram.Principal("acme", "alice").namespace == ("acme", "alice")


def test_urls_pick_backends() -> None:
    assert parse_url("sqlite:///.engram/memory.db").path == Path(".engram/memory.db")
    assert parse_url("sqlite:////var/db/m.db").path == Path("/var/db/m.db")
    assert parse_url("postgres://u@h/db").dsn == "postgresql://u@h/db"
    assert parse_url("memory://").scheme == "memory"
    assert default_url("hot") == "sqlite:///.engram/checkpoints.db"


@pytest.mark.parametrize("bad", ["nope", "://h/db", "9sql://h", "sqlite://", "sqlite:///"])
def test_bad_urls_raise_config_error(bad: str) -> None:
    with pytest.raises(engram.ConfigError):
        parse_url(bad)


def test_a_scheme_no_tier_serves_is_refused_by_each_tier_naming_its_engines() -> None:
    from engram.stores.cold import backend_for
    from engram.stores.documents import open_documents
    from engram.stores.hot import open_checkpointer

    assert parse_url("MySQL+x://h/db").scheme == "mysql"
    with pytest.raises(engram.ConfigError, match=r"cold tier has no mysql backend; use .*sqlite"):
        backend_for("mysql://h/db")
    with pytest.raises(engram.ConfigError, match=r"hot tier has no mysql backend; use .*redis"):
        open_checkpointer("mysql://h/db").__enter__()
    with pytest.raises(engram.ConfigError, match="document tier has no mysql backend"):
        open_documents("mysql://h/db")


def _commands(group: object, prefix: str = "") -> list[tuple[str, object]]:
    import click

    found: list[tuple[str, object]] = []
    assert isinstance(group, click.Group)
    for name, cmd in group.commands.items():
        found.append((prefix + name, cmd))
        if isinstance(cmd, click.Group):
            found.extend(_commands(cmd, prefix + name + " "))
    return found


def test_every_cli_command_has_help_with_an_example() -> None:
    import click

    for name, cmd in _commands(main):
        assert isinstance(cmd, click.Command)
        assert cmd.help and cmd.help.strip(), f"`engram {name}` has no help"
        if not isinstance(cmd, click.Group):
            assert "Example:" in cmd.help, f"`engram {name}` help lacks an Example:"


def test_cli_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and "0.1.0" in result.output
