"""``engram docs ...``: the document tier from the shell.

A thin skin over the document tier's file backend
(:func:`engram.stores.documents.open_documents`); each command is the kebab-case name of
one method (``sync`` is :func:`engram.stores.documents.sync`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from engram._principal import Principal
from engram.cli._embedding import embedder_option, embedder_or_none
from engram.cli._existing import existing_folder
from engram.cli._options import home_option, tenant_option, user_option
from engram.cli._progress import progress_of_total, quiet_option
from engram.cli._streams import read_stdin
from engram.config import default_documents_root
from engram.errors import InvalidInputError
from engram.stores.documents import open_documents, setup_documents, sync

F = TypeVar("F", bound=Callable[..., Any])


def _options(command: F) -> F:
    for decorator in (
        embedder_option("none", "Embedder for semantic search.", keyword_only=True),
        click.option(
            "--root",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Folder holding one document root per tenant (default: HOME/documents).",
        ),
        home_option("documents/ (unless --root) and the index in index/"),
        user_option(default="cli"),
        tenant_option(),
    ):
        command = decorator(command)
    return command


@contextmanager
def _store(opts: dict[str, Any], *, create: bool = False) -> Iterator[tuple[Any, Principal]]:
    """The file store; only ``create`` (init, write) may start a new document root."""
    principal = Principal(opts.pop("tenant"), opts.pop("user"))
    embedder = embedder_or_none(opts.pop("embedder"))
    root, home = opts.pop("root"), opts.pop("home")
    root = root or default_documents_root(home)
    if not create:
        existing_folder(root, "document root")
    with open_documents(root, home=home, embedder=embedder) as store:
        yield store, principal


def _metadata(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"--meta takes key=value, got {pair!r}")
        out[key] = value
    return out


@click.group("docs")
def docs() -> None:
    """Markdown documents a project keeps (the document tier)."""


@docs.command("init")
@_options
def init(**opts: Any) -> None:
    """Create the standard layout: README, PROGRESS, user-profiles/, research/...

    Example: engram docs init --tenant acme
    """
    with _store(opts, create=True) as (store, principal):
        for path in store.init(principal):
            click.echo(f"created {path}")


@docs.command("write")
@click.argument("path")
@click.option("--text", default=None, help="The body (default: read standard input).")
@click.option("--meta", "meta", multiple=True, help="Front-matter entry key=value.")
@click.option("--no-overwrite", is_flag=True, help="Fail if the document exists.")
@_options
def write(
    path: str, text: str | None, meta: tuple[str, ...], no_overwrite: bool, **opts: Any
) -> None:
    """Write a document atomically (metadata as YAML front matter).

    Example: echo "# Rates" | engram docs write research/rates.md --tenant acme --meta title=Rates
    """
    body = read_stdin("the document") if text is None else text
    with _store(opts, create=True) as (store, principal):
        info = store.write(principal, path, body, _metadata(meta), overwrite=not no_overwrite)
        click.echo(f"wrote {info.path} ({info.size} bytes)")


@docs.command("read")
@click.argument("path")
@_options
def read(path: str, **opts: Any) -> None:
    """Print a document's text, front matter included.

    Example: engram docs read PROGRESS.md --tenant acme
    """
    with _store(opts) as (store, principal):
        click.echo(store.read_text(principal, path), nl=False)


@docs.command("list")
@click.argument("pattern", default="**")
@_options
def list_(pattern: str, **opts: Any) -> None:
    """List documents matching a glob (``*`` within a folder, ``**`` across folders).

    Example: engram docs list "research/**/*.md" --tenant acme
    """
    with _store(opts) as (store, principal):
        for info in store.list(principal, pattern):
            click.echo(f"{info.size}\t{info.path}")


@docs.command("search")
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "semantic"]), default="hybrid")
@_options
def search(query: str, k: int, mode: str, **opts: Any) -> None:
    """Search paragraphs: path, line span, heading and the matching text.

    Example: engram docs search "rate outlook" --tenant acme -k 3
    """
    with _store(opts) as (store, principal):
        for hit in store.search(principal, query, k=k, mode=mode):
            click.echo(f"{hit.path}:{hit.line_start}-{hit.line_end}\t[{hit.heading}]")
            click.echo("    " + hit.text.replace("\n", "\n    "))


@docs.command("delete")
@click.argument("path")
@_options
def delete(path: str, **opts: Any) -> None:
    """Delete a document or a whole folder.

    Example: engram docs delete research/old.md --tenant acme
    """
    with _store(opts) as (store, principal):
        click.echo(f"deleted {store.delete(principal, path)} document(s)")


@docs.command("move")
@click.argument("source")
@click.argument("target")
@_options
def move(source: str, target: str, **opts: Any) -> None:
    """Move or rename a document or folder (never overwrites).

    Example: engram docs move research/draft.md learnings/rates.md --tenant acme
    """
    with _store(opts) as (store, principal):
        store.move(principal, source, target)
        click.echo(f"moved {source} -> {target}")


@docs.command("sync")
@click.option("--to", "url", required=True, help="PostgreSQL URL of the application role.")
@click.option(
    "--admin-url", default=None, help="Run setup() first with this admin URL (schema + role)."
)
@quiet_option
@_options
def sync_(url: str, admin_url: str | None, quiet: bool, **opts: Any) -> None:
    """Author in files, serve from PostgreSQL: upsert changed files, remove deleted ones
    (progress on stderr).

    Example: engram docs sync --tenant acme --to postgresql://engram_app@db/engram
    """
    if admin_url is not None:
        setup_documents(admin_url, scheme="postgresql")
    embedder = embedder_or_none(opts["embedder"])  # the PostgreSQL copy is embedded the same way
    with (
        _store(opts) as (files, principal),
        open_documents(url, scheme="postgresql", embedder=embedder) as target,
        progress_of_total("sync", " docs", quiet=quiet) as start,
    ):
        report = sync(files, target, principal, progress=start)
    for path in report.upserted:
        click.echo(f"upserted {path}")
    for path in report.deleted:
        click.echo(f"deleted {path}")
    click.echo(f"{report.unchanged} unchanged")


def register(main: click.Group) -> None:
    """Add ``engram docs`` to the CLI."""
    main.add_command(docs)
