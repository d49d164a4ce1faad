"""Servers the hot-tier benchmark starts: redis-server on a free loopback port, and the
checkpoint loop whose acknowledged writes the durability measurement counts."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import redis


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Redis:
    """``redis-server`` with AOF on (``appendfsync`` as given), no RDB snapshots."""

    def __init__(self, root: Path, fsync: str) -> None:
        self.root, self.fsync, self.port = root, fsync, free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> Redis:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not installed (apt-get install redis-server)")
        self.root.mkdir(parents=True, exist_ok=True)
        args = [
            binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.root),
            "--save", "", "--appendonly", "yes", "--appendfsync", self.fsync,
            "--logfile", str(self.root / "redis.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        with redis.Redis(port=self.port, socket_connect_timeout=1) as client:
            for _ in range(1500):
                try:
                    if client.ping():
                        return self
                except (redis.ConnectionError, redis.ResponseError):
                    time.sleep(0.02)
        raise SystemExit("redis-server did not start")

    def version(self) -> str:
        with redis.Redis(port=self.port) as client:
            return str(client.info("server")["redis_version"])

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


# The writer puts checkpoints on one thread as fast as it can and prints each id once
# put returned (acknowledged); it stops at the first error.
WRITER = """
import sys
from langgraph.checkpoint.base import empty_checkpoint
from engram.errors import BackendError
from engram.stores.hot import open_checkpointer
config = {"configurable": {"thread_id": "loop", "checkpoint_ns": ""}}
with open_checkpointer(sys.argv[1], encryption_key=None) as saver:
    try:
        for step in range(10**9):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"log": ["x" * 300] * 4, "step": step}
            config = saver.put(config, checkpoint, {"step": step, "source": "loop"}, {})
            print(config["configurable"]["checkpoint_id"], flush=True)
    except BackendError:
        pass
"""


def acknowledged_then_killed(server: Redis, seconds: float) -> tuple[list[str], float]:
    """Run the writer, SIGKILL the server after ``seconds``; the acknowledged ids and the
    acknowledged writes per second."""
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, server.url], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    first = child.stdout.readline()
    start = time.perf_counter()
    time.sleep(seconds)
    server.kill()
    took = time.perf_counter() - start
    rest, _ = child.communicate(timeout=120)
    acked = [first.strip(), *rest.split()]
    return acked, len(acked) / took
