"""Finishing writes a crash interrupted (pure planning, then :func:`repair`'s few calls).

A write stores its new versions (dense copy first, then the record) before it closes
the versions they replace, so a crash leaves a key with its old head and its new one,
never with none. The new record names the closures its write makes (``ends``: pairs
of a replaced version's id and the end it gets), so anyone can finish them:

- a reader resolves two heads of a key to the one no other names (:func:`current`);
- a writer that supersedes the key closes the named one too (``cold.apply``);
- :func:`repair`, at every ``setup()``, closes them as the write would have, re-opens
  a version whose successor is missing (a crash of a write that closed first, as engram
  before this one did), writes again each dense copy whose fields differ from its record
  (engram_cold is the truth), deletes dense copies without a record, and marks a record
  whose dense copy is missing as not embedded, so ``re_embed`` gives it one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from qdrant_client import models

from engram.backends.qdrant import _points as pt
from engram.backends.qdrant._storage import Storage

Row = Mapping[str, Any]
Fields = dict[str, Any]

READ = ("id", "ns", "key", "recorded", "opens", pt.ENDS, *pt.MUTABLE)
"""The payload fields the repair reads of every record."""


def shadowed(rows: Iterable[Row]) -> dict[str, Fields]:
    """Of the heads ``rows``, those another of them names as replaced (``ends``): the
    closure its interrupted write had still to make."""
    found = {r["id"]: r for r in rows if r.get("head") == 1}
    out: dict[str, Fields] = {}
    for row in found.values():
        for old, ended in row.get(pt.ENDS) or ():
            if old in found and old != row["id"]:
                out[old] = pt.closing_epoch(ended, row["id"])
    return out


def current(rows: Iterable[Row]) -> dict[tuple[str, str], Row]:
    """The head of each key among the heads ``rows``: the one no other names as replaced,
    the newest (recorded, id) if two still are."""
    heads = [r for r in rows if r.get("head") == 1]
    hidden = shadowed(heads)
    out: dict[tuple[str, str], Row] = {}
    for row in sorted(heads, key=lambda r: (r["recorded"], r["id"])):
        if row["id"] not in hidden:
            out[(row["ns"], row["key"])] = row
    return out


def _by_key(main: Mapping[str, Row]) -> dict[tuple[str, str], list[Row]]:
    keys: dict[tuple[str, str], list[Row]] = {}
    for row in sorted(main.values(), key=lambda r: (r["recorded"], r["id"])):
        keys.setdefault((row["ns"], row["key"]), []).append(row)
    return keys


def dangling(main: Mapping[str, Row]) -> dict[str, Fields]:
    """Versions whose successor is missing: linked to the next version of their key that
    remains (keeping their end), or re-opened when none does (the write that closed
    them never stored its version)."""
    out: dict[str, Fields] = {}
    for versions in _by_key(main).values():
        for n, row in enumerate(versions):
            if row.get("sb") is None or row["sb"] in main:
                continue
            later = versions[n + 1 :]
            out[row["id"]] = (
                pt.closing_epoch(row.get("vt"), later[0]["id"]) if later else pt.opened()
            )
    return out


def doubled(main: Mapping[str, Row]) -> dict[str, Fields]:
    """Closures of the older heads of a key with two: those named by another (their end
    as named), else all but the newest (ended where the newest starts, or before)."""
    out, keys = shadowed(main.values()), _by_key(main)
    for newest in current(main.values()).values():
        for row in keys[(newest["ns"], newest["key"])]:
            if row.get("head") != 1 or row["id"] == newest["id"] or row["id"] in out:
                continue
            start = max(newest["opens"], row["opens"])
            ended = start if row.get("vt") is None else min(start, row["vt"])
            out[row["id"]] = pt.closing_epoch(ended, newest["id"])
    return out


def drifted(main: Mapping[str, Row], dense: Mapping[str, Row]) -> dict[str, Fields]:
    """The record's fields for each dense copy whose fields differ from them."""
    out: dict[str, Fields] = {}
    for point_id, copy in dense.items():
        row = main.get(point_id)
        if row is not None and any(copy.get(f) != row.get(f) for f in pt.MUTABLE):
            out[point_id] = {f: row.get(f) for f in pt.MUTABLE}
    return out


def repair(store: Storage) -> None:
    """Finish what interrupted writes left (see the module's docstring)."""
    main = {r["id"]: dict(r) for r in store.scroll(models.Filter(), READ)}
    for fixes in (dangling(main), doubled(main)):
        _write(store, fixes, store.collections())
        for point_id, fields in fixes.items():
            main[point_id].update(fields)
    copies: set[str] = set()
    for collection in store.dense_collections():
        dense = {r["id"]: r for r in store.scroll(models.Filter(), READ, collection)}
        _write(store, drifted(main, dense), [collection])
        store.delete_ids(collection, [i for i in dense if i not in main])
        copies.update(dense)
    lost = [i for i, r in main.items() if r.get("model") and i not in copies]
    _write(store, {i: {"model": None} for i in lost}, [store.collection])


def _write(store: Storage, fixes: Mapping[str, Fields], collections: Sequence[str]) -> None:
    """Set each version's fields (one call per distinct set of fields)."""
    groups: dict[str, list[str]] = {}
    for point_id, fields in fixes.items():
        groups.setdefault(json.dumps(fields, sort_keys=True), []).append(point_id)
    for shared, ids in groups.items():
        store.set_fields(ids, json.loads(shared), collections=collections)
