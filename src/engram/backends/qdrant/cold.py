"""Cold tier on Qdrant: one point per version, a sparse keyword vector, dense vectors.

The collection ``<name>`` holds every version (payload: the record and its filter
fields, see :mod:`~engram.backends.qdrant._points`) with a sparse ``keywords`` vector:
BM25 term weights computed here from engram's shared tokenisation, with Qdrant's IDF
modifier supplying the inverse document frequencies, so keyword search works offline
and in every script. Dense vectors live in ``<name>_dense_<dim>``, one collection per
dimension (Qdrant cannot add a vector to an existing collection, and re-embedding may
change the dimension), beside the same filter fields.

The keyword and the vector candidates are separate queries; the store fuses them by
reciprocal rank as on every backend. Every search filters inside Qdrant on the tenant
(an ``is_tenant`` payload index), the namespace, the validity view, the tags and the
value filter, so a filtered search returns ``k`` points whenever ``k`` qualify.

Qdrant has no transactions: :meth:`apply` stores the new versions (each dense copy, then
the record, which names the closures its write makes), makes them durable, then writes
the closures (each record, then its dense copies), then expiry. A crash part-way leaves
the old head beside the new one, never a key without one: reads take the head no other
names as replaced, and :func:`~engram.backends.qdrant._repair.repair` finishes the write at
the next ``setup()``. Reads trust the records collection: a dense hit whose record the
view does not admit is dropped. :meth:`atomically` holds the namespace with the shared
client's lock (local mode: one process) or a server-side lease.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import numpy as np
from qdrant_client import models

from engram._principal import scoped_tenant
from engram.backends.qdrant import _points as pt
from engram.backends.qdrant._client import (
    Handle,
    Leases,
    Location,
    open_local,
    open_server,
    parse,
    release_local,
)
from engram.backends.qdrant._repair import current, repair, shadowed
from engram.backends.qdrant._storage import Storage
from engram.errors import BackendError, StaleWriteError
from engram.recall.filters import matches
from engram.stores.cold.contract import (
    ChangeSet,
    ColdBackend,
    NewVersion,
    Scan,
    Vector,
    successors,
)
from engram.stores.cold.records import (
    EraseCounts,
    MemoryRecord,
    Namespace,
    from_epoch,
    join_namespace,
    to_epoch,
)


class QdrantColdBackend(ColdBackend):
    """Cold store in Qdrant collections: a server, qdrant-client's local mode or Edge."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self._handle: Handle | None = None
        self._store: Storage | None = None
        self._leases: Leases | None = None

    @classmethod
    def from_url(cls, url: str) -> QdrantColdBackend:
        """The backend a ``qdrant://host:port`` or ``qdrant+local:///folder`` URL names."""
        return cls(parse(url))

    # -- lifecycle --------------------------------------------------------------------

    def setup(self) -> None:
        if self._handle is None:
            if self.location.path is not None:
                self._handle = open_local(self.location.path, self.location.edge)
            else:
                assert self.location.url is not None
                self._handle = open_server(self.location.url)
                self._leases = Leases(self._handle, f"{self.location.collection}_locks")
        self._store = Storage(self._handle, self.location.collection)
        with self._handle.calls():
            self._store.setup()
            repair(self._store)
            self._store.sync()
            if self._leases is not None:
                self._leases.setup()

    def close(self) -> None:
        handle, self._handle, self._store = self._handle, None, None
        if handle is None:
            return
        if self.location.path is not None:
            release_local(self.location.path)
        else:
            handle.client.close()

    @property
    def storage(self) -> Storage:
        if self._store is None:
            raise BackendError("Qdrant cold backend is not set up; call setup() first")
        return self._store

    @property
    def folder(self) -> Path | None:
        """The local-mode folder (None for a server)."""
        return self.location.path

    @contextmanager
    def _calls(self) -> Iterator[Storage]:
        store = self.storage
        with store.handle.calls():
            yield store

    @contextmanager
    def _writes(self) -> Iterator[Storage]:
        """Like :meth:`_calls`, then the writes made durable (Edge flushes once here)."""
        with self._calls() as store:
            try:
                yield store
            finally:
                store.sync()

    @contextmanager
    def atomically(self, namespace: Namespace) -> Iterator[None]:
        """Local mode: the shared client's lock (its folder lock keeps other processes
        out). Server: a lease on the namespace every process respects."""
        store = self.storage
        if self._leases is None:
            with store.handle.lock:
                yield
            return
        with self._leases.hold(join_namespace(namespace)):
            yield

    # -- writes -----------------------------------------------------------------------

    def apply(self, changes: ChangeSet) -> None:
        """The new versions first, durable before any closure (see the module's docstring)."""
        with self._writes() as store:
            closures = {c.id: pt.closing(c.valid_to, c.superseded_by) for c in changes.closures}
            closures.update(self._check_heads(store, changes))
            if changes.inserts:
                store.insert(changes.inserts, _ends(changes))
                store.sync()
            for row_id, fields in closures.items():
                store.set_fields([row_id], fields)
            for row_id, expires_at in changes.expiry:
                store.set_fields([row_id], pt.expiring(expires_at))

    @staticmethod
    def _check_heads(store: Storage, changes: ChangeSet) -> dict[str, dict[str, object]]:
        """A second current version of a key (one this change set does not close) is a
        :class:`StaleWriteError`, as the SQL engines' unique index makes it; a head
        another names as replaced (a write a crash interrupted) is closed as that write
        would have: the closures returned."""
        closed = {c.id for c in changes.closures if c.superseded_by is not None}
        finish: dict[str, dict[str, object]] = {}
        by_namespace: dict[Namespace, set[str]] = {}
        for new in changes.inserts:
            if new.record.superseded_by is None:
                keys = by_namespace.setdefault(new.record.namespace, set())
                if new.record.key in keys:
                    raise StaleWriteError(f"two current versions of {new.record.key!r} at once")
                keys.add(new.record.key)
        for namespace, keys in by_namespace.items():
            fields = ["id", "head", pt.ENDS]
            found = store.scroll(pt.keys_filter(namespace, sorted(keys), heads=True), fields)
            unfinished = shadowed(found)
            if any(p["id"] not in closed and p["id"] not in unfinished for p in found):
                raise StaleWriteError(f"another writer changed a memory of {namespace} meanwhile")
            finish.update(unfinished)
        return finish

    def erase(self, prefix: Namespace, keys: Sequence[str] | None) -> EraseCounts:
        with self._writes() as store:
            selected = pt.erase_filter(prefix, keys)
            rows = store.scroll(selected, ["id", "ns", "key", "text", "model"])
            store.delete(selected)
        return EraseCounts(
            keys=len({(r["ns"], r["key"]) for r in rows}),
            versions=len(rows),
            vectors=sum(1 for r in rows if r.get("model")),
            keyword_entries=sum(1 for r in rows if r.get("text")),
        )

    def compact(self) -> bool:
        with self._calls() as store:
            return store.compact()

    def sweep(self, now: datetime) -> int:
        expired = models.Filter(must=[pt.within("expires", lte=now.timestamp())])
        with self._writes() as store:
            rows = store.scroll(expired, ["id", "sb"])
            if rows:  # (relinked first: a crash between leaves no successor missing)
                self._relink(store, successors({r["id"]: r.get("sb") for r in rows}))
                store.delete(expired)
        return len(rows)

    @staticmethod
    def _relink(store: Storage, links: Mapping[str, str | None]) -> None:
        """Versions that named a swept one as their successor name ``links``' instead."""
        named = models.FieldCondition(key="sb", match=models.MatchAny(any=list(links)))
        for row in store.scroll(models.Filter(must=[named]), ["id", "sb", "vt"]):
            ended = from_epoch(row.get("vt"))
            store.set_fields([row["id"]], pt.closing(ended, links[row["sb"]]))

    def set_vectors(self, ids: Sequence[str], vectors: Vector, model_id: str) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        with self._writes() as store:
            found = {r.id: r for r in store.records(ids)}
            pairs = [
                (NewVersion(_embedded(found[i], model_id), row), i)
                for i, row in zip(ids, matrix, strict=True)
                if i in found
            ]
            store.replace_vectors([n for n, _ in pairs])

    # -- reads ------------------------------------------------------------------------

    def heads(self, namespace: Namespace, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        if not keys:
            return {}
        with self._calls() as store:
            rows = store.scroll(pt.keys_filter(namespace, keys, heads=True))
        return {row["key"]: pt.record(row) for row in current(rows).values()}

    def fetch(self, ids: Sequence[str]) -> list[MemoryRecord]:
        with self._calls() as store:
            return store.records(ids)

    def scan(self, scan: Scan) -> list[MemoryRecord]:
        with self._calls() as store:
            selected = self._selection(store, scan)
            if selected is None:
                return []
            order = store.scroll(selected, ["id", "recorded", "head", pt.ENDS])
            if scan.view.as_of is None and not scan.view.include_superseded:
                hidden = shadowed(order)  # (the old head of a write under way)
                order = [r for r in order if r["id"] not in hidden]
            order.sort(key=lambda r: (-r["recorded"], r["id"]))
            page = [r["id"] for r in order[scan.offset : scan.offset + scan.limit]]
            found = {r.id: r for r in store.records(page)}
        return [found[i] for i in page if i in found]

    def history(self, namespace: Namespace, key: str) -> list[MemoryRecord]:
        with self._calls() as store:
            rows = [
                pt.record(r) for r in store.scroll(pt.keys_filter(namespace, [key], heads=False))
            ]
        return sorted(rows, key=lambda r: (r.recorded_at, r.id))

    def namespaces(self, prefix: Namespace) -> list[Namespace]:
        heads = models.Filter(must=[*pt.prefix_conditions(prefix), pt.match("head", 1)])
        with self._calls() as store:
            found = {r["ns"] for r in store.scroll(heads, ["ns"])}
        return sorted(tuple(ns.split("\x1f")) for ns in found)

    def stale(self, model_id: str, limit: int) -> list[MemoryRecord]:
        other = models.Filter(must=[pt.match("text", 1)], must_not=[pt.match("model", model_id)])
        with self._calls() as store:
            ids = sorted(r["id"] for r in store.scroll(other, ["id"]))[:limit]
            found = {r.id: r for r in store.records(ids)}
        return [found[i] for i in ids if i in found]

    def keyword_candidates(self, scan: Scan, query: str, k: int) -> list[str]:
        vector = pt.query_vector(query)
        if vector is None or k <= 0:
            return []
        with self._calls() as store:
            selected = self._selection(store, scan)
            if selected is None:
                return []
            hits = store.search(store.collection, pt.KEYWORDS, vector, selected, k)
        return [i for i, _ in hits]

    def vector_candidates(
        self, scan: Scan, vector: Vector, model_id: str, k: int
    ) -> list[tuple[str, float]]:
        return self._dense(scan, vector, model_id, k)

    def cosines(
        self, scan: Scan, ids: Sequence[str], vector: Vector, model_id: str
    ) -> dict[str, float]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        return dict(self._dense(scan, vector, model_id, len(wanted), pt.has_ids(wanted)))

    def _dense(
        self, scan: Scan, vector: Vector, model_id: str, k: int, *extra: models.Condition
    ) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the ``k`` selected points nearest ``vector``, best first."""
        query = np.asarray(vector, dtype=np.float32)
        if k <= 0 or query.ndim != 1 or not len(query):
            return []
        with self._calls() as store:
            collection = store.dense_collection(len(query), create=False)
            if collection is None:
                return []
            selected = self._selection(store, scan, pt.match("model", model_id), *extra)
            if selected is None:
                return []
            hits = store.search(collection, pt.DENSE, query.tolist(), selected, k)
            return _trusted(store, scan, model_id, hits)

    def _selection(
        self, store: Storage, scan: Scan, *extra: models.Condition
    ) -> models.Filter | None:
        """The Qdrant filter of ``scan`` (None: nothing qualifies). String orderings,
        which Qdrant cannot test, are evaluated here over the pre-filtered versions and
        join the filter as the ids they admit."""
        base = pt.scan_filter(scan, None if scan.prefix else scoped_tenant(), *extra)
        left = pt.split_conditions(scan.conditions)[1]
        if not left:
            return base
        rows = [pt.record(r) for r in store.scroll(base)]
        admitted = [r.id for r in rows if matches(left, r.value)]
        if not admitted:
            return None
        return models.Filter(must=[base, pt.has_ids(admitted)])

    def clear_caches(self) -> int:
        return 0


def _ends(changes: ChangeSet) -> dict[str, list[tuple[str, float | None]]]:
    """By new version, the versions ``changes`` close as it supersedes them, and their ends."""
    new = {n.record.id for n in changes.inserts}
    out: dict[str, list[tuple[str, float | None]]] = {}
    for closure in changes.closures:
        if closure.superseded_by in new:
            out.setdefault(closure.superseded_by, []).append(
                (closure.id, to_epoch(closure.valid_to))
            )
    return out


def _trusted(
    store: Storage, scan: Scan, model_id: str, hits: list[tuple[str, float]]
) -> list[tuple[str, float]]:
    """The dense ``hits`` whose record (the truth: a dense copy's fields are written after
    it) the view admits with the same model."""
    found = {p["id"]: p for p in store.payloads([i for i, _ in hits])}
    return [
        (i, score)
        for i, score in hits
        if i in found and found[i].get("model") == model_id and pt.admits(scan.view, found[i])
    ]


def _embedded(record: MemoryRecord, model_id: str) -> MemoryRecord:
    return replace(record, embedding_model=model_id)
