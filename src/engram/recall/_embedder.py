"""The embedder plug-in contract and the deterministic zero-dependency embedder.

An embedder turns texts into L2-normalised float32 vectors. Its ``model_id`` is
stored with every vector so a store knows when it must be re-embedded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
"""A ``(n, dim)`` float32 matrix of unit-length rows."""

_TOKEN = re.compile(r"[a-z0-9]+")


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
        self._dim = dim

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
