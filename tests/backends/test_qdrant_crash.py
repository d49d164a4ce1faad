"""SIGKILL at every step of a write on the embedded Qdrant forms (local mode and Edge).

A fork server (one Python process that imports engram once and opens no store) forks a
writer per kill point; the writer counts the Qdrant calls that change the folder
(upserts, payload updates, deletions and, on Edge, each shard's flush) and SIGKILLs
itself before the N-th. The test reopens the folder after each kill and checks what a
user would see: the last acknowledged value is current, nothing superseded or closed is
served, and the stored points agree with each other. N runs from 1 until the writer
finishes, so every step of the write is a kill point whatever the write's calls are.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import models

from engram import Principal
from engram.backends.qdrant import _points as pt
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore, View, open_store

SRC = Path(__file__).resolve().parents[2] / "src"
ME = Principal("acme", "alice")
MODES = pytest.mark.parametrize("mode", ["local", "edge"])
MUTABLE = ("vt", "sb", "head", "closes", "ex", "expires", "model")
"""The payload fields a write changes after the insert (the dense copies hold them too)."""
JOB_FROM, JOB_TO = datetime(2019, 1, 1, tzinfo=UTC), datetime(2020, 6, 1, tzinfo=UTC)

FORK_SERVER = r"""
import json, os, signal, sys, traceback
from datetime import datetime, UTC
from engram import Principal
from engram.backends.qdrant import _points as pt
from engram.backends.qdrant._edge import EdgeClient
from engram.recall import HashEmbedder
from engram.stores.cold import NewFact, open_store
from qdrant_client import QdrantClient

ME = Principal("acme", "alice")

def hook(kill, edge):
    calls = [0]
    def step():
        calls[0] += 1
        if calls[0] == kill:
            os.kill(os.getpid(), signal.SIGKILL)
    def counted(original):
        def call(self, *args, **kwargs):
            step()
            return original(self, *args, **kwargs)
        return call
    cls = EdgeClient if edge else QdrantClient
    for name in ("upsert", "set_payload", "delete"):
        setattr(cls, name, counted(getattr(cls, name)))
    if edge:
        class Flushed:
            def __init__(self, shard):
                self._inner = shard
            def flush(self):
                step()
                return self._inner.flush()
            def __getattr__(self, name):
                return getattr(self._inner, name)
        shard = EdgeClient._shard
        EdgeClient._shard = lambda self, name: Flushed(shard(self, name))

def run(job):
    url = f"qdrant+{job['mode']}:///{job['folder']}"
    with open_store(url, embedder=HashEmbedder()) as store:
        hook(job["kill"], job["mode"] == "edge")
        with open(job["acks"], "a") as acks:
            exec(job["code"], {"store": store, "ME": ME, "NewFact": NewFact,
                               "datetime": datetime, "UTC": UTC, "acks": acks})

while line := sys.stdin.readline():
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            run(job)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    outcome = "killed" if killed else f"exit {os.waitstatus_to_exitcode(status)}"
    print(json.dumps(outcome), flush=True)
"""


class ForkServer:
    """The fork server's process: :meth:`run` forks one writer and says how it ended."""

    def __init__(self, log: Path) -> None:
        self.log = log.open("w")
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", FORK_SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )

    def run(self, folder: Path, mode: str, code: str, kill: int, acks: Path) -> str:
        job = {"folder": str(folder), "mode": mode, "code": code, "kill": kill, "acks": str(acks)}
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the fork server died: {self.log.name}"
        return str(json.loads(line))

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)
        self.log.close()


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    server = ForkServer(tmp_path_factory.mktemp("forks") / "stderr.log")
    yield server
    server.close()


def _open(folder: Path, mode: str) -> Any:
    return open_store(f"qdrant+{mode}:///{folder}", embedder=HashEmbedder())


def _points(store: LongTermStore, collection: str, fields: list[str]) -> dict[str, dict[str, Any]]:
    client = store.backend.storage.client  # type: ignore[attr-defined]
    found, _ = client.scroll(
        collection, scroll_filter=None, limit=100_000, offset=None, with_payload=fields
    )
    return {p.payload["id"]: p.payload for p in found}


def _audit(store: LongTermStore) -> None:
    """The stored points agree: one head per key, every successor named exists, every
    dense copy holds its record's fields, every embedded record has its dense copy."""
    storage = store.backend.storage  # type: ignore[attr-defined]
    main = _points(store, storage.collection, ["id", "ns", "key", *MUTABLE])
    heads = Counter((p["ns"], p["key"]) for p in main.values() if p.get("head") == 1)
    assert [k for k, n in heads.items() if n > 1] == []
    assert [p["id"] for p in main.values() if p.get("sb") and p["sb"] not in main] == []
    dense: dict[str, dict[str, Any]] = {}
    for name in [c.name for c in storage.client.get_collections().collections]:
        if name.startswith(f"{storage.collection}_dense_"):
            dense.update(_points(store, name, ["id", *MUTABLE]))
    assert [i for i in dense if i not in main] == []
    drift = {i: d for i, d in dense.items() if any(d.get(f) != main[i].get(f) for f in MUTABLE)}
    assert drift == {}
    assert [i for i, p in main.items() if p.get("model") and i not in dense] == []


def _after_repair(store: LongTermStore) -> None:
    """The stored points agree, once what had no vector is embedded again."""
    store.re_embed(HashEmbedder())
    _audit(store)


def _kill_each_step(
    forks: ForkServer,
    tmp_path: Path,
    mode: str,
    seed: Callable[[LongTermStore], None],
    code: str,
    check: Callable[[LongTermStore, list[str]], None],
) -> int:
    """Seed a folder; for each step N of ``code`` until it completes, run it on a copy
    killed before step N, reopen, ``check(store, acknowledged lines)``; the step count."""
    base = tmp_path / "seed"
    with _open(base, mode) as store:
        seed(store)
    for step in range(1, 500):
        folder, acks = tmp_path / f"k{step}", tmp_path / f"acks{step}"
        shutil.copytree(base, folder)
        acks.touch()
        outcome = forks.run(folder, mode, code, step, acks)
        assert outcome in ("killed", "exit 0"), outcome
        with _open(folder, mode) as store:
            check(store, acks.read_text().splitlines())
            _after_repair(store)
        shutil.rmtree(folder)
        if outcome == "exit 0":
            return step
    raise AssertionError("the write never completed")


# -- a new value of a key ---------------------------------------------------------------


def _seed_home(store: LongTermStore) -> None:
    store.remember(ME, "Lives in Lisbon", slot="home")
    store.remember(ME, "Drinks green tea", key="tea")


SUPERSEDE = 'store.remember(ME, "Lives in Porto", slot="home")'


def _one_home(store: LongTermStore, acks: list[str]) -> None:
    live = [r for r in store.records(ME, limit=50) if r.key != "tea"]
    assert [r.text for r in live] in (["Lives in Lisbon"], ["Lives in Porto"])
    head = live[0]
    assert [r.id for r in store.backend.heads(ME.namespace, [head.key]).values()] == [head.id]
    found = store.recall(ME, "Lives in Lisbon Porto", k=5, context=None)
    assert [h.record.text for h in found if h.record.key == head.key] == [head.text]
    assert all(h.record.superseded_by is None for h in found)
    history = store.history(ME, head.key)
    assert history[-1].id == head.id
    assert all(r.superseded_by is not None for r in history[:-1])
    written = store.remember(ME, "Lives in Faro", slot="home")  # the store writes on
    assert (written.action, written.previous and written.previous.id) == ("updated", head.id)


@MODES
def test_a_kill_at_any_step_of_a_supersession_keeps_one_current_value(
    forks: ForkServer, tmp_path: Path, mode: str
) -> None:
    steps = _kill_each_step(forks, tmp_path, mode, _seed_home, SUPERSEDE, _one_home)
    assert steps > 2  # (the write has steps to be killed at)


# -- a closed fact ------------------------------------------------------------------------


CLOSED = """
store.remember(ME, "Worked at Acme", key="job", valid_from=datetime(2019, 1, 1, tzinfo=UTC),
               valid_to=datetime(2020, 6, 1, tzinfo=UTC))
"""


def _never_current(store: LongTermStore, acks: list[str]) -> None:
    assert "job" not in [r.key for r in store.records(ME, limit=50)]
    assert [(r.text, r.valid_to) for r in store.history(ME, "job")] in (
        [],
        [("Worked at Acme", JOB_TO)],
    )
    then = View(datetime(2020, 1, 1, tzinfo=UTC), as_of=datetime(2020, 1, 1, tzinfo=UTC))
    assert [r.key for r in store.records(ME, view=then)] in ([], ["job"])
    assert all(h.record.key != "job" for h in store.recall(ME, "Worked at Acme", context=None))


@MODES
def test_a_kill_at_any_step_of_a_closed_fact_never_leaves_it_open(
    forks: ForkServer, tmp_path: Path, mode: str
) -> None:
    _kill_each_step(forks, tmp_path, mode, _seed_home, CLOSED, _never_current)


# -- many facts ---------------------------------------------------------------------------


def _seed_items(store: LongTermStore) -> None:
    for i in range(3):
        store.remember(ME, f"value 0 for item {i}", key=f"item{i}")


BATCH = """
facts = [NewFact(f"value {j} for item {j % 3}", key=f"item{j % 3}") for j in range(1, 6)]
def stored(results):
    for result in results:
        acks.write(f"{result.record.key} {result.record.text}\\n")
    acks.flush()
store.remember_many(ME, facts, batch_size=2, stored=stored)
"""


def _acknowledged_stay(store: LongTermStore, acks: list[str]) -> None:
    acked = {f"item{i}": 0 for i in range(3)}
    for line in acks:
        key, text = line.split(" ", 1)
        acked[key] = int(text.split()[1])
    heads = store.backend.heads(ME.namespace, list(acked))
    now = {key: int(head.text.split()[1]) for key, head in heads.items()}
    assert sorted(now) == sorted(acked)
    assert all(now[key] >= value for key, value in acked.items()), (now, acked)
    live = Counter(r.key for r in store.records(ME, limit=50))
    assert live == Counter(list(acked))


@MODES
def test_a_kill_at_any_step_of_many_facts_keeps_every_acknowledged_value(
    forks: ForkServer, tmp_path: Path, mode: str
) -> None:
    _kill_each_step(forks, tmp_path, mode, _seed_items, BATCH, _acknowledged_stay)


# -- reads trust the records collection -------------------------------------------------


@MODES
def test_a_dense_copy_left_current_never_brings_back_a_superseded_version(
    tmp_path: Path, mode: str
) -> None:
    """What a reader sees between a closure's two writes (or after a crash there, on a
    server until a setup repairs it): the dense copy of a superseded version current."""
    with _open(tmp_path / "q", mode) as store:
        old = store.remember(ME, "Lives in Lisbon", slot="home").record
        store.remember(ME, "Lives in Porto", slot="home")
        client = store.backend.storage.client
        names = [c.name for c in client.get_collections().collections if "_dense_" in c.name]
        only = models.Filter(must=[models.HasIdCondition(has_id=[pt.point_id(old.id)])])
        reopened = {"head": 1, "sb": None, "vt": None, "closes": pt.NEVER}
        client.set_payload(names[0], reopened, points=models.FilterSelector(filter=only))
        found = store.recall(ME, "Lives in Lisbon", k=5, context=None)
        assert [h.record.text for h in found] == ["Lives in Porto"]


@MODES
def test_setup_repairs_what_an_interrupted_write_of_an_older_engram_left(
    tmp_path: Path, mode: str
) -> None:
    """Closed before its successor was stored (engram wrote closures first), and a record
    whose dense copy never came: the next setup re-opens the one and marks the other
    not embedded, so the value is current again and ``re_embed`` gives it its vector."""
    with _open(tmp_path / "q", mode) as store:
        old = store.remember(ME, "Lives in Lisbon", slot="home").record
        new = store.remember(ME, "Lives in Porto", slot="home").record
        tea = store.remember(ME, "Drinks green tea", key="tea").record
        storage = store.backend.storage
        storage.delete(models.Filter(must=[pt.has_ids([new.id])]))
        for name in storage.dense_collections():
            storage.delete_ids(name, [tea.id])
    with _open(tmp_path / "q", mode) as store:
        assert [r.text for r in store.records(ME, limit=5)] == [
            "Drinks green tea",
            "Lives in Lisbon",
        ]
        assert [(r.id, r.superseded_by) for r in store.history(ME, old.key)] == [(old.id, None)]
        assert [r.id for r in store.backend.stale("engram-hash-256", 10)] == [tea.id]
        _after_repair(store)
        found = store.recall(ME, "Drinks green tea", k=1, context=None)
        assert found[0].record.id == tea.id and found[0].vector_rank == 1
