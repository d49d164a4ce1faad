"""``engram docs``: a thin skin over the document store."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engram import Principal
from engram.cli import main


def _run(home: Path, *args: str, stdin: str | None = None) -> str:
    result = CliRunner().invoke(
        main, ["docs", *args, "--tenant", "acme", "--home", str(home)], input=stdin
    )
    assert result.exit_code == 0, result.output
    return result.stdout


def test_docs_commands_end_to_end(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    assert "created PROGRESS.md" in _run(home, "init")
    assert (home / "documents/acme/research/README.md").is_file()
    _run(home, "write", "research/rates.md", "--meta", "title=Rates", stdin="# Rates\n\nhawkish\n")
    assert _run(home, "read", "research/rates.md") == "---\ntitle: Rates\n---\n# Rates\n\nhawkish\n"
    assert _run(home, "list", "research/*").split() == [
        "41",
        "research/README.md",
        "38",
        "research/rates.md",
    ]
    assert _run(home, "search", "hawkish", "-k", "1").startswith("research/rates.md:6-6\t[Rates]")
    assert "moved" in _run(home, "move", "research/rates.md", "learnings/rates.md")
    assert _run(home, "delete", "learnings") == "deleted 2 document(s)\n"
    assert "learnings/" not in _run(home, "list")


def test_docs_errors_are_one_line(tmp_path: Path) -> None:
    _run(tmp_path, "init")
    result = CliRunner().invoke(
        main, ["docs", "read", "../etc/passwd", "--tenant", "acme", "--home", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert "PathEscapeError: path must not contain '..'" in result.output


@pytest.mark.postgres
def test_docs_sync_to_postgres(tmp_path: Path, app_url: str) -> None:
    home = tmp_path / ".engram"
    _run(home, "init")
    out = _run(home, "sync", "--to", app_url)
    assert out.count("upserted ") == 6 and out.endswith("0 unchanged\n")
    _run(home, "delete", "conventions")
    result = CliRunner().invoke(
        main, ["docs", "sync", "--to", app_url, "--tenant", "acme", "--home", str(home)]
    )
    assert result.stdout == "deleted conventions/README.md\n5 unchanged\n"
    assert "sync: 100%" in result.stderr and "5/5" in result.stderr  # progress: stderr only
    from engram.backends.postgres.documents import PostgresDocumentStore

    with PostgresDocumentStore(app_url) as served:  # the copy is in the database
        paths = [d.path for d in served.list(Principal("acme", "cli"))]
    assert len(paths) == 5 and "conventions/README.md" not in paths
