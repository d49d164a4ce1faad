"""A per-user fence between writes and an erasure, within one process.

Each write of a user's memory holds the fence (shared, with the user's other writes) while
it commits; an erasure of the user holds it alone: it waits for the writes committing to
finish, and writes that arrive meanwhile wait for it to end. So no write is acknowledged
while its user's erasure runs: a write either committed before (and is erased) or commits
after (and is the user's new memory). The thread running the erasure passes its own fence.
Other processes are not fenced (see the operations guide).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

User = tuple[str, ...]
"""The namespace prefix of one user: ``(tenant, user)``."""


class Fence:
    """Shared for a user's writes, exclusive for the user's erasure (see the module)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._writing: Counter[User] = Counter()
        self._erasing: dict[User, int] = {}  # user -> the thread erasing them
        self._mine = threading.local()  # the users this thread holds for a write

    def _held(self) -> Counter[User]:
        held: Counter[User] | None = getattr(self._mine, "held", None)
        if held is None:
            held = self._mine.held = Counter()
        return held

    @contextmanager
    def writing(self, namespace: tuple[str, ...]) -> Iterator[None]:
        """Hold ``namespace``'s user for one write (waits out an erasure of the user). A
        write inside one this thread holds already goes on: an erasure waiting for the
        outer one must not hold up the inner one (it would wait for itself)."""
        user, me, held = namespace[:2], threading.get_ident(), self._held()
        with self._changed:
            if not held[user]:
                self._changed.wait_for(lambda: self._erasing.get(user, me) == me)
            self._writing[user] += 1
            held[user] += 1
        try:
            yield
        finally:
            with self._changed:
                held[user] -= 1
                self._writing[user] -= 1
                if not self._writing[user]:
                    del self._writing[user]
                self._changed.notify_all()

    @contextmanager
    def erasing(self, user: User) -> Iterator[None]:
        """Hold ``user`` alone, once the writes committing for them have finished."""
        me = threading.get_ident()
        with self._changed:
            self._changed.wait_for(lambda: self._erasing.get(user, me) == me)
            outer = user in self._erasing  # (an erasure inside this thread's own)
            self._erasing[user] = me
            self._changed.wait_for(lambda: not self._writing[user])
        try:
            yield
        finally:
            with self._changed:
                if not outer:
                    del self._erasing[user]
                self._changed.notify_all()
