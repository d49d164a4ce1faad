"""Eight real processes doing the same read-modify-write at once: nothing acknowledged
is lost, a slot never ends with two current values, and a lost race is retried
instead of surfacing as an error."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from race_support import (
    NOTES,
    PROCESSES,
    RACE_ROLE,
    SLOT,
    TASKS,
    Outcome,
    finish_tasks,
    hold_writes,
    insert_notes,
    open_documents,
    put_one_key,
    race,
    remember_in_slot,
    task_line,
)

from engram import Memory, Principal
from engram.stores.cold import LongTermStore, View, backend_for
from engram.tools import MemoryTool

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

ALICE = Principal("acme", "alice")
WRITES = 50
EDITS = 100
HOLDS = 20


def _errors(outcomes: list[Outcome]) -> list[str]:
    return [e for o in outcomes for e in o.errors]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def cold_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A cold store with its schema set up once (concurrent first setup is no race here)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'memory.db'}"
    else:
        url = str(request.getfixturevalue("postgres_url"))
    store = LongTermStore(backend_for(url))
    store.setup()
    store.close()
    return url


def test_one_slot_keeps_one_current_value_under_eight_writers(cold_url: str) -> None:
    outcomes = race(remember_in_slot, cold_url, WRITES)
    store = LongTermStore(backend_for(cold_url))
    store.setup()
    try:
        live = store.records(ALICE, View(store.now()), limit=PROCESSES * WRITES)
        current = [r for r in live if r.value.get("slot") == SLOT]
        versions = store.history(ALICE, current[0].key) if current else []
    finally:
        store.close()
    errors = [e for o in outcomes for e in o.errors]
    said = Counter(a for o in outcomes for a in o.said)
    print(f"\n{len(current)} current, {len(versions)} versions, {len(errors)} errors, {said}")
    assert errors == []
    assert sum(o.ok for o in outcomes) == PROCESSES * WRITES
    assert len(current) == 1
    assert said["added"] == 1  # the first writer; every other one saw a value to supersede
    assert said["added"] + said["updated"] == len(versions)  # none acknowledged and lost


def test_puts_to_one_key_keep_one_current_version_under_eight_writers(cold_url: str) -> None:
    outcomes = race(put_one_key, cold_url, WRITES)
    store = LongTermStore(backend_for(cold_url))
    store.setup()
    try:
        live = store.records(ALICE, View(store.now()), limit=PROCESSES * WRITES)
        versions = store.history(ALICE, "profile")
    finally:
        store.close()
    print(f"\n{len(live)} current, {len(versions)} versions, {len(_errors(outcomes))} errors")
    assert _errors(outcomes) == []
    assert [r.key for r in live] == ["profile"]
    assert len(versions) == PROCESSES * WRITES
    assert len({v.text for v in versions}) == PROCESSES * WRITES


# -- documents: every read-modify-write path ------------------------------------------


@pytest.fixture(params=["files", pytest.param("postgres", marks=pytest.mark.postgres)])
def docs_at(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """Where the racing processes keep their documents (PostgreSQL: as the app role)."""
    if request.param == "files":
        return ("files", str(tmp_path / "home"))
    from engram.backends.postgres.documents import setup

    return ("postgres", setup(request.getfixturevalue("postgres_url"), RACE_ROLE))


@pytest.fixture(params=["files", pytest.param("postgres", marks=pytest.mark.postgres)])
def memory_at(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """Where the racing processes open the whole memory (embedded home or one URL)."""
    if request.param == "files":
        return ("files", str(tmp_path / "home"))
    return ("postgres", request.getfixturevalue("postgres_url"))


def test_eight_processes_inserting_into_one_file_lose_nothing(docs_at: tuple[str, str]) -> None:
    with open_documents(docs_at) as store:
        tool = MemoryTool(store, ALICE)
        tool.create(NOTES, "# Notes\n")
        outcomes = race(insert_notes, docs_at, EDITS)
        lines = store.read_text(ALICE, NOTES.removeprefix("/memories/")).splitlines()
    notes = {line for line in lines if line.startswith("note ")}
    print(f"\n{docs_at[0]}: {len(notes)} of {PROCESSES * EDITS} inserted lines kept")
    assert _errors(outcomes) == []
    assert sum(o.ok for o in outcomes) == PROCESSES * EDITS
    assert notes == {f"note {i}-{n}" for i in range(PROCESSES) for n in range(EDITS)}
    assert len(lines) == 1 + PROCESSES * EDITS and lines[0] == "# Notes"


def test_eight_processes_replacing_in_one_file_lose_nothing(docs_at: tuple[str, str]) -> None:
    todo = [task_line(i, n, "todo") for i in range(PROCESSES) for n in range(EDITS)]
    with open_documents(docs_at) as store:
        MemoryTool(store, ALICE).create(TASKS, "\n".join(todo) + "\n")
        outcomes = race(finish_tasks, docs_at, EDITS)
        lines = store.read_text(ALICE, TASKS.removeprefix("/memories/")).splitlines()
    done = [line for line in lines if line.endswith(": done")]
    print(f"\n{docs_at[0]}: {len(done)} of {len(todo)} replacements kept")
    assert _errors(outcomes) == []
    assert sum(o.ok for o in outcomes) == len(todo)
    assert lines == [line.replace(": todo", ": done") for line in todo]


def _open_memory(at: tuple[str, str]) -> Memory:
    kind, location = at
    if kind == "files":
        return Memory.open(location)
    return Memory.open(url=location, app_role=RACE_ROLE)


def test_eight_processes_holding_writes_queue_every_one(memory_at: tuple[str, str]) -> None:
    with _open_memory(memory_at):  # the schemas, set up once (concurrent setup is no race here)
        pass
    outcomes = race(hold_writes, memory_at, HOLDS)
    with _open_memory(memory_at) as memory:
        queued = memory.held_for_review(ALICE)
        facts = memory.facts(ALICE)
    said = Counter(a for o in outcomes for a in o.said)
    print(f"\n{memory_at[0]}: {said['held']} held, {len(queued)} queued for review")
    assert _errors(outcomes) == []
    assert said == {"held": PROCESSES * HOLDS} and facts == []
    assert len(queued) == len(set(queued)) == PROCESSES * HOLDS
    wanted = [f"account {i}-{n}" for i in range(PROCESSES) for n in range(HOLDS)]
    assert all(sum(w + " " in q or q.endswith(w) for q in queued) == 1 for w in wanted)
