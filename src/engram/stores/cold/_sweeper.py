"""A background TTL sweeper: calls ``sweep()`` every ``interval`` seconds in a daemon thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import TracebackType

from engram.errors import EngramError, InvalidInputError

log = logging.getLogger(__name__)


class Sweeper:
    """Runs ``sweep`` periodically until :meth:`stop` (or the ``with`` block ends).

    Nothing starts in the constructor; call :meth:`start`. Engine errors are
    logged and the next round runs anyway.
    """

    def __init__(self, sweep: Callable[[], int], interval: float) -> None:
        if not interval > 0:
            raise InvalidInputError(f"sweep interval must be positive, got {interval!r}")
        self._sweep = sweep
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.removed = 0

    def start(self) -> Sweeper:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="engram-ttl-sweeper", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.removed += self._sweep()
            except EngramError:
                log.exception("TTL sweep failed; retrying in %ss", self._interval)

    def __enter__(self) -> Sweeper:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
