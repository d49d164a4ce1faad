"""The cached matrix of one namespace prefix's current versions, patched by writes.

A write updates every cached matrix it touches in place instead of dropping it
(reloading 100k vectors takes seconds): new heads are appended, closed or
superseded versions get new bounds, erased versions are zeroed and can never be
returned again. A search works on a :class:`Heads` snapshot (the row count and
bounds at its start), so rows appended meanwhile are not half-seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from engram.backends.sqlite._vectors import NearestRows
from engram.stores.cold.contract import Closure
from engram.stores.cold.records import to_epoch

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

_A = TypeVar("_A", bound=npt.NDArray[np.generic])

DEAD = -np.inf
"""The closing bound of a row that is no longer a head (superseded or erased)."""


@dataclass(frozen=True, slots=True)
class Heads:
    """What one search sees of a :class:`HeadMatrix`: its first ``count`` rows."""

    count: int
    ids: list[str]
    rowids: I64
    opens: F64
    closes: F64
    expires: F64
    span: tuple[float, float, float]
    nearest: NearestRows

    def all_live(self, now: float, include_expired: bool) -> bool:
        """Whether every row is valid (and, unless ``include_expired``, unexpired) at ``now``."""
        opens, closes, expires = self.span
        return bool(opens <= now < closes and (include_expired or now < expires))


class HeadMatrix:
    """Current versions of one prefix and model: ids, rowids, vectors and validity
    bounds (``opens``: latest of recorded and valid-from; ``closes``: valid-to, or
    :data:`DEAD`; ``expires``), growing in place."""

    def __init__(self, ids: list[str], rowids: I64, nearest: NearestRows, bounds: F64) -> None:
        self.ids = ids
        self.index = {row_id: at for at, row_id in enumerate(ids)}
        self.count = len(ids)
        self.dead = 0
        self.nearest = nearest
        self._rowids = rowids
        self._bounds = bounds
        """Shape (3, capacity): opens, closes, expires."""
        self._span = (np.inf, -np.inf, -np.inf)
        self.measure()

    def snapshot(self) -> Heads:
        n = self.count
        opens, closes, expires = self._bounds[:, :n]
        return Heads(
            n, self.ids, self._rowids[:n], opens, closes, expires, self._span, self.nearest
        )

    def measure(self) -> None:
        """Recompute the latest opening, earliest closing and earliest expiry."""
        if self.count and self._bounds.shape[1]:  # (a matrix loaded without bounds has none)
            bounds = self._bounds[:, : self.count]
            self._span = (bounds[0].max(), bounds[1].min(), bounds[2].min())
        else:
            self._span = (np.inf, -np.inf, -np.inf)

    def worn(self) -> bool:
        """Whether enough rows are dead that a reload is worth its cost."""
        return self.dead > max(4096, self.count // 4)

    def append(
        self, ids: Sequence[str], rowids: I64, vectors: npt.NDArray[np.float32], bounds: F64
    ) -> None:
        start, end = self.count, self.count + len(ids)
        if end > len(self._rowids):
            room = max(end, start + start // 4, 1024)
            self._rowids = _grown(self._rowids, start, room)
            self._bounds = _grown(self._bounds, start, room)
        self._rowids[start:end] = rowids
        self._bounds[:, start:end] = bounds
        self.nearest.append(vectors)
        self.ids.extend(ids)
        self.index.update((row_id, at) for at, row_id in enumerate(ids, start))
        self.count = end
        self.measure()

    def patch(
        self, closures: Sequence[Closure], expiry: Sequence[tuple[str, float | None]]
    ) -> None:
        """Apply validity changes in place (a superseded version leaves the heads)."""
        for closure in closures:
            at = self.index.get(closure.id)
            if at is not None:
                closes = to_epoch(closure.valid_to)
                dead = bool(closure.superseded_by) or closes is None
                self.dead += dead and self._bounds[1, at] != DEAD
                self._bounds[1, at] = DEAD if dead or closes is None else closes
        for row_id, expires in expiry:
            at = self.index.get(row_id)
            if at is not None:
                self._bounds[2, at] = np.inf if expires is None else expires
        self.measure()

    def remove(self, rowids: I64) -> None:
        """Erase the rows of these rowids: zeroed vectors, never returned again."""
        rows = np.flatnonzero(np.isin(self._rowids[: self.count], rowids))
        if not len(rows):
            return
        ids = list(self.ids)  # searches running keep the old list
        for at in rows.tolist():
            self.index.pop(ids[at], None)
            ids[at] = ""
        self.ids = ids
        self.dead += int(np.count_nonzero(self._bounds[1, rows] != DEAD))
        self._bounds[1, rows] = DEAD
        self._rowids[rows] = -1
        self.nearest.erase(rows)
        self.measure()


def _grown(array: _A, used: int, room: int) -> _A:
    """A copy of ``array`` with its first ``used`` columns (last axis) and room for ``room``."""
    grown = np.empty((*array.shape[:-1], room), dtype=array.dtype)
    grown[..., :used] = array[..., :used]
    return grown  # type: ignore[return-value]
