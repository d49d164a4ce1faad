"""Sign-bit codes of vectors: an approximate first pass over a large vector index.

Each vector is projected on ``bits`` fixed hyperplanes through the origin and
keeps one bit per hyperplane: on which side it lies (random-hyperplane hashing).
Two vectors' codes differ in a share of bits that grows with the angle between
them, so the Hamming distance between a query's code and a row's ranks the rows
roughly as their cosine does, reading ``bits / 8`` bytes per row (48 for 384
dimensions, an eighth of the int8 codes).

The hyperplanes are the same in every process and on every machine: their
coefficients are small integers drawn from BLAKE2b, no random number generator
involved (a vector's code depends only on the vector). The pass is approximate:
its candidates are rescored exactly by the caller, and how many it keeps is set
by :func:`candidate_count`.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
Codes = npt.NDArray[np.uint64]
Distances = npt.NDArray[np.uint16]

PER_K = 32
"""Candidates kept per result asked for."""
SHARE = 1024
"""Besides, one candidate per this many rows searched (the rows near the k-th best
grow with the store)."""
_CHUNK = 8192
"""Rows scored per numpy call (a chunk's codes and counts stay in the CPU cache)."""


def bits_for(dim: int) -> int:
    """Bits of a code: at least one per dimension, in whole 64-bit words."""
    return -(-max(dim, 1) // 64) * 64


@functools.cache
def hyperplanes(dim: int, bits: int) -> F32:
    """``bits x dim`` hyperplane normals with integer coefficients in -127..127."""
    need = bits * dim
    stream = b"".join(
        hashlib.blake2b(f"engram-sign-bits {dim} {bits} {i}".encode(), digest_size=64).digest()
        for i in range(-(-need // 64))
    )
    coefficients = np.frombuffer(stream, np.int8)[:need].astype(np.float32)
    coefficients[coefficients == -128] = 0  # (a symmetric range)
    coefficients.setflags(write=False)
    return coefficients.reshape(bits, dim)


def encode(vectors: F32) -> Codes:
    """``(rows, bits / 64)`` codes of ``vectors``: bit ``j`` set when the row lies on
    the positive side of hyperplane ``j`` (a zero vector has every bit clear)."""
    dim = vectors.shape[1]
    planes = hyperplanes(dim, bits_for(dim))
    above = (np.asarray(vectors, np.float32) @ planes.T) > 0
    packed = np.packbits(above, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8")


def distances(codes_t: Codes, query: Codes, out: Distances) -> None:
    """Hamming distances of ``query``'s code (``words``) to the codes of one block
    stored transposed (``words x rows``), written to ``out`` (``rows``)."""
    words, rows = codes_t.shape
    mixed = np.empty((words, min(rows, _CHUNK)), np.uint64)
    counts = np.empty(mixed.shape, np.uint8)
    column = query[:, None]
    for start in range(0, rows, _CHUNK):
        end = min(rows, start + _CHUNK)
        width = end - start
        np.bitwise_xor(codes_t[:, start:end], column, out=mixed[:, :width])
        np.bitwise_count(mixed[:, :width], out=counts[:, :width])
        np.add.reduce(counts[:, :width], axis=0, dtype=np.uint16, out=out[start:end])


class Closest:
    """The rows closest to a query code, found block by block: each block's
    distances are masked and counted while they are in the CPU cache."""

    def __init__(self, rows: int, bits: int) -> None:
        self.bits = bits
        self.dist: Distances = np.empty(rows, np.uint16)
        self.histogram = np.zeros(bits + 2, np.int64)

    def add(self, start: int, codes_t: Codes, query: Codes, allowed: npt.NDArray[np.bool_]) -> None:
        """Score the block of rows from ``start`` (``allowed``: which of them count)."""
        part = self.dist[start : start + codes_t.shape[1]]
        distances(codes_t, query, part)
        np.putmask(part, ~allowed, self.bits + 1)
        self.histogram += np.bincount(part, minlength=self.bits + 2)

    def rows(self, count: int) -> npt.NDArray[np.int64]:
        """The allowed rows whose distance is at most the ``count``-th smallest
        (every allowed row when fewer), in row order."""
        reach = int(np.searchsorted(np.cumsum(self.histogram[: self.bits + 1]), count))
        return np.flatnonzero(self.dist <= min(reach, self.bits)).astype(np.int64)


def candidate_count(k: int, rows: int) -> int:
    """Candidates kept out of ``rows`` for a top ``k``: a multiple of ``k`` plus a share
    of the rows."""
    return PER_K * k + rows // SHARE
