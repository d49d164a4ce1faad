"""No path, however odd, and no symlink, however timed, reaches outside the root.

The property tests generate 103,000 paths in total: batches of 100 paths per example
(65,000 validated, 35,000 read through a root full of links, 3,000 written, moved and
deleted) plus 300 free-text paths.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engram import EngramError, InvalidInputError, PathEscapeError, Principal
from engram.backends.files import FileDocumentStore
from engram.stores.documents.paths import split_path

ALICE = Principal("acme", "alice")
SECRET = "OUTSIDE SECRET"
INSIDE = "inside text\n"

# Pieces that matter for escapes; other byte values become arbitrary characters.
PIECES = (
    "..",
    ".",
    "",
    "/",
    "//",
    "\\",
    "\x00",
    "a",
    "docs",
    "link",
    "dirlink",
    "doc.md",
    "up",
    "outside",
    "é",
    "e\u0301",
    "\u202e",
    "\u200b",
    "\ufeff",
    "\n",
    "\t",
    " ",
    "C:",
    "~",
    "%2e%2e",
    "．．",
    "\uff0f",
    "\u2025",
    "\ud800",
    "\U0001f600",
    ".hidden",
    "a/../..",
)
PATH_BYTES = 12
PER_EXAMPLE = 100


def decode(blob: bytes) -> list[str]:
    """Cut ``blob`` into ``PER_EXAMPLE`` paths of up to 12 pieces (a byte >= 240 ends one)."""
    paths = []
    for start in range(0, len(blob), PATH_BYTES):
        pieces = []
        for byte in blob[start : start + PATH_BYTES]:
            if byte >= 240:
                break
            if byte < len(PIECES):
                pieces.append(PIECES[byte])
            elif byte < 128:
                pieces.append(chr(byte))
            else:
                pieces.append(chr(0x80 + byte * 613 % 0x2F00))
        paths.append("".join(pieces))
    return paths


# Each example is a batch of 100 generated paths: generating them one by one costs
# ~10 ms per example on a loaded machine, a batch costs ~0.2 ms per path.
BATCHES = st.binary(min_size=PATH_BYTES * PER_EXAMPLE, max_size=PATH_BYTES * PER_EXAMPLE).map(
    decode
)
_PIECE = st.one_of(st.sampled_from(PIECES), st.text(max_size=8))
TEXT_PATHS = st.lists(_PIECE, min_size=1, max_size=6).map("/".join)
FAST = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
# Shrinking a 1,200-byte batch takes minutes; a failure names the offending path instead.
BATCH = settings(FAST, phases=[Phase.explicit, Phase.generate])


def _within(root: str, parts: tuple[str, ...]) -> bool:
    joined = os.path.normpath(os.path.join(root, *parts))
    return joined.startswith(root + os.sep)


def _check_split(path: str) -> None:
    try:
        parts = split_path(path)
    except (PathEscapeError, InvalidInputError):
        return
    assert parts and _within("/root", parts)
    for part in parts:
        assert part not in ("", ".", "..") and not part.startswith(".")
        assert "/" not in part and "\x00" not in part and "\\" not in part
        assert unicodedata.is_normalized("NFC", part)
        assert all(unicodedata.category(c)[0] != "C" for c in part)


@settings(BATCH, max_examples=650)  # 65,000 paths
@given(BATCHES)
def test_validated_paths_stay_below_the_root(paths: list[str]) -> None:
    assert len(paths) == PER_EXAMPLE
    for path in paths:
        _check_split(path)


@settings(FAST, max_examples=300)
@given(st.one_of(TEXT_PATHS, st.text(max_size=40)))
def test_validated_text_paths_stay_below_the_root(path: str) -> None:
    _check_split(path)


def _sandbox(tmp: Path) -> tuple[FileDocumentStore, Path, Path]:
    """A tenant root holding links that point outside, and an outside full of secrets."""
    base, outside = tmp / "documents", tmp / "outside"
    (outside / "docs").mkdir(parents=True)
    for name in ("doc.md", "docs/doc.md", "a"):
        (outside / name).write_text(SECRET)
    store = FileDocumentStore(base, index_path=tmp / "index.db")
    store.write_text(ALICE, "docs/doc.md", INSIDE)
    store.write_text(ALICE, "a/doc.md", INSIDE)
    root = store.root(ALICE)
    (root / "link").symlink_to(outside / "doc.md")
    (root / "dirlink").symlink_to(outside)
    (root / "docs" / "up").symlink_to("../..")
    return store, root, outside


@pytest.fixture(scope="module")
def read_sandbox() -> Iterator[tuple[FileDocumentStore, Path, Path]]:
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = _sandbox(Path(tmp))
        yield sandbox
        sandbox[0].close()


@pytest.fixture(scope="module")
def write_sandbox() -> Iterator[tuple[FileDocumentStore, Path, Path]]:
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = _sandbox(Path(tmp))
        yield sandbox
        sandbox[0].close()


OUTSIDE = {"doc.md": SECRET, "docs/doc.md": SECRET, "a": SECRET}


def _snapshot(outside: Path) -> dict[str, str]:
    return {str(p.relative_to(outside)): p.read_text() for p in outside.rglob("*") if p.is_file()}


@settings(BATCH, max_examples=350)  # 35,000 paths
@given(paths=BATCHES)
def test_reads_never_return_outside_bytes(
    read_sandbox: tuple[FileDocumentStore, Path, Path], paths: list[str]
) -> None:
    store, _, _ = read_sandbox
    for path in paths:
        try:
            text = store.read_text(ALICE, path)
        except EngramError:
            continue
        assert text == INSIDE, f"read {path!r} returned {text!r}"


@settings(BATCH, max_examples=30)  # 3,000 paths, each written, moved and deleted
@given(paths=BATCHES)
def test_writes_moves_and_deletes_never_touch_outside(
    write_sandbox: tuple[FileDocumentStore, Path, Path], paths: list[str]
) -> None:
    store, root, outside = write_sandbox
    for path in paths:
        with contextlib.suppress(EngramError):
            store.write_text(ALICE, path, "written\n")
        with contextlib.suppress(EngramError):
            store.move(ALICE, path, "docs/moved.md")
        with contextlib.suppress(EngramError):
            store.delete(ALICE, path)
        assert _snapshot(outside) == OUTSIDE, f"{path!r} reached outside"
        assert os.path.islink(root / "dirlink") and os.path.islink(root / "link"), path


@pytest.mark.parametrize("path", ["link", "dirlink/doc.md", "docs/up/outside/doc.md"])
def test_existing_symlinks_are_refused(tmp_path: Path, path: str) -> None:
    store, _, outside = _sandbox(tmp_path)
    with pytest.raises(PathEscapeError, match="symbolic link"):
        store.read_text(ALICE, path)
    with pytest.raises(PathEscapeError):
        store.write_text(ALICE, path, "x")
    assert _snapshot(outside)["doc.md"] == SECRET


def test_a_hard_link_to_an_outside_file_is_not_read(tmp_path: Path) -> None:
    store = FileDocumentStore(tmp_path / "docs", index_path=tmp_path / "i.db")
    store.write_text(ALICE, "ok.md", "fine\n")
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    os.link(secret, store.root(ALICE) / "hard.md")
    with pytest.raises(PathEscapeError, match="hard links"):
        store.read_text(ALICE, "hard.md")
    store.write_text(ALICE, "hard.md", "replaced\n")
    assert secret.read_text() == SECRET
    store.close()


def _flip(root: Path, outside: Path, stop: threading.Event) -> int:
    """Swap ``root/docs`` between the real directory and a symlink to ``outside``.

    A writer may re-create ``docs`` while it is absent; that directory is moved aside.
    """
    docs, real, link = root / "docs", root / ".real", root / ".link"
    os.symlink(outside / "docs", link)
    flips = 0
    while not stop.is_set():
        os.rename(docs, real)
        with contextlib.suppress(OSError):  # fails when a writer re-created docs meanwhile
            os.rename(link, docs)
            flips += 1
            time.sleep(0)
            os.rename(docs, link)
        _restore(docs, real)
        time.sleep(0.0005)  # let the workers also see the real directory
    return flips


def _restore(docs: Path, real: Path) -> None:
    while True:
        try:
            os.rename(real, docs)
            return
        except OSError:  # a writer re-created docs: move that directory aside
            with contextlib.suppress(OSError):
                os.rename(docs, docs.parent / f".extra-{time.monotonic_ns()}")


def test_swapping_a_directory_for_a_symlink_mid_operation(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "docs").mkdir(parents=True)
    (outside / "docs" / "doc.md").write_text(SECRET)
    store = FileDocumentStore(tmp_path / "documents", index_path=tmp_path / "index.db")
    store.write_text(ALICE, "docs/doc.md", INSIDE)
    stop, seen, errors = threading.Event(), {"ok": 0, "refused": 0}, []
    flips: list[int] = []
    flipper = threading.Thread(target=lambda: flips.append(_flip(store.root(ALICE), outside, stop)))

    def worker(n: int) -> None:
        for i in range(400 if n < 2 else 40):
            try:
                if n == 2:
                    hits = store.search(ALICE, "OUTSIDE SECRET inside", mode="keyword")
                    assert all(SECRET not in hit.text for hit in hits)
                elif i % 2:
                    assert store.read_text(ALICE, "docs/doc.md") == INSIDE
                else:
                    store.write_text(ALICE, f"docs/w{n}-{i}.md", "inside write\n")
                seen["ok"] += 1
            except EngramError:
                seen["refused"] += 1
            except AssertionError as exc:
                errors.append(exc)

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(3)]
    flipper.start()
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    stop.set()
    flipper.join()
    assert not errors, "a read returned bytes from outside the root"
    assert sorted(p.name for p in (outside / "docs").iterdir()) == ["doc.md"]
    assert (outside / "docs" / "doc.md").read_text() == SECRET
    assert flips[0] > 10 and seen["ok"] > 0 and seen["refused"] > 0, (flips, seen)
    store.close()
