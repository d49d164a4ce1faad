"""The embedder plug-in contract and the deterministic zero-dependency embedder.

An embedder turns texts into L2-normalised float32 vectors. Its ``model_id`` is
stored with every vector so a store knows when it must be re-embedded.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from engram import _validate as check

Vectors = npt.NDArray[np.float32]
"""A ``(n, dim)`` float32 matrix of unit-length rows."""

_TOKEN = re.compile(r"[a-z0-9]+")

MAX_HASH_DIM = 4096
"""The most dimensions a :class:`HashEmbedder` takes: every stored vector and every block
of the vector index grows with them (a million would write gigabytes per fact)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Identifies the model (and its version); stored with every vector."""
        ...

    @property
    def dim(self) -> int:
        """Length of each vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` into a ``(len(texts), dim)`` float32 matrix of unit rows."""
        ...


def normalise(vectors: npt.NDArray[np.floating]) -> Vectors:
    """Scale each row to unit length (zero rows stay zero)."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    result: Vectors = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return result


class HashEmbedder:
    """Deterministic bag-of-words embedder (feature hashing), for tests and offline use.

    Texts sharing words get similar vectors; it knows nothing of synonyms. It needs
    nothing but numpy and gives the same vectors on every machine.
    """

    def __init__(self, dim: int = 256) -> None:
        self._dim = check.integer("HashEmbedder dim", dim, minimum=1, maximum=MAX_HASH_DIM)

    @property
    def model_id(self) -> str:
        return f"engram-hash-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self._dim
                out[row, index] += 1.0 if digest[4] & 1 else -1.0
        return normalise(out)


class RecentEmbeddings:
    """An embedder that keeps the vectors of the last ``size`` distinct texts it embedded.

    A fact is embedded by the poisoning guard, then again to be stored; the memory layer
    gives both this wrapper, so each fact is embedded once. It holds text, so erasure
    clears it (:meth:`clear`); it is bounded and thread-safe.
    """

    def __init__(self, inner: Embedder, size: int = 64) -> None:
        self.inner = inner
        self._size = size
        self._kept: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._held: dict[str, npt.NDArray[np.float32]] = {}
        self._holds: Counter[str] = Counter()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if not self._has(t)))
        fresh = dict(zip(missing, self.inner.embed(missing), strict=True)) if missing else {}
        with self._lock:
            found = {t: fresh[t] if t in fresh else self._get(t) for t in dict.fromkeys(texts)}
            for text, vector in found.items():
                self._kept[text] = vector
                self._kept.move_to_end(text)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        rows = [found[t] for t in texts]
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def hold(self, texts: Sequence[str]) -> Callable[[], None]:
        """Embed ``texts`` (those not kept yet, in one call) and keep every one of them,
        however many, until the returned ``release()`` is called: a batch's texts embedded
        together (perhaps in another thread), then asked for one by one."""
        wanted = list(dict.fromkeys(texts))
        with self._lock:
            missing = [t for t in wanted if not self._has(t)]
        fresh = dict(zip(missing, self.inner.embed(missing), strict=True)) if missing else {}
        with self._lock:
            for text in wanted:
                vector = fresh[text] if text in fresh else self._find(text)
                if vector is not None:  # None: cleared meanwhile, embedded when asked
                    self._held[text] = vector
                self._holds[text] += 1
        return functools.partial(self._release, wanted)

    @contextmanager
    def holding(self, texts: Sequence[str]) -> Iterator[None]:
        """:meth:`hold` ``texts`` while the block runs."""
        release = self.hold(texts)
        try:
            yield
        finally:
            release()

    def _release(self, texts: list[str]) -> None:
        with self._lock:
            for text in texts:
                self._holds[text] -= 1
                if self._holds[text] <= 0:
                    del self._holds[text]
                    self._held.pop(text, None)

    def _has(self, text: str) -> bool:
        return text in self._held or text in self._kept

    def _get(self, text: str) -> npt.NDArray[np.float32]:
        held = self._held.get(text)
        return held if held is not None else self._kept[text]

    def _find(self, text: str) -> npt.NDArray[np.float32] | None:
        return self._get(text) if self._has(text) else None

    def clear(self) -> int:
        """Drop every kept vector (and its text); the number dropped."""
        with self._lock:
            count = len(self._kept.keys() | self._held.keys())
            self._kept.clear()
            self._held.clear()
        return count
