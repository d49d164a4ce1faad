"""Qdrant Edge (``qdrant-edge-py``): Qdrant's own Rust engine embedded in the process.

:class:`EdgeClient` answers the few ``QdrantClient`` calls the cold backend makes, one
``EdgeShard`` per collection in a sub-folder, translating qdrant-client's models into
Edge's. Shards run without a write-ahead log (the backend flushes them after each of its
writes instead) and
vacuum every deleted point when optimised, so after :meth:`EdgeClient.compact` no
erased byte remains in the folder (a WAL would keep it until rotated). Edge takes no
lock of its own without a WAL, so the folder is locked here (one process at a time).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from qdrant_client import models

from engram.errors import MissingDependencyError

try:
    import portalocker
    import qdrant_edge as edge
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("Qdrant Edge needs: pip install 'engram[qdrant-edge]'") from exc

LOCK_FILE = ".engram-edge.lock"
INDEXED = frozenset({"tenant", "nsp", "head"})
"""The payload indexes an Edge shard gets: the tenant (``is_tenant``), the namespace
prefix and the current flag. Each costs a shard write to create (~0.2 s), and Edge
filters the other fields exactly without one."""


class FolderLocked(Exception):
    """Raised by :class:`EdgeClient` when another process holds the folder."""


def _filter(found: models.Filter) -> edge.Filter:
    return edge.Filter(
        must=[_condition(c) for c in found.must or ()] or None,
        should=[_condition(c) for c in found.should or ()] or None,
        must_not=[_condition(c) for c in found.must_not or ()] or None,
    )


def _condition(found: Any) -> Any:
    if isinstance(found, models.Filter):
        return _filter(found)
    if isinstance(found, models.HasIdCondition):
        return edge.HasIdCondition({str(i) for i in found.has_id})
    assert isinstance(found, models.FieldCondition), type(found)
    if isinstance(found.match, models.MatchValue):
        return edge.FieldCondition(key=found.key, match=edge.MatchValue(found.match.value))
    if isinstance(found.match, models.MatchAny):
        chosen: list[Any] = list(found.match.any)
        return edge.FieldCondition(key=found.key, match=edge.MatchAny(chosen))
    assert isinstance(found.range, models.Range)
    bounds = found.range
    span = edge.RangeFloat(gte=bounds.gte, gt=bounds.gt, lte=bounds.lte, lt=bounds.lt)
    return edge.FieldCondition(key=found.key, range=span)


def _vector(found: Any) -> Any:
    if isinstance(found, models.SparseVector):
        return edge.SparseVector(list(found.indices), list(found.values))
    return list(found)


def _schema(found: Any) -> Any:
    if isinstance(found, models.KeywordIndexParams):
        return edge.KeywordIndexParams(is_tenant=found.is_tenant)
    names = {
        models.PayloadSchemaType.KEYWORD: edge.PayloadSchemaType.Keyword,
        models.PayloadSchemaType.INTEGER: edge.PayloadSchemaType.Integer,
        models.PayloadSchemaType.FLOAT: edge.PayloadSchemaType.Float,
    }
    return names[found]


def _config(vectors: dict[str, Any], sparse: dict[str, Any] | None) -> edge.EdgeConfig:
    dense = {
        name: edge.EdgeVectorParams(size=p.size, distance=edge.Distance.Dot)
        for name, p in vectors.items()
    }
    keywords = {
        name: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf) for name in sparse or {}
    }
    vacuum = edge.EdgeOptimizersConfig(deleted_threshold=0.0, vacuum_min_vector_number=1)
    return edge.EdgeConfig(
        vectors=dense or None,
        sparse_vectors=keywords or None,
        optimizers=vacuum,
        wal_enabled=False,
    )


class EdgeClient:
    """The ``QdrantClient`` subset the cold backend uses, over Edge shards in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._lock_file = open(folder / LOCK_FILE, "a")  # noqa: SIM115 - held while open
        try:
            portalocker.lock(
                self._lock_file,
                portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING,
            )
        except portalocker.exceptions.LockException as exc:
            self._lock_file.close()
            raise FolderLocked(str(folder)) from exc
        self._shards: dict[str, Any] = {}
        self._dirty: dict[str, None] = {}
        """The shards written since the last sync, in the order first written."""
        self._guard = threading.RLock()

    def _shard(self, name: str) -> Any:
        with self._guard:
            shard = self._shards.get(name)
            if shard is None:
                shard = edge.EdgeShard.load(str(self.folder / name))
                self._shards[name] = shard
            return shard

    def _update(self, name: str, operation: Any) -> None:
        self._shard(name).update(operation)
        self._dirty.setdefault(name, None)

    def sync(self) -> None:
        """Flush the shards written since the last sync to their files, in the order they
        were written (no WAL: what is not flushed is lost if the process dies)."""
        with self._guard:
            for name in list(self._dirty):
                self._shard(name).flush()
            self._dirty.clear()

    def collection_exists(self, name: str) -> bool:
        return (self.folder / name / "edge_config.json").exists()

    def get_collections(self) -> Any:
        names = [p.parent.name for p in self.folder.glob("*/edge_config.json")]
        return SimpleNamespace(collections=[SimpleNamespace(name=n) for n in sorted(names)])

    def create_collection(
        self,
        name: str,
        vectors_config: dict[str, Any],
        sparse_vectors_config: dict[str, Any] | None = None,
    ) -> None:
        with self._guard:
            config = _config(vectors_config, sparse_vectors_config)
            self._shards[name] = edge.EdgeShard.create(str(self.folder / name), config)

    def create_payload_index(self, name: str, field: str, field_schema: Any) -> None:
        if field not in INDEXED:
            return
        self._update(name, edge.UpdateOperation.create_field_index(field, _schema(field_schema)))

    def upsert(self, name: str, points: Sequence[models.PointStruct]) -> None:
        found = [
            edge.Point(str(p.id), {k: _vector(v) for k, v in dict(p.vector).items()}, p.payload)  # type: ignore[arg-type]
            for p in points
        ]
        self._update(name, edge.UpdateOperation.upsert_points(found))

    def set_payload(
        self, name: str, payload: dict[str, Any], points: models.FilterSelector
    ) -> None:
        chosen = _filter(points.filter)
        self._update(name, edge.UpdateOperation.set_payload_by_filter(chosen, _plain(payload)))

    def delete(self, name: str, points: models.FilterSelector) -> None:
        self._update(name, edge.UpdateOperation.delete_points_by_filter(_filter(points.filter)))

    def scroll(
        self,
        name: str,
        scroll_filter: models.Filter | None,
        limit: int,
        offset: Any,
        with_payload: Any,
        with_vectors: bool = False,
    ) -> tuple[list[Any], Any]:
        chosen = _filter(scroll_filter) if scroll_filter is not None else None
        request = edge.ScrollRequest(
            offset=offset, limit=limit, filter=chosen, with_payload=with_payload
        )
        return self._shard(name).scroll(request)  # type: ignore[no-any-return]

    def retrieve(self, name: str, ids: Sequence[str], with_payload: bool = True) -> list[Any]:
        return self._shard(name).retrieve(list(ids), with_payload, False)  # type: ignore[no-any-return]

    def query_points(
        self,
        name: str,
        query: Any,
        using: str,
        query_filter: models.Filter,
        limit: int,
        with_payload: Any,
    ) -> Any:
        request = edge.QueryRequest(
            limit=limit,
            query=edge.Query.Nearest(_vector(query), using=using),
            filter=_filter(query_filter),
            with_payload=with_payload,
        )
        return SimpleNamespace(points=self._shard(name).query(request))

    def compact(self) -> None:
        """Vacuum every shard (its optimisers drop deleted points' segments) and flush."""
        self.sync()
        for name in [c.name for c in self.get_collections().collections]:
            shard = self._shard(name)
            shard.optimize()
            shard.flush()

    def close(self) -> None:
        self.sync()
        with self._guard:
            for shard in self._shards.values():
                shard.close()
            self._shards.clear()
        portalocker.unlock(self._lock_file)
        self._lock_file.close()


def _plain(payload: dict[str, Any]) -> dict[str, Any]:
    """A payload of JSON types only (Edge takes no tuples or other Python objects)."""
    return json.loads(json.dumps(payload))  # type: ignore[no-any-return]
