"""A real ``redis-server`` for the tests, on a loopback port of its own.

``redis_service`` starts one per test session (in a temporary directory, no RDB
snapshots, AOF on with ``appendfsync always``) and stops it at the end; ``redis_url``
hands each test an emptied database on it. :class:`RedisServer` is also what the
durability tests start, SIGKILL and restart themselves. The binary is
``$ENGRAM_TEST_REDIS_SERVER`` or ``redis-server`` on ``PATH``; when it is missing the
tests skip, or fail when ``CI`` / ``ENGRAM_REQUIRE_ALL_BACKENDS`` is set.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from required import unavailable

BINARY_ENV = "ENGRAM_TEST_REDIS_SERVER"


def binary() -> str | None:
    return os.environ.get(BINARY_ENV) or shutil.which("redis-server")


def require_binary() -> str:
    found = binary()
    if found is None:
        unavailable("redis-server is not installed (apt-get install redis-server)")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process on ``127.0.0.1:<port>`` keeping its files in ``root``."""

    def __init__(self, root: Path, *, fsync: str = "always", port: int | None = None) -> None:
        self.root, self.fsync = root, fsync
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.root.mkdir(parents=True, exist_ok=True)
        args = [
            require_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
            "--dir", str(self.root), "--save", "", "--appendonly", "yes",
            "--appendfsync", self.fsync, "--protected-mode", "yes", "--daemonize", "no",
            "--logfile", str(self.root / "redis.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        try:
            while True:
                assert self.process is not None
                if self.process.poll() is not None:
                    log = (self.root / "redis.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"redis-server exited: {log}")
                try:
                    if client.ping():
                        return
                except redis.ConnectionError:
                    pass
                except redis.ResponseError:  # still loading its files
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not answer within 30 s")
                time.sleep(0.02)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown save, no flush beyond what ``appendfsync`` did."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()

    def persisted_bytes(self) -> bytes:
        """Everything Redis keeps on disk (AOF parts and any RDB file)."""
        files = [p for p in self.root.rglob("*") if p.is_file() and p.name != "redis.log"]
        return b"".join(p.read_bytes() for p in sorted(files))


@pytest.fixture(scope="session")
def redis_service() -> Iterator[RedisServer]:
    """One Redis server for the session (AOF, ``appendfsync always``), stopped at the end."""
    require_binary()
    root = Path(tempfile.mkdtemp(prefix="engram-redis-"))
    server = RedisServer(root / "data").start()
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def redis_url(redis_service: RedisServer) -> str:
    """The session server's URL, its data emptied for this test."""
    with redis.Redis(port=redis_service.port) as client:
        client.flushall()
    return redis_service.url
