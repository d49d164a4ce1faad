"""The per-user fence between writes and an erasure (:mod:`engram.stores.cold._fence`)."""

from __future__ import annotations

import threading
import time

from engram.stores.cold._fence import Fence

ALICE = ("acme", "alice")


def test_a_write_nested_in_one_its_thread_holds_goes_on_while_an_erasure_waits() -> None:
    """A store write holds the fence, then a step inside it holds it again; an erasure
    arriving in between waits for the outer write, so the inner one must not wait for
    the erasure (each would wait for the other for ever)."""
    fence, order = Fence(), []
    outer_held, erasure_waiting = threading.Event(), threading.Event()

    def erase() -> None:
        assert outer_held.wait(timeout=10)
        erasure_waiting.set()
        with fence.erasing(ALICE):
            order.append("erased")

    eraser = threading.Thread(target=erase)
    eraser.start()
    with fence.writing((*ALICE, "facts")):
        outer_held.set()
        assert erasure_waiting.wait(timeout=10)
        time.sleep(0.1)  # the erasure is waiting for this write
        with fence.writing((*ALICE, "facts")):
            order.append("inner write")
    eraser.join(timeout=10)
    assert not eraser.is_alive() and order == ["inner write", "erased"]


def test_writes_arriving_during_an_erasure_wait_and_other_users_do_not() -> None:
    fence, order = Fence(), []
    inside, release = threading.Event(), threading.Event()

    def erase() -> None:
        with fence.erasing(ALICE):
            inside.set()
            assert release.wait(timeout=10)
            order.append("erased")

    def write(user: tuple[str, str]) -> None:
        with fence.writing(user):
            order.append(user[1])

    eraser = threading.Thread(target=erase)
    eraser.start()
    assert inside.wait(timeout=10)
    alice = threading.Thread(target=write, args=(ALICE,))
    alice.start()
    write(("acme", "bob"))  # not held up
    time.sleep(0.1)
    assert order == ["bob"]
    release.set()
    for thread in (eraser, alice):
        thread.join(timeout=10)
    assert order == ["bob", "erased", "alice"]
