"""Exact nearest rows of a matrix of float32 vectors, for the SQLite cold tier.

Two passes. The first scores every row approximately, with a proven bound on
each score's error, so the rows that can still reach the top ``k`` are known; the
second scores only those rows, in float64 rounded to float32 (the same score for
a row wherever it sits: BLAS kernels round differently by position).

The first pass is one float32 matrix-vector product (one BLAS thread) for small
matrices, and an int8 product for large ones (``quantize_from`` rows and more,
with onnxruntime installed): every row is stored as int8 codes times a per-row
scale, the query as two 7-bit codes (the second codes the first's rounding
error), and onnxruntime's integer matrix product scores every row against both
codes in one read of a quarter of the bytes. The error bound is Cauchy-Schwarz
on what the codes leave out, plus float32 rounding.

On a loaded 2-core machine the float32 product over 100k x 384 took 12-15 ms of
CPU (it reads 154 MB), the int8 pass about 3 ms.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
Rows = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]

QUANTIZE_FROM = 20_000
"""Rows from which a matrix gets the int8 pass (below, one float32 product is cheap)."""

_DATA_LEVELS = 127
"""Row codes use the whole signed byte (-127..127)."""
_QUERY_LEVELS = 63
"""Query codes are 7-bit (-63..63, sent as 1..127 with zero point 64): on CPUs without
VNNI the u8 x s8 kernel adds two products in int16, which 127 * 127 * 2 cannot overflow."""
_QUERY_ZERO = 64
_CHUNK = 8192
_TAIL = 4096
"""Appended rows scored in float32 before the int8 pass is extended over them."""
_UNIT = 2.0**-24
"""float32 unit roundoff."""
EXACT_BYTES = 1 << 20
"""float64 rows rescored at a time (a slice that stays in a core's cache)."""


class NearestRows:
    """Rows of ``vectors`` most similar (dot product) to a query, exactly.

    A first pass (int8 or float32) scores every row approximately with a bound on
    its error; the rows whose bounds reach the ``k``-th best are scored again in
    float64 and rounded to float32, so a row's score does not depend on where it
    sits in the matrix (BLAS kernels round differently by position).

    Rows may be appended (kept in a buffer with spare room; the int8 pass covers
    the rows it was built over, later ones get a float32 pass until there are
    ``_TAIL`` of them) and erased (zeroed in place, int8 codes included).
    """

    def __init__(
        self, vectors: F32, *, quantize_from: int | None = QUANTIZE_FROM, count: int | None = None
    ) -> None:
        """Search ``vectors`` (only its first ``count`` rows if given: the rest is room
        for :meth:`append`)."""
        self._buffer = vectors
        self._count = len(vectors) if count is None else count
        self._quantize_from = quantize_from
        self._norm: float | None = None
        self._int8: _Int8Pass | None = None
        self._lock = threading.Lock()

    @property
    def vectors(self) -> F32:
        """The current rows (a view of the buffer)."""
        return self._buffer[: self._count]

    def __len__(self) -> int:
        return self._count

    def candidates(
        self, query: F32, allowed: Mask | None, k: int, count: int | None = None
    ) -> tuple[Rows, F32]:
        """``(rows, scores)``: every allowed row among the first ``count`` (default: all)
        that may rank in the top ``k`` (ties at the boundary included), with its score;
        the caller orders and cuts."""
        vectors, approx, error = self._first_pass(query, self._count if count is None else count)
        rows = _within_reach(approx, error, allowed, k)
        return rows, exact_scores(vectors, rows, query)

    @property
    def quantized(self) -> bool:
        """Whether the int8 pass is built (after a first search of a large matrix)."""
        return self._int8 is not None

    def append(self, rows: F32) -> None:
        """Add ``rows`` after the current ones (searches already running do not see them)."""
        with self._lock:
            start, end = self._count, self._count + len(rows)
            fits = self._buffer.shape[1:] == rows.shape[1:]  # (an empty load has dim 1)
            if end > len(self._buffer) or not self._buffer.flags.writeable or not fits:
                grown = np.empty((max(end, start + start // 4, 1024), rows.shape[1]), np.float32)
                grown[:start] = self._buffer[:start]
                self._buffer = grown
            self._buffer[start:end] = rows
            self._count = end
            if self._norm is not None:
                self._norm = max(self._norm, _max_norm(rows))

    def erase(self, rows: Rows) -> None:
        """Zero ``rows`` (their vectors and int8 codes leave memory; the caller masks them)."""
        with self._lock:
            if not self._buffer.flags.writeable:
                self._buffer = self._buffer[: self._count].copy()
            self._buffer[rows] = 0
            if self._int8 is not None:
                self._int8 = self._int8.without(rows)

    def _first_pass(self, query: F32, count: int) -> tuple[F32, F32, F32]:
        """The first ``count`` rows, approximate scores and a bound on each one's error."""
        with self._lock:
            vectors = self._buffer[:count]
            int8 = self._current_int8()
            if self._norm is None:
                self._norm = _max_norm(self.vectors)
            norm = self._norm
        done = 0 if int8 is None else min(int8.rows, count)
        approx, error = (np.empty(0, np.float32),) * 2 if int8 is None else int8.scores(query)
        approx, error = approx[:done], error[:done]
        if done == count:
            return vectors, approx, error
        with _one_blas_thread():
            tail = vectors[done:] @ query
        # |fl(q.x) - q.x| <= dim * u * |q| * |x| for a float32 dot product
        bound = (1.01 * vectors.shape[1] * _UNIT) * float(np.linalg.norm(query)) * norm
        bound += _rounding(query, norm)
        tail_error = np.full(len(tail), bound, dtype=np.float32)
        return vectors, np.concatenate((approx, tail)), np.concatenate((error, tail_error))

    def _current_int8(self) -> _Int8Pass | None:
        """The int8 pass, built or extended when due (called under the lock)."""
        quantize = self._quantize_from is not None and self._count >= self._quantize_from
        runtime = _onnxruntime() if quantize or self._int8 is not None else None
        if runtime is None:
            return None
        if self._int8 is None:
            self._int8 = _Int8Pass.over(self.vectors, runtime)
        elif self._count - self._int8.rows >= _TAIL:
            self._int8 = self._int8.extended(self._buffer[self._int8.rows : self._count])
        return self._int8


SELECT_DIRECT = 4096
"""Values from which :func:`kth_largest` narrows them down before ``np.partition``."""


def kth_largest(values: F32, count: int) -> np.float32:
    """The ``count``-th largest of ``values`` (``1 <= count <= len(values)``): the value
    ``np.partition`` gives, in time about linear in ``len(values)`` whatever the ties.

    numpy's introselect slows down some twentyfold on a mass of equal values, as a sparse
    embedder's zero scores are (97 ms instead of 5 ms for a million values on this
    machine). Each round takes the ``count``-th largest ``t`` of the maxima of about
    ``8 * count`` chunks: ``count`` distinct values reach it, so the answer is at least
    ``t``; it is ``t`` when fewer than ``count`` values exceed ``t``, and otherwise the
    ``count``-th largest of the values that do, which are fewer (the ties below ``t``
    are left behind). A NaN leaves it to ``np.partition``, which sorts NaN last."""
    while len(values) > SELECT_DIRECT:
        chunk = len(values) // (8 * count)
        if chunk < 2:
            break
        whole = len(values) - len(values) % chunk
        maxima = values[:whole].reshape(-1, chunk).max(axis=1)
        if whole < len(values):
            maxima = np.append(maxima, values[whole:].max())
        if np.isnan(maxima).any():
            break
        floor = np.partition(maxima, len(maxima) - count)[len(maxima) - count]
        above = values[values > floor]
        if len(above) < count:
            return np.float32(floor)
        values = above
    return np.float32(np.partition(values, len(values) - count)[len(values) - count])


def _within_reach(approx: F32, error: F32, allowed: Mask | None, k: int) -> Rows:
    """Allowed rows whose upper bound reaches the ``k``-th best lower bound."""
    lower = approx - error
    upper = approx + error
    if allowed is not None:
        lower[~allowed] = -np.inf
        upper[~allowed] = -np.inf
    count = min(k, len(approx) if allowed is None else int(allowed.sum()))
    if count == 0:
        return np.empty(0, dtype=np.intp)
    return np.flatnonzero(upper >= kth_largest(lower, count))


def _rounding(query: F32, row_norm: float) -> float:
    """Bound on float32 rounding: of the final scores (which may tie rows whose exact
    scores differ) plus a few float32 operations in a first pass."""
    return (64 * _UNIT) * float(np.linalg.norm(query.astype(np.float64))) * row_norm + 1e-12


def _max_norm(vectors: F32) -> float:
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    return float(norms.max(initial=0.0)) * (1 + 1e-4)


class _Int8Pass:
    """Int8 codes of a matrix's first ``rows`` rows in an onnxruntime session, with
    per-row error terms (row codes and scales are per row, so rows quantised apart
    equal rows quantised together)."""

    def __init__(
        self, codes: npt.NDArray[np.int8], scales: F32, residual: F32, row_norm: float, runtime: Any
    ) -> None:
        self.codes = codes
        self.scales = scales
        self.residual = residual
        self.rows = codes.shape[1]
        self.row_norm = row_norm
        # |scale * codes| <= |x| + |x - scale * codes| (triangle inequality)
        self.coded_norm = row_norm + float(residual.max(initial=0.0))
        self.runtime = runtime
        self.session = _session(runtime, codes)

    @classmethod
    def over(cls, vectors: F32, runtime: Any) -> _Int8Pass:
        n, dim = vectors.shape
        codes = np.empty((dim, n), dtype=np.int8)
        scales = np.empty(n, dtype=np.float32)
        residual = np.empty(n, dtype=np.float32)
        for start in range(0, n, _CHUNK):
            part = slice(start, min(n, start + _CHUNK))
            part_codes, scales[part], residual[part] = _quantize(vectors[part])
            codes[:, part] = part_codes.T
        return cls(codes, scales, residual, _max_norm(vectors), runtime)

    def extended(self, tail: F32) -> _Int8Pass:
        """A pass over these rows and ``tail`` after them (the codes are copied once)."""
        more = _Int8Pass.over(tail, self.runtime)
        return _Int8Pass(
            np.concatenate((self.codes, more.codes), axis=1),
            np.concatenate((self.scales, more.scales)),
            np.concatenate((self.residual, more.residual)),
            max(self.row_norm, more.row_norm),
            self.runtime,
        )

    def without(self, rows: Rows) -> _Int8Pass:
        """This pass with ``rows`` zeroed, in a new session (the old one may hold a
        packed copy of the codes; it goes when the last search using it ends)."""
        rows = rows[rows < self.rows]
        self.codes[:, rows] = 0
        self.residual[rows] = 0
        return _Int8Pass(self.codes, self.scales, self.residual, self.row_norm, self.runtime)

    def scores(self, query: F32) -> tuple[F32, F32]:
        """Approximate scores of every row and a bound on each one's error."""
        wide = query.astype(np.float64)
        codes, steps, rest = _query_codes(wide)
        dots = self.session.run(None, {"q": codes})[0]
        approx = dots[0].astype(np.float32)
        approx *= np.float32(steps[0])
        second = dots[1].astype(np.float32)
        second *= np.float32(steps[1])
        approx += second
        approx *= self.scales
        # q.x = scale * (q's codes . x's codes) + scale * (rest . codes) + q . residual
        error = self.residual * np.float32(np.linalg.norm(wide))
        error += np.float32(rest * self.coded_norm + _rounding(query, self.row_norm))
        return approx, error


def _quantize(vectors: F32) -> tuple[npt.NDArray[np.int8], F32, F32]:
    """Int8 codes and float32 scales of ``vectors``' rows, and each row's residual norm
    ``|x - scale * codes|`` rounded up past float32 rounding (|error| <= 1e-4 relative)."""
    peak = np.abs(vectors).max(axis=1)
    scales = np.where(peak > 0, peak / np.float32(_DATA_LEVELS), np.float32(1)).astype(np.float32)
    scaled = vectors / scales[:, None]
    codes = np.rint(scaled, out=scaled).astype(np.int8)
    diff = vectors - codes * scales[:, None]
    residual = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    return codes, scales, residual * np.float32(1 + 1e-4) + norms * np.float32(1e-6)


def _query_codes(
    query: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.uint8], list[float], float]:
    """Two 7-bit codes of ``query`` (the second codes the first's rounding error) as
    unsigned bytes, their steps, and the norm of what both leave out."""
    rows = []
    steps = []
    rest = query
    for _ in range(2):
        peak = float(np.abs(rest).max())
        step = peak / _QUERY_LEVELS if peak > 0 else 0.0
        code = np.rint(rest / step) if step > 0 else np.zeros_like(rest)
        rows.append(code)
        steps.append(step)
        rest = rest - code * step
    codes = (np.stack(rows) + _QUERY_ZERO).astype(np.uint8)
    return codes, steps, float(np.linalg.norm(rest))


def _session(runtime: Any, codes_t: npt.NDArray[np.int8]) -> Any:
    """An onnxruntime session computing ``(q - 64) @ codes_t`` in int32 on one thread.

    The codes reach it as an external initialiser (no copy into the serialised
    graph); ``codes_t`` must outlive the session.
    """
    options = runtime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_external_initializers(["codes"], [runtime.OrtValue.ortvalue_from_numpy(codes_t)])
    model = int8_model(*codes_t.shape)
    return runtime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def int8_model(dim: int, rows: int) -> bytes:
    """The ONNX model (serialised ``ModelProto``) of the int8 pass: one ``MatMulInteger``
    of ``q`` (uint8, 2 x dim) and the external initialiser ``codes`` (int8, dim x rows)
    with zero point ``_QUERY_ZERO``, giving ``dots`` (int32, 2 x rows); opset 13.

    Written field by field (protobuf's wire format) rather than with the ``onnx``
    package: importing it took 0.6 s with the interpreter lock held, which stalled
    every other thread of the process while a large store's first search built its
    sessions. The bytes hold shapes and names only, no data; a test checks them
    against the model ``onnx.helper`` builds."""
    uint8, int8, int32, external = 2, 3, 6, 1
    codes = (
        _ints(1, dim, rows)
        + _ints(2, int8)
        + _text(8, "codes")
        + b"".join(
            _message(13, _text(1, key) + _text(2, value))
            for key, value in (("location", "codes"), ("offset", "0"), ("length", str(dim * rows)))
        )
        + _ints(14, external)
    )
    zero = _ints(2, uint8) + _text(8, "zero") + _message(9, bytes([_QUERY_ZERO]))
    node = b"".join(_text(1, n) for n in ("q", "codes", "zero")) + _text(2, "dots")
    graph = (
        _message(1, node + _text(4, "MatMulInteger"))
        + _text(2, "int8_scores")
        + _message(5, codes)
        + _message(5, zero)
        + _message(11, _tensor_info("q", uint8, 2, dim))
        + _message(12, _tensor_info("dots", int32, 2, rows))
    )
    opset = _text(1, "") + _ints(2, 13)  # the default domain, version 13
    return _ints(1, 7) + _message(8, opset) + _message(7, graph)  # IR version 7


def _tensor_info(name: str, elem_type: int, *dims: int) -> bytes:
    """A ``ValueInfoProto``: a tensor's name, element type and fixed shape."""
    shape = b"".join(_message(1, _ints(1, d)) for d in dims)
    tensor = _ints(1, elem_type) + _message(2, shape)
    return _text(1, name) + _message(2, _message(1, tensor))


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _ints(field: int, *values: int) -> bytes:
    """Varint fields (wire type 0), one per value."""
    return b"".join(_varint(field << 3) + _varint(v) for v in values)


def _message(field: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): a message or bytes."""
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _text(field: int, value: str) -> bytes:
    return _message(field, value.encode())


@functools.cache
def _onnxruntime() -> Any:
    """onnxruntime when installed and exact on this CPU, else None."""
    try:
        runtime = importlib.import_module("onnxruntime")
    except ImportError:
        return None
    return runtime if _exact_on_this_cpu(runtime) else None


def _onnxruntime_loaded() -> bool:
    """Whether :func:`_onnxruntime` has answered in this process (it then costs nothing)."""
    return _onnxruntime.cache_info().currsize > 0


def _exact_on_this_cpu(runtime: Any) -> bool:
    """The integer product equals numpy's for the extreme codes (no int16 saturation
    in the kernel this CPU runs) and for random ones."""
    rng = np.random.default_rng(0)
    codes = rng.integers(-_DATA_LEVELS, _DATA_LEVELS + 1, size=(64, 96)).astype(np.int8)
    codes[:, :2] = _DATA_LEVELS
    codes[:, 2:4] = -_DATA_LEVELS
    session = _session(runtime, codes)
    top = _QUERY_ZERO + _QUERY_LEVELS
    for q in ([top, top], [_QUERY_ZERO - _QUERY_LEVELS, top], None):
        rows = rng.integers(1, top + 1, size=(2, 64)) if q is None else np.array(q)[:, None]
        query = np.broadcast_to(rows, (2, 64)).astype(np.uint8)
        want = (query.astype(np.int64) - _QUERY_ZERO) @ codes.astype(np.int64)
        if not np.array_equal(session.run(None, {"q": query})[0], want):
            return False
    return True


@functools.cache
def _blas_controller() -> Any:
    try:
        return importlib.import_module("threadpoolctl").ThreadpoolController()
    except ImportError:
        return None


def exact_scores(vectors: F32, rows: Rows, query: F32) -> F32:
    """The scores of ``vectors[rows]``: float64 products rounded to float32, computed
    :data:`EXACT_BYTES` of float64 rows at a time (a tie of thousands of rows is
    rescored in the CPU cache instead of through copies of the whole selection; each
    row's score is its own product, whatever rows share its slice)."""
    wide = query.astype(np.float64)
    step = max(1, EXACT_BYTES // (8 * max(1, len(wide))))
    plain = np.asarray(vectors)  # (a memmap's slices would each be a memmap)
    out = np.empty(len(rows), np.float32)
    for start in range(0, len(rows), step):
        part = rows[start : start + step]
        out[start : start + len(part)] = plain[part].astype(np.float64) @ wide
    return out


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Cap BLAS at one thread while a query's matrix-vector product runs."""
    controller = _blas_controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield
