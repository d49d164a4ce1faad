"""The Qdrant calls of the cold backend: collections, points, searches, compaction.

Every driver error becomes a :class:`~engram.errors.BackendError` here. The caller
holds the handle's lock around each call (local mode is not thread-safe).
"""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from typing import Any

from qdrant_client import models
from qdrant_client.http.exceptions import ApiException

from engram.backends.qdrant import _points as pt
from engram.backends.qdrant._client import Handle
from engram.errors import BackendError, EngramError
from engram.stores.cold.contract import NewVersion
from engram.stores.cold.records import MemoryRecord

PAGE = 1024
"""Points per scroll page and per upsert request."""


@contextmanager
def _errors(what: str) -> Iterator[None]:
    try:
        yield
    except EngramError:
        raise
    except (ApiException, ValueError, RuntimeError, KeyError, OSError) as exc:
        raise BackendError(f"Qdrant cold store {what} failed: {exc}") from exc


class Storage:
    """The collections of one cold store: ``name`` (every version, sparse keywords)
    and ``name_dense_<dim>`` (dense vectors with the filter fields)."""

    def __init__(self, handle: Handle, collection: str) -> None:
        self.handle = handle
        self.collection = collection
        self._dense: dict[int, str] = {}

    @property
    def client(self) -> Any:
        """A ``QdrantClient`` (server or local mode) or an Edge client of the same calls."""
        return self.handle.client

    def setup(self) -> None:
        with _errors("setup"):
            if not self.client.collection_exists(self.collection):
                self.client.create_collection(
                    self.collection,
                    vectors_config={},
                    sparse_vectors_config={
                        pt.KEYWORDS: models.SparseVectorParams(modifier=models.Modifier.IDF)
                    },
                )
                self._index(self.collection, [*pt.FILTER_FIELDS, pt.KEYWORD_FORMAT_INDEX])
            self._find_dense()
            self.handle.tune()
            self._rekey()
            self.sync()

    def _find_dense(self) -> None:
        lead = f"{self.collection}_dense_"
        for found in self.client.get_collections().collections:
            if found.name.startswith(lead) and found.name[len(lead) :].isdigit():
                self._dense[int(found.name[len(lead) :])] = found.name

    def _index(self, collection: str, fields: Sequence[tuple[str, Any]] = pt.FILTER_FIELDS) -> None:
        """The payload indexes (local mode keeps them as schema only: it scans)."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
            for name, schema in fields:
                self.client.create_payload_index(collection, name, field_schema=schema)

    def _rekey(self) -> None:
        """Write again the points of an older keyword format (words only, before stems):
        each with its sparse vector from its text and its payload as it was, a page at a
        time until none is left. The first time, the format field gets its index."""
        stale = models.Filter(must_not=[pt.match(pt.KEYWORD_FORMAT_FIELD, pt.KEYWORD_FORMAT)])
        indexed = False
        while True:
            points, _ = self._page(stale, None, True)  # the rewritten leave the filter
            if not points:
                return
            if not indexed:
                self._index(self.collection, [pt.KEYWORD_FORMAT_INDEX])
                indexed = True
            self._upsert(self.collection, [pt.rekeyed(p.id, p.payload or {}) for p in points])

    def dense_collection(self, dim: int, *, create: bool) -> str | None:
        """The collection of ``dim``-dimensional vectors (created when asked)."""
        name = self._dense.get(dim)
        if name is None:
            with _errors("read"):
                self._find_dense()  # another store may have created it
            name = self._dense.get(dim)
        if name is not None or not create:
            return name
        name = f"{self.collection}_dense_{dim}"
        with _errors("setup"):
            if not self.client.collection_exists(name):
                params = models.VectorParams(size=dim, distance=models.Distance.DOT)
                self.client.create_collection(name, vectors_config={pt.DENSE: params})
                self._index(name)
            self.handle.tune()
        self._dense[dim] = name
        return name

    def collections(self) -> list[str]:
        """The records collection, then every dense collection."""
        return [self.collection, *self.dense_collections()]

    def dense_collections(self) -> list[str]:
        return [self._dense[dim] for dim in sorted(self._dense)]

    # -- writes -----------------------------------------------------------------------

    def sync(self) -> None:
        """Make the writes so far durable (Edge flushes its shards; others already are)."""
        flush = getattr(self.client, "sync", None)
        if flush is not None:
            with _errors("write"):
                flush()

    def insert(
        self,
        inserts: Sequence[NewVersion],
        ends: Mapping[str, Sequence[tuple[str, float | None]]] | None = None,
    ) -> None:
        """Upsert new versions: their dense vectors first, then the records with their
        keywords (a record is never without the dense copy it names); ``ends``: by new
        version, the versions its write closes and their ends (kept in its record)."""
        points: list[models.PointStruct] = []
        dense: dict[int, list[models.PointStruct]] = {}
        for new in inserts:
            record, embedded = (
                new.record,
                new.vector is not None and bool(new.record.embedding_model),
            )
            keywords = pt.document_vector(record.text)
            vectors: dict[str, Any] = {} if keywords is None else {pt.KEYWORDS: keywords}
            pid = pt.point_id(record.id)
            closes = (ends or {}).get(record.id, ())
            body = pt.payload(record, embedded, closes)
            points.append(models.PointStruct(id=pid, vector=vectors, payload=body))
            if embedded:
                assert new.vector is not None
                vector = [float(x) for x in new.vector]
                point = models.PointStruct(
                    id=pid, vector={pt.DENSE: vector}, payload=pt.filter_payload(record, True)
                )
                dense.setdefault(len(vector), []).append(point)
        for dim in dense:
            self.dense_collection(dim, create=True)
        for dim, rows in dense.items():
            self._upsert(self._dense[dim], rows)
        self._upsert(self.collection, points)

    def _upsert(self, collection: str, points: Sequence[models.PointStruct]) -> None:
        with _errors("write"):
            for start in range(0, len(points), PAGE):
                self.client.upsert(collection, list(points[start : start + PAGE]))

    def set_fields(
        self,
        ids: Sequence[str],
        fields: Mapping[str, Any],
        *,
        dense: bool = True,
        collections: Sequence[str] | None = None,
    ) -> None:
        """Set payload ``fields`` of versions ``ids`` in ``collections`` (default: the
        records, then the dense collections unless not ``dense``)."""
        if not ids:
            return
        if collections is None:
            collections = self.collections() if dense else [self.collection]
        only = models.FilterSelector(filter=models.Filter(must=[pt.has_ids(ids)]))
        with _errors("write"):
            for collection in collections:
                self.client.set_payload(collection, dict(fields), points=only)

    def replace_vectors(self, news: Sequence[NewVersion]) -> None:
        """Move versions' dense vectors to their new model (and dimension)."""
        if not news:
            return
        ids = [n.record.id for n in news]
        only = models.Filter(must=[pt.has_ids(ids)])
        with _errors("write"):
            for collection in list(self._dense.values()):
                self.client.delete(collection, models.FilterSelector(filter=only))
        by_model: dict[str, list[str]] = {}
        for new in news:
            by_model.setdefault(new.record.embedding_model or "", []).append(new.record.id)
        for model, chosen in by_model.items():
            self.set_fields(chosen, {"model": model}, dense=False)
        dense: dict[int, list[models.PointStruct]] = {}
        for new in news:
            assert new.vector is not None
            vector = [float(x) for x in new.vector]
            point = models.PointStruct(
                id=pt.point_id(new.record.id),
                vector={pt.DENSE: vector},
                payload=pt.filter_payload(new.record, True),
            )
            dense.setdefault(len(vector), []).append(point)
        for dim, rows in dense.items():
            name = self.dense_collection(dim, create=True)
            assert name is not None
            self._upsert(name, rows)

    def delete(self, selected: models.Filter) -> None:
        """Delete the selected versions from every collection (those another store
        created meanwhile included)."""
        with _errors("erase"):
            self._find_dense()
            for collection in self.collections():
                self.client.delete(collection, models.FilterSelector(filter=selected))

    def delete_ids(self, collection: str, ids: Sequence[str]) -> None:
        """Delete the points of versions ``ids`` from ``collection``."""
        if not ids:
            return
        only = models.FilterSelector(filter=models.Filter(must=[pt.has_ids(ids)]))
        with _errors("erase"):
            self.client.delete(collection, only)

    # -- reads ------------------------------------------------------------------------

    def scroll(
        self,
        selected: models.Filter,
        fields: Sequence[str] | None = None,
        collection: str | None = None,
    ) -> list[dict[str, Any]]:
        """Payloads (only ``fields`` when given) of every selected version (in the
        records collection, or ``collection``)."""
        out: list[dict[str, Any]] = []
        offset: Any = None
        with _errors("read"):
            while True:
                wanted = list(fields) if fields is not None else True
                points, offset = self._page(selected, offset, wanted, collection)
                out.extend(p.payload or {} for p in points)
                if offset is None:
                    return out

    def _page(
        self, selected: models.Filter, offset: Any, payload: Any, collection: str | None = None
    ) -> tuple[list[Any], Any]:
        """One page of the selected points from ``offset`` (their ``payload`` fields, or all
        with ``True``; no vectors) and the next page's offset (``None`` after the last)."""
        return self.client.scroll(  # type: ignore[no-any-return]
            collection or self.collection,
            scroll_filter=selected,
            limit=PAGE,
            offset=offset,
            with_payload=payload,
            with_vectors=False,
        )

    def records(self, ids: Sequence[str]) -> list[MemoryRecord]:
        return [pt.record(p) for p in self.payloads(ids)]

    def payloads(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The records' payloads of versions ``ids`` (unknown ids skipped)."""
        if not ids:
            return []
        with _errors("read"):
            points = self.client.retrieve(
                self.collection, [pt.point_id(i) for i in ids], with_payload=True
            )
        return [p.payload for p in points if p.payload]

    def search(
        self, collection: str, using: str, query: Any, selected: models.Filter, k: int
    ) -> list[tuple[str, float]]:
        """``(id, score)`` of the ``k`` best selected points of ``collection``, best first."""
        with _errors("search"):
            found = self.client.query_points(
                collection,
                query=query,
                using=using,
                query_filter=selected,
                limit=k,
                with_payload=["id"],
            ).points
        hits = [(str((p.payload or {})["id"]), float(p.score)) for p in found]
        hits.sort(key=lambda pair: (-pair[1], pair[0]))
        return hits

    # -- compaction -------------------------------------------------------------------

    def compact(self) -> bool:
        """Local mode: close the client (its in-memory copies of erased points go with
        it), ``VACUUM`` each collection's SQLite file, reopen. Edge: optimise every shard
        (vacuuming deleted points). A server: False (its segments are vacuumed by its
        optimizer; see docs/qdrant.md)."""
        folder = self.handle.folder
        if folder is None:
            return False
        if self.handle.edge:
            with _errors("compaction"):
                self.client.compact()
            return True
        with _errors("compaction"):
            self.client.close()
            try:
                for path in sorted(folder.glob("collection/*/storage.sqlite")):
                    with closing(sqlite3.connect(path)) as conn:
                        conn.execute("VACUUM")
            finally:
                self.handle.reopen()
                self.handle.tune()
        return True
