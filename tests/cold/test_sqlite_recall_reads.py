"""What the SQLite engine reads for a recall: the vector search's tie-break among equal
scores (the smallest ids, as a brute-force search orders them), and the re-ranked
recall reading whole records for its results only."""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from engram import Principal
from engram.backends.sqlite import _cold_sql as sql
from engram.backends.sqlite import cold
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore, Options, Scan, View, open_store

DIM = 8


class Directions:
    """An embedder that maps the first word of a text to one of a few fixed unit vectors,
    so many memories score exactly alike."""

    model_id = "test-directions"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), DIM), np.float32)
        for row, text in enumerate(texts):
            word = text.split()[0]
            out[row, 0] = 1.0 if word == "exact" else 0.6 if word == "tied" else 0.1
            out[row, 1] = 0.0 if word == "exact" else 0.8 if word == "tied" else 0.99
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _brute_force(store: LongTermStore, prefix: tuple[str, ...], query: str, k: int) -> list[str]:
    records = store.records(prefix, limit=10_000)
    qvec = store.embedder.embed([query])[0]  # type: ignore[union-attr]
    vectors = store.embedder.embed([r.text for r in records])  # type: ignore[union-attr]
    sims = (vectors.astype(np.float64) @ qvec.astype(np.float64)).round(5)
    order = sorted(range(len(records)), key=lambda i: (-sims[i], records[i].id))
    return [records[i].id for i in order[:k]]


@pytest.fixture
def tied(tmp_path: Path) -> Iterator[LongTermStore]:
    with open_store(f"sqlite:///{tmp_path}/m.db", embedder=Directions()) as store:
        items = []
        for n in range(60):
            user = f"u{n % 3}"
            word = "exact" if n % 20 == 0 else "tied" if n % 4 else "far"
            items.append((("acme", user), f"k{n}", {"text": f"{word} memory {n}"}))
        store.put_many(items)
        yield store


@pytest.mark.parametrize("prefix", [("acme",), ("acme", "u1")])
@pytest.mark.parametrize("k", [1, 4, 7, 30])
def test_equal_scores_rank_by_id_as_brute_force(
    tied: LongTermStore, prefix: tuple[str, ...], k: int
) -> None:
    backend, embedder = tied.backend, tied.embedder
    assert embedder is not None
    scan = Scan(prefix, View(tied.now()))
    qvec = embedder.embed(["exact question"])[0]
    found = backend.vector_candidates(scan, qvec, embedder.model_id, k)
    assert [i for i, _ in found] == _brute_force(tied, prefix, "exact question", k)
    sims = [s for _, s in found]
    assert sims == sorted(sims, reverse=True)


def test_a_tie_wider_than_k_keeps_the_smallest_ids(tied: LongTermStore) -> None:
    embedder = tied.embedder
    assert embedder is not None
    scan = Scan(("acme",), View(tied.now()))
    found = tied.backend.vector_candidates(
        scan, embedder.embed(["tied q"])[0], "test-directions", 5
    )
    tied_ids = sorted(r.id for r in tied.records(("acme",), limit=100) if r.text.startswith("tied"))
    assert len(tied_ids) > 5
    assert [i for i, _ in found] == tied_ids[:5]


@pytest.mark.parametrize("share", [1, 3, 20])
@pytest.mark.parametrize("limit", [1, 5, 40])
def test_both_tie_break_reads_agree_on_the_smallest_ids(share: int, limit: int) -> None:
    """The tie-break walks the id index when the tied rows are most of the table and
    reads every tied row otherwise: both give the ``limit`` smallest ids, in id order."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE {sql.TABLE} (rowid INTEGER PRIMARY KEY, id TEXT UNIQUE, ns TEXT)")
    rng = random.Random(share * 100 + limit)
    rows = [(n, f"{rng.getrandbits(64):016x}", f"t/u{n % 3}") for n in range(1, 201)]
    conn.executemany(f"INSERT INTO {sql.TABLE} VALUES (?, ?, ?)", rows)
    slots = np.array(sorted(rng.sample(range(1, 201), 200 // share)), np.int64)
    expected = sorted((r for r in rows if r[0] in set(slots.tolist())), key=lambda r: r[1])
    walked = cold._least_ids(conn, slots, limit, high=200)
    read = cold._least_ids(conn, slots, limit, high=10**9)  # the walk looks too long
    assert [tuple(r) for r in walked] == [tuple(r) for r in read] == expected[:limit]


def test_re_ranked_recall_reads_whole_records_for_its_results_only(tmp_path: Path) -> None:
    user = Principal("acme", "bea")
    ticks = itertools.count()
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def clock() -> datetime:
        return start + timedelta(milliseconds=next(ticks))

    with open_store(f"sqlite:///{tmp_path}/m.db", embedder=HashEmbedder(), clock=clock) as store:
        for n in range(25):
            speaker = "Bea" if n % 2 else "Cal"
            store.remember(user, f"{speaker}: lake trip number {n}", key=f"k{n}",
                           value={"speaker": speaker})  # fmt: skip
        fetched: list[list[str]] = []
        fetch = store.backend.fetch

        def counting(ids: Sequence[str]) -> list[object]:
            fetched.append(list(ids))
            return fetch(ids)  # type: ignore[return-value]

        store.backend.fetch = counting  # type: ignore[method-assign,assignment]
        found = store.recall(user, "Where did Bea go on the lake trip?", k=3)
    assert len(found) == 3
    assert fetched == [[hit.record.id for hit in found]]


def test_the_topic_is_one_read_of_cosines_and_reads_no_rows(tmp_path: Path) -> None:
    """A query naming a speaker is scored again without the name (its topic) for its
    cosines alone: one read of the pool's cosines, no search, no signals or excerpts
    (excerpts not kept between recalls, so that each recall reads its own)."""
    user = Principal("acme", "bea")
    url = f"sqlite:///{tmp_path}/m.db"
    with open_store(url, embedder=HashEmbedder(), options=Options(excerpt_cache=0)) as store:
        for n in range(40):
            speaker = "Bea" if n % 2 else "Cal"
            topic = "lake trip" if n % 4 < 2 else "garden party"
            store.remember(user, f"{speaker}: {topic} number {n}", key=f"k{n}",
                           value={"speaker": speaker})  # fmt: skip
        backend = store.backend
        calls: list[str] = []

        def counting(name: str) -> Any:
            read = getattr(backend, name)

            def counted(*args: Any) -> Any:
                calls.append(name)
                return read(*args)

            return counted

        for name in ("signals", "excerpts", "keyword_candidates", "vector_candidates", "cosines"):
            setattr(backend, name, counting(name))
        assert store.recall(user, "Where did Bea go on the lake trip?", k=3)
        assert sorted(calls) == ["cosines", "excerpts", "keyword_candidates",
                                 "vector_candidates"]  # fmt: skip
        calls.clear()
        assert store.recall(user, "Where did someone go on the lake trip?", k=3)
    assert sorted(calls) == ["excerpts", "keyword_candidates", "vector_candidates"]


def test_excerpts_carry_the_values_whole_records_do(tmp_path: Path) -> None:
    """The pool's excerpts parse values as whole records do, integers beyond 64 bits
    included (which the fast parser refuses; an older engram stored them: no longer,
    ``_validate.storable``, nor NaN, which the parser refused too)."""
    odd = {"big": 2**53, "deep": {"s": "é ✓", "f": 0.1, "n": [1, None]}}
    with open_store(f"sqlite:///{tmp_path}/m.db", embedder=HashEmbedder()) as store:
        store.put_many([(("acme", "u"), "odd", {"text": "odd value", **odd}),
                        (("acme", "u"), "plain", {"text": "plain value", "n": 3})])  # fmt: skip
        with store.backend.conn:  # (as an older engram wrote it)
            store.backend.conn.execute(
                f"UPDATE cold_memories SET value = replace(value, '{2**53}', '{2**70}')"
            )
        records = store.records(("acme",), limit=10)
        excerpts = store.backend.excerpts([r.id for r in records])
    assert len(excerpts) == 2
    for record in records:
        value = excerpts[record.id].value
        assert json.dumps(_plain(value), sort_keys=True) == json.dumps(
            _plain(record.value), sort_keys=True
        )
    got = next(excerpts[r.id].value for r in records if r.key == "odd")
    assert got["big"] == 2**70 and got["deep"]["s"] == "é ✓"


def _plain(value: object) -> object:
    """``value`` with mappings as dicts and sequences as lists (records freeze theirs)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def test_excerpts_read_by_the_last_searchs_rowids_are_the_rows_of_their_ids(
    tmp_path: Path,
) -> None:
    """The excerpts of a vector search's winners are read by their rowids; a row erased
    since, and a rowid taken again by a newer row, give no excerpt of another id."""
    who = Principal("t", "u")
    with open_store(f"sqlite:///{tmp_path}/m.db", embedder=HashEmbedder()) as store:
        for n in range(30):
            store.put(who.namespace, f"k{n}", {"text": f"note {n} about the red kettle"})
        backend = store.backend
        assert isinstance(backend, cold.SQLiteColdBackend)
        scan = Scan(who.namespace, View(store.now()))
        query = store.embedder.embed(["red kettle"])[0]  # type: ignore[union-attr]
        ids = [i for i, _ in backend.vector_candidates(scan, query, store.embedder.model_id, 30)]  # type: ignore[union-attr]
        expected = {i: store.backend.fetch([i])[0].text for i in ids}
        assert {i: e.text for i, e in backend.excerpts(ids).items()} == expected
        last = max(ids, key=lambda i: backend._winners[i])  # the highest rowid
        store.forget(who, [store.backend.fetch([last])[0].key])
        store.put(who.namespace, "new", {"text": "a newer note in the reused rowid"})
        got = backend.excerpts(ids)
        assert last not in got
        assert {i: e.text for i, e in got.items()} == {
            i: t for i, t in expected.items() if i != last
        }
        newest = next(r for r in store.records(who.namespace) if r.key == "new")
        rowid = backend._read(f"SELECT rowid FROM {sql.TABLE} WHERE id = ?", (newest.id,))
        assert rowid[0][0] == backend._winners[last]  # (the erased row's rowid, taken again)
        assert backend.excerpts([*ids, newest.id])[newest.id].text.startswith("a newer")
