"""No write of a user's facts is acknowledged while the user's erasure runs (in one
process): one committing when it starts is erased with the rest, one arriving meanwhile
waits and is stored after it. Before the fence, writers racing ``forget`` were told
"added" for facts the erasure then reported gone while they stayed stored."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from engram import Principal
from engram.memory import Memory
from engram.recall import HashEmbedder

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")


class _Slow:
    """A participant erased last, inside the fence: it notes when, and takes its time
    so that writers arrive while the erasure runs."""

    name = "slow"

    def __init__(self) -> None:
        self.at: float | None = None

    def erase(self, principal: Principal) -> dict[str, int]:
        time.sleep(0.3)
        self.at = time.monotonic()
        return {"items": 0}


def test_no_write_is_acknowledged_while_its_users_erasure_runs(tmp_path: Path) -> None:
    slow = _Slow()
    acked: list[tuple[float, str]] = []
    stop = threading.Event()
    with Memory.open(tmp_path / ".engram", embedder=HashEmbedder(), participants=[slow]) as memory:

        def write(writer: int) -> None:
            n = 0
            while not stop.is_set():
                key = f"w{writer}-{n}"
                memory.remember(ALICE, f"Note {key} about the harbour", key=key)
                acked.append((time.monotonic(), key))
                n += 1

        memory.remember(BOB, "Bob keeps his bike in the shed", key="bike")
        writers = [threading.Thread(target=write, args=(w,)) for w in range(3)]
        for thread in writers:
            thread.start()
        while len(acked) < 20:
            time.sleep(0.01)
        started = time.monotonic()
        report = memory.forget(ALICE)
        time.sleep(0.2)
        stop.set()
        for thread in writers:
            thread.join(timeout=30)
        assert slow.at is not None and report.facts.keys > 0
        kept = {r.key for r in memory.facts(ALICE, include_history=False)}
        before = {key for at, key in acked if at < slow.at}
        during = [key for at, key in acked if started <= at < slow.at]
        assert before and not before & kept  # every write acknowledged before it: erased
        assert during == [] or not set(during) & kept
        assert {key for at, key in acked if at > slow.at} <= kept  # after it: kept
        assert [r.key for r in memory.facts(BOB)] == ["bike"]


def test_a_write_arriving_during_an_erasure_waits_for_it(tmp_path: Path) -> None:
    inside, release = threading.Event(), threading.Event()

    class Held:
        name = "held"

        def erase(self, principal: Principal) -> dict[str, int]:
            inside.set()
            assert release.wait(timeout=30)
            return {}

    with Memory.open(
        tmp_path / ".engram", embedder=HashEmbedder(), participants=[Held()]
    ) as memory:
        memory.remember(ALICE, "Lives in Lisbon", key="home")
        eraser = threading.Thread(target=memory.forget, args=(ALICE,))
        eraser.start()
        assert inside.wait(timeout=30)
        done = threading.Event()

        def write() -> None:
            memory.remember(ALICE, "Lives in Porto", key="home")
            done.set()

        writer = threading.Thread(target=write)
        writer.start()
        assert not done.wait(timeout=0.5)  # not acknowledged while the erasure runs
        memory.remember(BOB, "Bob lives in Faro", key="home")  # another user is not held up
        release.set()
        eraser.join(timeout=30)
        writer.join(timeout=30)
        assert done.is_set()
        assert [r.text for r in memory.facts(ALICE)] == ["Lives in Porto"]


def test_batches_racing_erasures_neither_wait_for_ever_nor_fail(tmp_path: Path) -> None:
    """A batch holds its transaction across the facts it writes: it must take the user's
    fence before that (as every write does), or an erasure holding the fence waits for
    the transaction while the batch waits for the fence."""
    stop, failures = threading.Event(), []
    with Memory.open(tmp_path / ".engram", embedder=HashEmbedder()) as memory:

        def write(writer: int) -> None:
            n = 0
            try:
                while not stop.is_set():
                    facts = [f"Batch {writer}-{n} note {i} about the harbour" for i in range(20)]
                    memory.remember_many(ALICE, facts)
                    n += 1
            except Exception as exc:  # noqa: BLE001 (reported to the test below)
                failures.append(exc)

        writers = [threading.Thread(target=write, args=(w,)) for w in range(2)]
        for thread in writers:
            thread.start()
        for _ in range(3):
            time.sleep(0.2)
            memory.forget(ALICE)
        stop.set()
        for thread in writers:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in writers) and failures == []
