"""Start ``engram serve`` as a real process on a free loopback port, and stop it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

STARTUP_SECONDS = 90.0


@dataclass
class Server:
    """A running ``engram serve``: its URL, and what it wrote to standard error."""

    process: subprocess.Popen[str]
    url: str
    errors: list[str] = field(default_factory=list)

    def client(self, token: str | None = None, **headers: str) -> httpx.Client:
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def _drain(stream: object, into: list[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.append(line)


def start(args: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Server:
    """Run ``engram serve <args>`` (``--port 0`` unless given), wait for its URL and /readyz."""
    argv = [sys.executable, "-m", "engram", "serve", *args]
    if "--port" not in args:
        argv += ["--port", "0"]
    environ = {**os.environ, **(env or {})}
    process = subprocess.Popen(
        argv, cwd=cwd, env=environ, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    server = Server(process, "")
    threading.Thread(target=_drain, args=(process.stderr, server.errors), daemon=True).start()
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("engram serving on "):
        process.wait(timeout=30)
        raise AssertionError(f"engram serve did not start: {line!r} {''.join(server.errors)}")
    server.url = line.split()[-1]
    threading.Thread(target=_drain, args=(process.stdout, []), daemon=True).start()
    _wait_ready(server)
    return server


def _wait_ready(server: Server) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"engram serve exited: {''.join(server.errors)}")
        try:
            if httpx.get(server.url + "/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.stop()
    raise AssertionError(f"engram serve was not ready in time: {''.join(server.errors)}")
