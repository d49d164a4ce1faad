"""Qdrant cold backend: what only Qdrant shows (its filters, its folder, its locks, many
tenants, erased bytes). The shared behaviour runs in ``tests/cold`` (local mode there)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qdrant_client import QdrantClient, models

from engram import Principal
from engram.backends.qdrant import FolderInUseError
from engram.backends.qdrant import _points as pt
from engram.backends.qdrant._client import Handle, Leases, Location, parse
from engram.backends.qdrant.cold import QdrantColdBackend
from engram.errors import ConfigError, ConflictError
from engram.recall import HashEmbedder
from engram.recall.filters import matches, parse_filter
from engram.stores.cold import MemoryRecord, Provenance, Scan, View, backend_for, open_store

SRC = Path(__file__).resolve().parents[2] / "src"
ME = Principal("t", "me")
OTHER = Principal("t", "other")


def _url(folder: Path, mode: str = "local") -> str:
    return f"qdrant+{mode}:///{folder}"


EMBEDDED = pytest.mark.parametrize("mode", ["local", "edge"])


# -- URLs --------------------------------------------------------------------------------


def test_url_forms_name_a_folder_or_a_server() -> None:
    assert parse("qdrant+local:///rel/q") == Location(path=Path("rel/q"))
    assert parse("qdrant+local:////abs/q?collection=mine") == Location("mine", path=Path("/abs/q"))
    assert parse("qdrant://db.internal").url == "http://db.internal:6333"
    assert parse("qdrant+https://db:7000?collection=c") == Location("c", url="https://db:7000")
    backend = backend_for("qdrant://localhost:6999")
    assert isinstance(backend, QdrantColdBackend) and backend.folder is None


@pytest.mark.parametrize(
    "url",
    [
        "qdrant+local://",
        "qdrant+local:///",
        "qdrant://",
        "qdrant+ftp://host",
        "qdrant+local:///q?collection=a/b",
        "qdrant+local:///q?collection=",
    ],
)
def test_bad_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError):
        backend_for(url)


# -- records and filters (pure) ----------------------------------------------------------


def test_a_record_survives_its_payload() -> None:
    at = datetime(2026, 3, 1, 9, 30, 0, 123456, tzinfo=UTC)
    record = MemoryRecord(
        id="v1",
        namespace=("t", "ü", "a.b"),
        key="k",
        value={"text": "Fährt nach 東京", "n": 1, "f": 1.0, "deep": {"x": [1, None]}},
        text="Fährt nach 東京",
        recorded_at=at,
        created_at=at - timedelta(days=3),
        valid_from=at - timedelta(days=1),
        tags=("profile", "ß"),
        source="tool",
        sensitivity="high",
        importance=0.75,
        valid_to=at + timedelta(days=1),
        expires_at=at + timedelta(days=2),
        ttl_seconds=3600.0,
        provenance=Provenance("thread", "cp", ("m1", "m2")),
        superseded_by="v2",
        embedding_model="engram-hash-64",
    )
    back = pt.record(pt.payload(record, embedded=True))
    assert back == record
    assert type(back.value["n"]) is int and type(back.value["f"]) is float


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.5, -1.5, 2.0]),
    st.sampled_from(["", "a", "B", "b", "1", "é", "aa", "a\"'[]"]),
)
_labels = ["x", "y", "m", "ü v", "q'[$"]  # (a filter field holds no double quote)
_fields = st.sampled_from(["x", "y", "m.x", "ü v", "m.q'[$"])
_values = st.dictionaries(
    st.sampled_from(_labels),
    st.one_of(
        _scalars,
        st.lists(_scalars, max_size=2),
        st.dictionaries(st.sampled_from(_labels), _scalars),
    ),
    max_size=3,
)
_ordered = st.one_of(
    st.integers(-3, 3), st.sampled_from([0.5, -1.5]), st.sampled_from(["a", "b", "é"])
)
_operators = st.one_of(
    st.tuples(st.sampled_from(["$eq", "$ne"]), _scalars),
    st.tuples(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), _ordered),
    st.tuples(st.just("$in"), st.lists(_scalars, min_size=1, max_size=3)),
)
_filters = st.dictionaries(
    _fields, st.lists(_operators, min_size=1, max_size=2).map(dict), max_size=2
)


@pytest.fixture(scope="module")
def scratch() -> QdrantClient:
    client = QdrantClient(":memory:")
    client.create_collection("f", vectors_config={})
    return client


@settings(max_examples=400, deadline=None)
@given(filter_=_filters, value=_values)
def test_qdrant_filters_agree_with_python(
    scratch: QdrantClient, filter_: dict[str, Any], value: dict[str, Any]
) -> None:
    conditions = parse_filter(filter_)
    pushed, left = pt.split_conditions(conditions)
    scratch.upsert("f", [models.PointStruct(id=1, vector={}, payload=pt.value_fields(value))])
    found = scratch.count("f", count_filter=models.Filter(must=pushed), exact=True).count
    assert left == tuple(c for c in conditions if isinstance(c.operand, str) and c.op[1] in "gl")
    assert (found == 1 and matches(left, value)) == matches(conditions, value), (filter_, value)


def test_keyword_weights_saturate_and_every_query_term_counts_once() -> None:
    once, thrice = pt.document_vector("tea"), pt.document_vector("tea tea tea")
    assert once is not None and thrice is not None
    assert once.values[0] < thrice.values[0] < (pt.K1 + 1)
    query = pt.query_vector("tea and the tea, 绿茶")
    assert query is not None and query.values == [1.0] * len(query.indices)
    assert len(query.indices) == len(set(query.indices)) == 4  # "tea", "绿茶", their stems
    stemmed = pt.query_vector("teas")
    assert stemmed is not None and pt.term_index(pt.STEM + "tea") in stemmed.indices
    assert once.indices == sorted({pt.term_index("tea"), pt.term_index(pt.STEM + "tea")})
    assert pt.document_vector("") is None and pt.query_vector("  ") is None


# -- the local folder --------------------------------------------------------------------


def _seed(store: Any, marker: str) -> None:
    store.remember(ME, f"my codename is {marker}", slot="codename", tags=[f"tag{marker}"])
    store.remember(ME, f"my codename is {marker} version two", slot="codename")
    store.put(("t", "me", "notes"), "n1", {"text": f"note with {marker}", "extra": marker})
    store.remember(OTHER, "unrelated fact about sailing")
    assert store.recall(ME, marker)


def _folder_holds(folder: Path, marker: str) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()]


def _words_only(text: str) -> models.SparseVector:
    """A sparse vector as engram wrote it before stems: the words as written alone."""
    from engram.recall import index_words

    indices = sorted({pt.term_index(w) for w in index_words(text)})
    return models.SparseVector(indices=indices, values=[1.0] * len(indices))


@EMBEDDED
def test_points_written_before_stems_are_written_again_at_setup(tmp_path: Path, mode: str) -> None:
    """A store an older engram wrote (sparse vectors of the words alone, no format mark)
    is rewritten at its next setup: inflected words find its memories, in each user's
    own namespace only, and every record reads as it did."""
    url = _url(tmp_path / "q", mode)

    def keys(store: Any, query: str, who: Principal = ME) -> list[str]:
        return [r.record.key for r in store.recall(who, query, context=None)]

    with open_store(url, embedder=None) as store:
        store.remember(ME, "We went camping by the lake last summer", key="camp")
        store.remember(OTHER, "The libraries open at nine on weekdays", key="lib")
        storage = store.backend.storage
        points, _ = storage.client.scroll(
            storage.collection, scroll_filter=None, limit=100, offset=None, with_payload=True
        )
        assert len(points) == 2 and all(p.payload[pt.KEYWORD_FORMAT_FIELD] == 2 for p in points)
        old = [
            models.PointStruct(
                id=p.id,
                vector={pt.KEYWORDS: _words_only(json.loads(p.payload["rec"])["text"])},
                payload={k: v for k, v in p.payload.items() if k != pt.KEYWORD_FORMAT_FIELD},
            )
            for p in points
        ]
        storage.client.upsert(storage.collection, old)
        assert keys(store, "camped") == [] and keys(store, "camping") == ["camp"]  # as before
        records = {r.key: r for who in (ME, OTHER) for r in store.records(who)}
    with open_store(url, embedder=None) as store:
        assert keys(store, "camped") == ["camp"]
        assert keys(store, "library", OTHER) == ["lib"]
        assert keys(store, "library") == []
        assert {r.key: r for who in (ME, OTHER) for r in store.records(who)} == records
        storage = store.backend.storage
        points, _ = storage.client.scroll(
            storage.collection, scroll_filter=None, limit=100, offset=None, with_payload=True
        )
        assert sorted(p.payload[pt.KEYWORD_FORMAT_FIELD] for p in points) == [2, 2]


@EMBEDDED
def test_no_byte_of_erased_content_remains_in_the_folder(tmp_path: Path, mode: str) -> None:
    marker = f"zq{uuid.uuid4().hex[:10]}k"
    folder = tmp_path / "q"
    with open_store(_url(folder, mode), embedder=HashEmbedder(64)) as store:
        _seed(store, marker)
        assert _folder_holds(folder, marker)  # the scan can see it
        report = store.forget(ME)
        assert report.compacted and (report.keys, report.versions) == (2, 3)
        assert _folder_holds(folder, marker) == []
        assert store.recall(OTHER, "sailing")  # the reopened client still serves
        store.remember(ME, "a new fact after erasure")
    assert _folder_holds(folder, marker) == []


def test_stores_of_one_folder_in_one_process_share_one_client(tmp_path: Path) -> None:
    url = _url(tmp_path / "q")
    with open_store(url, embedder=HashEmbedder(64)) as a:
        with open_store(url, embedder=HashEmbedder(64)) as b:
            a.remember(ME, "Lives in Lisbon", slot="home")
            assert [r.record.text for r in b.recall(ME, "Lisbon")] == ["Lives in Lisbon"]
        assert a.recall(ME, "Lisbon")  # b's close left a's client open
    with open_store(url, embedder=HashEmbedder(64)) as again:
        assert again.recall(ME, "Lisbon")  # persisted


_OPEN_IN_CHILD = """
import sys
from engram.backends.qdrant import FolderInUseError
from engram.stores.cold import open_store
try:
    with open_store(sys.argv[1]) as store:
        print("opened", len(store.records(("t", "me"))))
except FolderInUseError as exc:
    print("in use:", exc)
"""


def _child(url: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", _OPEN_IN_CHILD, url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


@EMBEDDED
def test_a_second_process_gets_a_typed_error_until_the_first_closes(
    tmp_path: Path, mode: str
) -> None:
    url = _url(tmp_path / "q", mode)
    with open_store(url, embedder=HashEmbedder(64)) as store:
        store.remember(ME, "Lives in Lisbon")
        said = _child(url)
        assert said.startswith("in use:") and "another process" in said, said
    assert _child(url) == "opened 1"
    assert issubclass(FolderInUseError, ConflictError)


# -- many tenants ------------------------------------------------------------------------

TENANTS = 60
PER_TENANT = 25
K = 20


def test_a_filtered_search_among_many_tenants_still_returns_k(tmp_path: Path) -> None:
    rng = random.Random(7)
    vocab = [a + b + c for a in "bdgkmprst" for b in "aeiou" for c in "lnrs"]
    items = [
        ((f"tenant{t:02d}", "user"), f"k{i}", {"text": " ".join(rng.choices(vocab, k=8))})
        for t in range(TENANTS)
        for i in range(PER_TENANT)
    ]
    items += [
        (("acme", f"u{i % 50}"), f"k{i}", {"text": "common " + vocab[i % 9]}) for i in range(800)
    ]
    embedder = HashEmbedder(64)
    with open_store(_url(tmp_path / "q"), embedder=embedder) as store:
        store.put_many(items)
        backend = store.backend
        query = embedder.embed(["common words"])[0]
        for tenant in ("tenant03", "tenant41", "acme"):
            scan = Scan((tenant,), View(store.now()))
            near = backend.vector_candidates(scan, query, embedder.model_id, K)
            assert len(near) == K
            assert {r.namespace[0] for r in backend.fetch([i for i, _ in near])} == {tenant}
        word = items[3 * PER_TENANT][2]["text"].split()[0]  # tenant03's first text
        scan = Scan(("tenant03",), View(store.now()), parse_filter({"text": {"$ne": "x"}}))
        hits = backend.keyword_candidates(scan, word + " common", K)
        assert hits and {r.namespace[0] for r in backend.fetch(hits)} == {"tenant03"}
        common = backend.keyword_candidates(Scan(("acme",), View(store.now())), "common", K)
        assert len(common) == K


def test_a_string_ordering_filter_still_returns_k(tmp_path: Path) -> None:
    embedder = HashEmbedder(64)
    items = [
        (("t", "u"), f"k{i:03d}", {"text": f"fact {i}", "code": f"c{i:03d}"}) for i in range(300)
    ]
    with open_store(_url(tmp_path / "q"), embedder=embedder) as store:
        store.put_many(items)
        scan = Scan(("t",), View(store.now()), parse_filter({"code": {"$gte": "c250"}}))
        near = store.backend.vector_candidates(
            scan, embedder.embed(["fact"])[0], embedder.model_id, K
        )
        assert len(near) == K
        codes = {r.value["code"] for r in store.backend.fetch([i for i, _ in near])}
        assert min(codes) >= "c250"
        empty = Scan(("t",), View(store.now()), parse_filter({"code": {"$gt": "d"}}))
        assert store.backend.keyword_candidates(empty, "fact", K) == []


# -- server-side namespace locks (exercised on local mode: the same client API) -----------


def test_leases_exclude_each_other_and_take_over_a_dead_holder(tmp_path: Path) -> None:
    handle = Handle(QdrantClient(":memory:"))
    first, second = Leases(handle, "locks"), Leases(handle, "locks")
    first.setup()
    inside: list[int] = []
    overlaps: list[int] = []

    def work(leases: Leases) -> None:
        for _ in range(10):
            with leases.hold("t\x1fme"), leases.hold("t\x1fme"):  # reentrant
                inside.append(1)
                if len(inside) > 1:
                    overlaps.append(1)
                time.sleep(0.001)
                inside.pop()

    threads = [threading.Thread(target=work, args=(lz,)) for lz in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert overlaps == []
    dead = models.PointStruct(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, "t\x1fme")),
        vector={},
        payload={"owner": "dead", "until": time.time() - 1},
    )
    handle.client.upsert("locks", [dead])
    with Leases(handle, "locks", timeout=5).hold("t\x1fme"):
        pass  # taken over, not timed out


def test_vectors_of_a_folder_reopened_are_the_ones_written(tmp_path: Path) -> None:
    embedder = HashEmbedder(64)
    url = _url(tmp_path / "q")
    with open_store(url, embedder=embedder) as store:
        store.remember(ME, "Lives in Lisbon")
        scan = Scan(ME.namespace, View(store.now()))
        before = store.backend.vector_candidates(
            scan, embedder.embed(["Lisbon"])[0], embedder.model_id, 5
        )
    with open_store(url, embedder=embedder) as store:
        after = store.backend.vector_candidates(
            scan, embedder.embed(["Lisbon"])[0], embedder.model_id, 5
        )
    assert before == after and np.isclose(before[0][1], after[0][1])
