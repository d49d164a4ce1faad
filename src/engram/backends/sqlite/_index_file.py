"""The on-disk vector index of the SQLite cold tier: memory-mapped files beside the database.

One index per embedding model, five files named after the database
(``memory.db-vec-<model hash>.<part>``):

- ``head``: magic, dimension, the last change-log sequence applied (``seq``), the
  slot high-water mark and a rebuild counter;
- ``f32``: one float32 row per slot (the exact vectors, read for rescoring);
- ``i8``: int8 codes of the rows, stored per block of :data:`BLOCK` slots
  transposed (``dim x BLOCK``), as the integer first pass reads them;
- ``bin``: sign-bit codes of the rows (:mod:`~engram.backends.sqlite._binary`),
  per block transposed (``words x BLOCK`` 64-bit words), for the approximate
  first pass over large stores;
- ``meta``: per slot the validity bounds, hashes of the namespace's first
  :data:`DEPTH` prefixes, the int8 scale, residual and norm, and whether it is a
  current version.

A slot is the row's SQLite ``rowid``, so no id map is stored: a search's winners
are turned into memory ids by one ``SELECT`` of a few rows. Every process maps
the same files (``MAP_SHARED``: one copy in the page cache for all of them).

SQLite is the truth. Triggers log every changed rowid in ``cold_vector_log``;
:meth:`IndexFile.sync` (under an exclusive ``flock``) rewrites the slots of the
rows logged after ``seq`` from their current SQLite state, in one read snapshot,
and only then advances ``seq``. A process killed in the middle leaves ``seq``
behind, so the next sync rewrites the same slots again; a header that is
missing, torn or of another dimension makes the index rebuild from SQLite.
Erased rows have their slots zeroed in place in all four data files.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sqlite3
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engram._files import FILE_MODE, private_file, private_folder
from engram.backends.sqlite import _binary
from engram.backends.sqlite import _cold_sql as q
from engram.backends.sqlite._vectors import _one_blas_thread, _quantize
from engram.errors import BackendError
from engram.stores.cold.records import NAMESPACE_SEPARATOR, Namespace, split_namespace

BLOCK = 32768
"""Slots per int8 block (one onnxruntime session each; the unsealed last block is
scored in float32)."""
DEPTH = 4
"""Namespace prefixes hashed per slot (deeper prefixes are checked in SQLite)."""
MAGIC = b"ENGVEC02"
"""(version 2 added the ``bin`` file: an index of version 1 is rebuilt from SQLite)"""
_HEAD = struct.Struct("<8sIIqqq")
"""magic, dim, block, seq, high-water slot, rebuilds."""
META = np.dtype(
    [
        ("opens", "<f8"),
        ("closes", "<f8"),
        ("expires", "<f8"),
        ("ns", "<u8", (DEPTH,)),
        ("scale", "<f4"),
        ("residual", "<f4"),
        ("norm", "<f4"),
        ("live", "u1"),
        ("pad", "u1", (3,)),
    ]
)
DATA = ("f32", "i8", "meta", "bin")
"""The data files (besides ``head``), all rewritten slot by slot."""
_ROWS = 8192
"""Rows read from SQLite per statement while syncing."""
_INF = float("inf")

ROW_STATE = (
    f"SELECT m.rowid, m.ns, m.vector, m.superseded_by IS NULL, m.recorded_at, m.valid_from, "
    f"m.valid_to, m.expires_at FROM {q.TABLE} m "
    "WHERE m.rowid IN (SELECT value FROM json_each(?)) AND m.model = ? AND m.vector IS NOT NULL"
)
ALL_ROWS = (
    f"SELECT m.rowid, m.ns, m.vector, m.superseded_by IS NULL, m.recorded_at, m.valid_from, "
    f"m.valid_to, m.expires_at FROM {q.TABLE} m "
    "WHERE m.model = ? AND m.vector IS NOT NULL AND m.rowid > ? ORDER BY m.rowid LIMIT ?"
)
LAST_SEQ = f"SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = '{q.VECTOR_LOG}'"
LOGGED = f"SELECT seq, mrow FROM {q.VECTOR_LOG} WHERE seq > ? AND seq <= ? ORDER BY seq"
FIRST_SEQ = f"SELECT MIN(seq) FROM {q.VECTOR_LOG}"


def prefix_hash(labels: Sequence[str]) -> int:
    """64-bit hash of a namespace prefix (never 0: an empty slot holds 0)."""
    joined = NAMESPACE_SEPARATOR.join(labels).encode("utf-8", "surrogatepass")
    value = int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "little")
    return value or 1


def namespace_hashes(namespace: Namespace) -> list[int]:
    """The hashes of a namespace's first :data:`DEPTH` prefixes (0 past its depth)."""
    return [prefix_hash(namespace[: d + 1]) if d < len(namespace) else 0 for d in range(DEPTH)]


def index_paths(db: Path, model_id: str) -> dict[str, Path]:
    """The files of ``model_id``'s index beside ``db`` (its lock file aside)."""
    tag = hashlib.sha256(model_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return {part: db.with_name(f"{db.name}-vec-{tag}.{part}") for part in ("head", *DATA)}


def existing_models(db: Path) -> list[tuple[str, int]]:
    """``(model id, dimension)`` of every index beside ``db`` whose header reads."""
    found = []
    for path in sorted(db.parent.glob(f"{db.name}-vec-*.head")):
        data = path.read_bytes()
        if len(data) >= _HEAD.size + 2 and data[:8] == MAGIC:
            dim = _HEAD.unpack(data[: _HEAD.size])[1]
            size = int.from_bytes(data[_HEAD.size : _HEAD.size + 2], "little")
            name = data[_HEAD.size + 2 : _HEAD.size + 2 + size]
            found.append((name.decode("utf-8", "surrogatepass"), dim))
    return found


class IndexFile:
    """One model's index files, mapped into this process."""

    def __init__(self, db: Path, model_id: str, dim: int) -> None:
        self.model_id = model_id
        self.dim = dim
        self.block = BLOCK
        self.paths = index_paths(db, model_id)
        self.capacity = 0
        self.f32: npt.NDArray[np.float32] = np.zeros((0, dim), np.float32)
        self.i8: npt.NDArray[np.int8] = np.zeros((0, dim, self.block), np.int8)
        self.meta: npt.NDArray[Any] = np.zeros(0, META)
        self.words = _binary.bits_for(dim) // 64
        self.bin: npt.NDArray[np.uint64] = np.zeros((0, self.words, self.block), np.uint64)
        self._head: np.memmap[Any, np.dtype[np.uint8]] | None = None

    # -- header -------------------------------------------------------------------

    def header(self) -> tuple[int, int, int] | None:
        """``(seq, high-water, rebuilds)``, or None when missing, torn, not this shape,
        or when a data file is missing or shorter than the high-water mark."""
        if self._head is None:
            self._open_head()
        if self._head is None:
            return None
        magic, dim, block, seq, high, rebuilds = _HEAD.unpack(bytes(self._head[: _HEAD.size]))
        if magic != MAGIC or dim != self.dim or block != self.block or seq < 0 or high < 0:
            return None
        return (seq, high, rebuilds) if self._complete(high) else None

    def _complete(self, high: int) -> bool:
        """Whether every data file holds ``high`` slots (files only grow in place)."""
        for part, width in zip(DATA, self._widths(), strict=True):
            try:
                if self.paths[part].stat().st_size < high * width:
                    return False
            except FileNotFoundError:
                return False
        return True

    def _widths(self) -> tuple[int, ...]:
        """Bytes per slot of each data file."""
        return (self.dim * 4, self.dim, META.itemsize, self.words * 8)

    def _next_rebuild(self) -> int:
        """The rebuild counter a rebuild writes: one more than the header's when it
        reads, else a random one (every process mapping the old files must notice)."""
        if self._head is not None:
            magic, *_, rebuilds = _HEAD.unpack(bytes(self._head[: _HEAD.size]))
            if magic == MAGIC and rebuilds >= 0:
                return int(rebuilds) + 1
        return int.from_bytes(os.urandom(6), "little")

    def _open_head(self) -> None:
        path = self.paths["head"]
        if path.exists() and path.stat().st_size >= _HEAD.size:
            self._head = np.memmap(path, np.uint8, "r+", shape=(_HEAD.size,))

    def _write_head(self, seq: int, high: int, rebuilds: int) -> None:
        packed = _HEAD.pack(MAGIC, self.dim, self.block, seq, high, rebuilds)
        if self._head is None:
            name = self.model_id.encode("utf-8", "surrogatepass")
            private_file(self.paths["head"]).write_bytes(
                packed + len(name).to_bytes(2, "little") + name
            )
            self._open_head()
        else:
            self._head[:] = np.frombuffer(packed, np.uint8)

    # -- mapping --------------------------------------------------------------------

    def remap(self, high: int) -> None:
        """Map (growing the files if needed) at least ``high`` slots."""
        if high <= self.capacity and self.capacity:
            return
        size = max(self._file_slots(), _rounded(high, self.block))
        for part, width in zip(DATA, self._widths(), strict=True):
            path = private_file(self.paths[part])
            with open(path, "ab") as handle:
                if handle.tell() < size * width:
                    handle.truncate(size * width)
        self.f32 = np.memmap(self.paths["f32"], np.float32, "r+", shape=(size, self.dim))
        blocks = (size // self.block, self.dim, self.block)
        self.i8 = np.memmap(self.paths["i8"], np.int8, "r+", shape=blocks)
        self.meta = np.memmap(self.paths["meta"], META, "r+", shape=(size,))
        words = (size // self.block, self.words, self.block)
        self.bin = np.memmap(self.paths["bin"], np.uint64, "r+", shape=words)
        self.capacity = size

    def _file_slots(self) -> int:
        path = self.paths["f32"]
        if not path.exists():
            return 0
        return path.stat().st_size // (self.dim * 4) // self.block * self.block

    def close(self) -> None:
        self.f32 = np.zeros((0, self.dim), np.float32)
        self.i8 = np.zeros((0, self.dim, self.block), np.int8)
        self.meta = np.zeros(0, META)
        self.bin = np.zeros((0, self.words, self.block), np.uint64)
        self._head = None
        self.capacity = 0

    # -- syncing ----------------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The exclusive lock every writer of these files holds."""
        private_folder(self.paths["head"].parent)
        lock_path = self.paths["head"].with_suffix(".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def sync(self, conn: sqlite3.Connection) -> list[int]:
        """Bring the files up to SQLite's state; the slots rewritten (all: a rebuild)."""
        with self.locked():
            head = self.header()
            conn.execute("BEGIN")
            try:
                last = conn.execute(LAST_SEQ).fetchone()[0]
                if head is not None and head[0] == last:
                    return []
                first = conn.execute(FIRST_SEQ).fetchone()[0]
                if head is None or head[0] > last or (first is not None and first > head[0] + 1):
                    return self._rebuild(conn, last, self._next_rebuild())
                return self._catch_up(conn, head, last)
            except sqlite3.Error as exc:
                raise BackendError(f"cannot sync the vector index: {exc}") from exc
            finally:
                conn.execute("COMMIT")

    def _catch_up(
        self, conn: sqlite3.Connection, head: tuple[int, int, int], last: int
    ) -> list[int]:
        seq, high, rebuilds = head
        slots = sorted({r[1] for r in conn.execute(LOGGED, (seq, last))})
        self.remap(max(high, slots[-1] + 1 if slots else 0))
        found: dict[int, tuple[Any, ...]] = {}
        for start in range(0, len(slots), _ROWS):
            part = json.dumps(slots[start : start + _ROWS])
            found.update((r[0], r) for r in conn.execute(ROW_STATE, (part, self.model_id)))
        gone = [s for s in slots if s not in found]
        self.erase_slots(np.array(gone, dtype=np.int64))
        self._write_rows([found[s] for s in slots if s in found])
        top = max([high, *(s + 1 for s in found)])
        self._write_head(last, top, rebuilds)
        return slots

    def _rebuild(self, conn: sqlite3.Connection, last: int, rebuilds: int) -> list[int]:
        self.close()
        for part in DATA:
            self.paths[part].unlink(missing_ok=True)  # (a zeroed file: no old bytes remain)
        self.remap(1)
        high, after = 0, 0
        while True:
            rows = conn.execute(ALL_ROWS, (self.model_id, after, _ROWS)).fetchall()
            if not rows:
                break
            after = rows[-1][0]
            self.remap(after + 1)
            self._write_rows(rows)
            high = after + 1
        self._write_head(last, high, rebuilds)
        return list(range(high))

    def _write_rows(self, rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows:
            return
        slots = np.array([r[0] for r in rows], dtype=np.int64)
        vectors = np.frombuffer(b"".join(r[2] for r in rows), np.float32).reshape(len(rows), -1)
        if vectors.shape[1] != self.dim:
            raise BackendError(f"a stored vector has {vectors.shape[1]} dims, the index {self.dim}")
        codes, scales, residual = _quantize(vectors)
        self.f32[slots] = vectors
        blocks, offsets = np.divmod(slots, self.block)
        self.i8[blocks, :, offsets] = codes
        with _one_blas_thread():  # a second BLAS thread waits on a core the embedder holds
            self.bin[blocks, :, offsets] = _binary.encode(vectors)
        meta = np.zeros(len(rows), META)
        meta["opens"], meta["closes"], meta["expires"] = np.array([_bounds(r) for r in rows]).T
        meta["ns"] = [namespace_hashes(split_namespace(r[1])) for r in rows]
        meta["scale"], meta["residual"] = scales, residual
        meta["norm"] = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        meta["live"] = [1 if r[3] else 0 for r in rows]
        self.meta[slots] = meta

    def erase_slots(self, slots: npt.NDArray[np.int64]) -> None:
        """Zero these slots in every file (their vectors, codes and metadata)."""
        slots = slots[slots < self.capacity]
        if len(slots):
            self.f32[slots] = 0
            blocks, offsets = np.divmod(slots, self.block)
            self.i8[blocks, :, offsets] = 0
            self.bin[blocks, :, offsets] = 0
            self.meta[slots] = np.zeros(1, META)


def _bounds(row: Sequence[Any]) -> tuple[float, float, float]:
    """``(opens, closes, expires)`` from recorded_at, valid_from, valid_to, expires_at."""
    recorded, valid_from, valid_to, expires = row[4:8]
    return (
        max(recorded, valid_from),
        _INF if valid_to is None else valid_to,
        _INF if expires is None else expires,
    )


def _rounded(slots: int, block: int) -> int:
    """Room for ``slots`` slots, in whole blocks, growing by a quarter."""
    want = max(slots, 1) + max(slots // 4, 0)
    return -(-want // block) * block
