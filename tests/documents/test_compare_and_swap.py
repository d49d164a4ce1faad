"""Writes that say what they replace (``expected=``) and read-modify-writes that lose
nothing (``update_text``), on every backend."""

from __future__ import annotations

import threading

import pytest

from engram import ConflictError, InvalidInputError, Principal, StaleWriteError
from engram.stores.documents import DocumentStore, digest_of

ALICE = Principal("acme", "alice")


def test_a_write_that_expects_the_current_digest_replaces_it(store: DocumentStore) -> None:
    info = store.write_text(ALICE, "notes.md", "# Notes\n\nfirst\n")
    assert info.digest == digest_of("# Notes\n\nfirst\n") == store.list(ALICE)[0].digest
    store.write_text(ALICE, "notes.md", "# Notes\n\nsecond\n", expected=info.digest)
    assert store.read_text(ALICE, "notes.md") == "# Notes\n\nsecond\n"


def test_a_write_based_on_a_stale_read_is_refused(store: DocumentStore) -> None:
    stale = store.write_text(ALICE, "notes.md", "v1\n").digest
    store.write_text(ALICE, "notes.md", "v2 by someone else\n")
    with pytest.raises(StaleWriteError, match="since it was read"):
        store.write_text(ALICE, "notes.md", "v1 edited\n", expected=stale)
    assert store.read_text(ALICE, "notes.md") == "v2 by someone else\n"
    store.delete(ALICE, "notes.md")
    with pytest.raises(StaleWriteError):
        store.write_text(ALICE, "notes.md", "v1 edited\n", expected=stale)
    assert not store.exists(ALICE, "notes.md")


def test_update_creates_edits_and_leaves_the_document_alone_when_the_edit_fails(
    store: DocumentStore,
) -> None:
    seen: list[str | None] = []

    def append(text: str | None) -> str:
        seen.append(text)
        return (text or "# Log\n") + "- entry\n"

    store.update_text(ALICE, "log.md", append)
    store.update_text(ALICE, "log.md", append)
    assert seen == [None, "# Log\n- entry\n"]
    assert store.read_text(ALICE, "log.md") == "# Log\n- entry\n- entry\n"

    def refuse(text: str | None) -> str:
        raise ConflictError("not applicable")

    with pytest.raises(ConflictError, match="not applicable"):  # not retried: not stale
        store.update_text(ALICE, "log.md", refuse)
    assert store.read_text(ALICE, "log.md") == "# Log\n- entry\n- entry\n"
    with pytest.raises(InvalidInputError):
        store.update_text(ALICE, "log.md/inside.md", append)


def test_update_runs_the_edit_again_on_what_another_writer_saved(store: DocumentStore) -> None:
    store.write_text(ALICE, "log.md", "a\n")
    calls: list[str | None] = []

    def append_b(text: str | None) -> str:
        calls.append(text)
        if len(calls) == 1:  # someone saves between this read and this write
            store.write_text(ALICE, "log.md", "a\nc\n")
        return f"{text}b\n"

    store.update_text(ALICE, "log.md", append_b)
    assert calls == ["a\n", "a\nc\n"]
    assert store.read_text(ALICE, "log.md") == "a\nc\nb\n"


def test_threads_updating_one_document_lose_nothing(store: DocumentStore) -> None:
    store.write_text(ALICE, "log.md", "# Log\n")
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for n in range(25):
                store.update_text(ALICE, "log.md", lambda t, n=n: f"{t}- {index}-{n}\n")
        except BaseException as exc:  # noqa: BLE001 - collected, the test fails on any
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    lines = store.read_text(ALICE, "log.md").splitlines()
    assert errors == []
    assert sorted(lines[1:]) == sorted(f"- {i}-{n}" for i in range(4) for n in range(25))
