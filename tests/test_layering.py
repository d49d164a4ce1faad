"""DESIGN.md's layout rules, checked on the source (see ``tests/import_graph.py``)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from import_graph import Arrow, arrows, package_graph, violations

PACKAGES = (
    "engram",
    "engram.memory",
    "engram.tools",
    "engram.stores.hot",
    "engram.stores.cold",
    "engram.stores.documents",
    "engram.stores.keys",
    "engram.stores.audit",
    "engram.recall",
    "engram.context",
    "engram.agent",
    "engram.server.inspector",
)


def test_the_source_keeps_every_layering_rule() -> None:
    found = list(arrows())
    assert len(found) > 500  # the whole source was read
    assert violations(found) == []


def test_the_inspector_uses_the_layer_and_public_tier_modules_only() -> None:
    """Pages go through the memory layer and the server's own authentication: no
    backend, no tier's private module; and only the app factory mounts them."""
    found = list(arrows())
    inspector = [a for a in found if a.source.startswith("engram.server.inspector")]
    assert len(inspector) > 20
    reached = {a.target for a in inspector if a.target.startswith("engram.")}
    assert not {t for t in reached if t.startswith("engram.backends")}
    assert not {t for t in reached if t.startswith("engram.stores.") and "._" in t}
    mounts = {
        a.source
        for a in found
        if a.target.startswith("engram.server.inspector")
        and not a.source.startswith("engram.server.inspector")
    }
    assert mounts == {"engram.server.app"}


def test_only_open_modules_under_stores_name_a_backend() -> None:
    graph = package_graph(list(arrows()))
    tiers = {s for s, t in graph if s.startswith("stores.") and t.startswith("backends.")}
    assert tiers == {"stores.hot", "stores.cold", "stores.documents", "stores.keys", "stores.audit"}
    named = {a.source for a in arrows() if a.target.startswith("engram.backends")}
    assert {m for m in named if m.startswith("engram.stores.")} == {
        "engram.stores.hot._open",
        "engram.stores.cold._open",
        "engram.stores.documents._open",
        "engram.stores.keys._open",
        "engram.stores.audit._open",
    }


@pytest.mark.parametrize(
    ("source", "target", "rule"),
    [
        ("engram.backends.sqlite.cold", "engram.stores.cold._store", "private"),
        ("engram.memory._layer", "engram.recall._scoring", "private"),
        ("engram.agent._graph", "engram.memory._tiers", "private"),
        ("engram.backends.postgres.documents", "engram.backends.files._safepath", "private"),
        ("engram.backends.postgres.documents", "engram.backends.files", "another backend"),
        ("engram.backends.sqlite.cold", "engram.memory", "above the stores"),
        ("engram.backends.sqlite.cold", "engram", "above the stores"),
        ("engram.backends.postgres.documents", "engram.stores.cold", "another tier"),
        ("engram.stores.cold._store", "engram.backends.sqlite.cold", "names a backend"),
        ("engram.memory._tiers", "psycopg", "driver"),
        ("engram.stores.hot._threads", "langgraph.checkpoint.sqlite", "driver"),
    ],
)
def test_each_rule_catches_its_violation(source: str, target: str, rule: str) -> None:
    problems = violations([Arrow(source, target, 7)])
    assert problems and all(p.startswith(f"{source}:7") for p in problems)
    assert any(rule in p for p in problems)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("engram.backends.sqlite.cold", "engram.backends.sqlite._vectors"),
        ("engram.stores.cold._store", "engram.stores.cold._pipeline"),
        ("engram.backends.sqlite.cold", "engram.stores.cold.contract"),
        ("engram.backends.sqlite.cold", "engram.recall.filters"),
        ("engram.stores.hot._open", "engram.backends.sqlite.hot"),
        ("engram.cli._threads", "engram._principal"),
        ("engram.backends.sqlite.hot", "sqlite3"),
    ],
)
def test_allowed_imports_pass(source: str, target: str) -> None:
    assert violations([Arrow(source, target, 1)]) == []


@pytest.mark.parametrize("name", PACKAGES)
def test_public_names_are_exactly_all(name: str) -> None:
    package = importlib.import_module(name)
    exported = set(package.__all__)
    for public in exported:  # a lazily imported name enters vars() once asked for
        getattr(package, public)
    names = vars(package).items()
    public = {n for n, value in names if not n.startswith("_") and not inspect.ismodule(value)}
    assert package.__all__ == sorted(package.__all__, key=lambda n: (not n.isupper(), n))
    assert public == exported
