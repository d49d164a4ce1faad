"""A writer SIGKILLed half-way through a document write leaves a hidden temp file that
holds the whole document. Reopening the store removes it (never a live writer's),
and ``forget`` leaves no byte of the user's content in it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engram import BackendError, Memory, Principal
from engram.backends.files import FileDocumentStore

pytestmark = pytest.mark.timeout(60)

ALICE = Principal("acme", "alice")
SECRET = "alice-private-7f3a9c " * 2000  # 42 kB, one marker repeated
WRITER = Path(__file__).with_name("crash_writer.py")


@contextmanager
def stalled_writer(home: Path, tmp_path: Path, path: str) -> Iterator[subprocess.Popen[bytes]]:
    """A process stopped half-way through writing ``SECRET`` to ``path``; killed after."""
    marker, text = tmp_path / "stalled", tmp_path / "secret.txt"
    text.write_text(SECRET, encoding="utf-8")
    args = [sys.executable, str(WRITER), str(home), str(marker), path, str(text)]
    child = subprocess.Popen(args, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert child.poll() is None, (
                f"the writer exited: {child.stderr and child.stderr.read()}"
            )
            assert time.monotonic() < deadline, "the writer never reached its temp file's fsync"
            time.sleep(0.02)
        assert int(marker.read_text()) == child.pid
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)


def _kill(child: subprocess.Popen[bytes]) -> None:
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL


def _temps(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob(".engram-*.tmp"))


def _holding(root: Path, needle: bytes) -> list[Path]:
    """Every file under ``root`` whose bytes contain ``needle``."""
    return sorted(p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


def test_a_reopened_store_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with stalled_writer(home, tmp_path, "user-profiles/alice.md") as child:
        _kill(child)
    root = home / "documents" / ALICE.tenant_id
    left = _temps(root)
    assert len(left) == 1 and SECRET.encode() in left[0].read_bytes()  # the crash left it
    with FileDocumentStore(home=home) as store:
        assert store.list(ALICE, "**/alice.md") == []  # the write never happened
    print(f"\n{len(left)} temp file left by the kill, {len(_temps(root))} after reopening")
    assert _temps(root) == []
    assert _holding(home, b"alice-private-7f3a9c") == []


@pytest.mark.parametrize("first", ["read", "write", "list"])
def test_a_live_writers_temp_file_is_left_alone(tmp_path: Path, first: str) -> None:
    home = tmp_path / "home"
    with FileDocumentStore(home=home, lock_timeout=0.5) as store:
        store.write_text(ALICE, "README.md", "# Readme\n")
        with stalled_writer(home, tmp_path, "research/notes.md") as child:
            other = FileDocumentStore(home=home, lock_timeout=0.5)  # opened meanwhile
            if first == "read":
                assert other.read_text(ALICE, "README.md") == "# Readme\n"
            elif first == "list":
                assert [i.path for i in other.list(ALICE)] == ["README.md"]
            else:  # waits for the live writer, then gives up: the temp file stays
                with pytest.raises(BackendError, match="locked by another writer"):
                    other.write_text(ALICE, "x.md", "x")
            root = home / "documents" / ALICE.tenant_id
            assert len(_temps(root)) == 1  # still being written: not removed
            _kill(child)
        other.list(ALICE)  # the writer is gone: now its leftover goes
        other.close()
        assert _temps(root) == []


def test_forget_erases_a_killed_writers_copy_of_the_users_document(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory.open(home) as memory:
        memory.remember(ALICE, "Prefers dividend stocks", slot="style")
        memory.documents.write_text(ALICE, "README.md", "# Readme\n")  # the tenant is open
        with stalled_writer(home, tmp_path, "user-profiles/alice.md") as child:
            _kill(child)
        root = home / "documents" / ALICE.tenant_id
        assert len(_temps(root)) == 1  # left after this store opened the tenant
        memory.forget(ALICE)
    print(
        f"\nafter forget: {len(_temps(root))} temp files, "
        f"{len(_holding(home, b'alice-private-7f3a9c'))} files with the user's text"
    )
    assert _temps(root) == []
    assert _holding(home, b"alice-private-7f3a9c") == []
