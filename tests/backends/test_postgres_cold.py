"""PostgreSQL cold backend: what only a real PostgreSQL shows (query plans, many tenants,
raw pages after erasure, binary vectors). The shared behaviour is in ``tests/cold``."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from engram import Principal
from engram.backends.postgres import _cold_sql as q
from engram.backends.postgres.cold import (
    EXACT_BELOW,
    BufferFit,
    PostgresColdBackend,
    _SelectionSizes,
    require_pgvector,
)
from engram.errors import ConfigError, InvalidInputError
from engram.recall import HashEmbedder, search_terms
from engram.recall.filters import parse_filter
from engram.stores.cold import LongTermStore, Scan, View, open_store
from engram.stores.cold.records import join_namespace

pytestmark = pytest.mark.postgres

EMBEDDER = HashEmbedder(384)
SMALL_TENANTS = 49
PER_SMALL_TENANT = 30
BIG_TENANT_ITEMS = 2500
K = 20


def _vocabulary(rng: random.Random) -> list[str]:
    syllables = [a + b for a in "bdfgklmnprstvz" for b in "aeiou"]
    return sorted({"".join(rng.choices(syllables, k=3)) for _ in range(800)})[:600]


def _items(
    rng: random.Random, vocab: list[str]
) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    items = []
    for t in range(SMALL_TENANTS):
        for i in range(PER_SMALL_TENANT):
            text = " ".join(rng.choices(vocab, k=10))
            items.append(((f"tenant{t:02d}", "user"), f"k{i}", {"text": text, "i": i}))
    for i in range(BIG_TENANT_ITEMS):
        text = " ".join(rng.choices(vocab, k=10))
        items.append((("acme", f"user{i % 100}"), f"k{i}", {"text": text, "i": i}))
    return items


@pytest.fixture(scope="module")
def loaded(postgres_server_url: str) -> Iterator[tuple[str, list[str], dict[str, str]]]:
    """A database with 50 tenants (49 x 30 items, one with 2,500): URL, vocabulary, texts by key."""
    name = "engram_cold_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(postgres_server_url)
    url = urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    rng = random.Random(5)
    vocab = _vocabulary(rng)
    items = _items(rng, vocab)
    with open_store(url, embedder=EMBEDDER) as store:
        for start in range(0, len(items), 500):
            store.put_many(items[start : start + 500])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        texts = {str(r[0]): str(r[1]) for r in conn.execute(f"SELECT id, text FROM {q.TABLE}")}
    yield url, vocab, texts
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _backend(url: str, **options: Any) -> Iterator[PostgresColdBackend]:
    backend = PostgresColdBackend(url, **options)
    backend.setup()
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture
def backend(loaded: tuple[str, list[str], dict[str, str]]) -> Iterator[PostgresColdBackend]:
    yield from _backend(loaded[0])


def _scan(prefix: tuple[str, ...], filter_: dict[str, Any] | None = None) -> Scan:
    return Scan(prefix, View(datetime.now(UTC)), parse_filter(filter_))


def _exact_sims(texts: dict[str, str], ids: list[str], query: str) -> list[float]:
    """Brute-force cosine similarities (numpy), best first, of the given versions."""
    matrix = EMBEDDER.embed([texts[i] for i in ids])
    sims = matrix @ EMBEDDER.embed([query])[0]
    return sorted((float(s) for s in sims), reverse=True)


def _ids_in(url: str, tenant: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT id FROM {q.TABLE} WHERE tenant = %s", (tenant,)).fetchall()
    return [str(r[0]) for r in rows]


def _index_names(plan: dict[str, Any]) -> set[str]:
    names = {str(plan["Index Name"])} if "Index Name" in plan else set()
    for child in plan.get("Plans", ()):
        names |= _index_names(child)
    return names


def test_large_search_uses_the_hnsw_index(
    loaded: tuple[str, list[str], dict[str, str]], backend: PostgresColdBackend
) -> None:
    url, vocab, texts = loaded
    query = " ".join(vocab[100:103])
    vector = EMBEDDER.embed([query])[0]
    plan = backend.explain_vector_search(_scan(("acme",)), vector, EMBEDDER.model_id, 50)
    assert q.hnsw_index_name(384) in _index_names(plan), json.dumps(plan)[:2000]
    # Now known not to be small: the index scan alone, no size check, no exact branch.
    plan = backend.explain_vector_search(_scan(("acme",)), vector, EMBEDDER.model_id, 50)
    assert q.hnsw_index_name(384) in _index_names(plan) and "CTE" not in json.dumps(plan)
    assert f"{q.TABLE}_head" not in _index_names(plan)
    found = backend.vector_candidates(_scan(("acme",)), vector, EMBEDDER.model_id, 50)
    exact = _exact_sims(texts, _ids_in(url, "acme"), query)[:50]
    assert len(found) == 50
    near_enough = sum(1 for _, sim in found if sim >= exact[-1] - 1e-6)
    assert near_enough >= 45, (near_enough, [s for _, s in found][:10], exact[:10])


def test_small_selection_is_searched_exactly(
    loaded: tuple[str, list[str], dict[str, str]], backend: PostgresColdBackend
) -> None:
    url, vocab, texts = loaded
    query = " ".join(vocab[200:203])
    vector = EMBEDDER.embed([query])[0]
    first = backend.explain_vector_search(_scan(("tenant07",)), vector, EMBEDDER.model_id, K)
    plan = backend.explain_vector_search(_scan(("tenant07",)), vector, EMBEDDER.model_id, K)
    # Size unknown: the gated statement, with its size check; known small: the exact one alone.
    assert "CTE Scan" in json.dumps(first) and f"{q.TABLE}_head" in _index_names(first)
    assert "CTE" not in json.dumps(plan) and "InitPlan" not in json.dumps(plan)
    assert q.hnsw_index_name(384) not in _index_names(first) | _index_names(plan)
    found = backend.vector_candidates(_scan(("tenant07",)), vector, EMBEDDER.model_id, K)
    exact = _exact_sims(texts, _ids_in(url, "tenant07"), query)[:K]
    assert [s for _, s in found] == pytest.approx(exact, abs=1e-5)


def test_a_users_selection_is_sized_by_an_index_only_scan_and_searched_exactly(
    loaded: tuple[str, list[str], dict[str, str]], backend: PostgresColdBackend
) -> None:
    url, vocab, texts = loaded
    gate, params = q.small_sql(("acme", "user3"), EXACT_BELOW)
    with psycopg.connect(url) as conn:
        plan = conn.execute("EXPLAIN (FORMAT JSON) SELECT " + gate, params).fetchone()
        assert conn.execute("SELECT " + gate, params).fetchone() == (True,)
        rows = conn.execute(
            f"SELECT id FROM {q.TABLE} WHERE ns = %s", (join_namespace(("acme", "user3")),)
        )
        ids = [str(r[0]) for r in rows]
    assert plan is not None
    assert "Index Only Scan" in json.dumps(plan) and "Heap" not in json.dumps(plan), plan
    query = " ".join(vocab[210:213])
    vector = EMBEDDER.embed([query])[0]
    found = backend.vector_candidates(_scan(("acme", "user3")), vector, EMBEDDER.model_id, K)
    assert len(ids) == 25 and [s for _, s in found] == pytest.approx(
        _exact_sims(texts, ids, query)[:K], abs=1e-5
    )


@pytest.mark.parametrize("exact_below", [EXACT_BELOW, 0], ids=["default", "hnsw-only"])
def test_filtered_search_returns_k_rows_among_50_tenants(
    loaded: tuple[str, list[str], dict[str, str]], exact_below: int
) -> None:
    url, vocab, _ = loaded
    vector = EMBEDDER.embed([" ".join(vocab[300:303])])[0]
    for backend in _backend(url, exact_below=exact_below):
        for tenant in ("tenant00", "tenant23", "tenant48"):
            found = backend.vector_candidates(_scan((tenant,)), vector, EMBEDDER.model_id, K)
            assert len(found) == K, tenant
            records = backend.fetch([i for i, _ in found])
            assert {r.namespace[0] for r in records} == {tenant}
        narrow = _scan(("tenant11",), {"i": {"$lt": 25}})
        found = backend.vector_candidates(narrow, vector, EMBEDDER.model_id, K)
        assert len(found) == K
        assert all(r.value["i"] < 25 for r in backend.fetch([i for i, _ in found]))


def _texts(
    prefix: str, n: int, start: int = 0
) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    rng = random.Random(start)
    vocab = _vocabulary(rng)
    return [
        (("t", prefix), f"k{i}", {"text": " ".join(rng.choices(vocab, k=8))})
        for i in range(start, start + n)
    ]


def _exact_top(url: str, ns: tuple[str, ...], query: str, k: int) -> list[float]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            f"SELECT id, text FROM {q.TABLE} WHERE ns = %s", (join_namespace(ns),)
        ).fetchall()
    return _exact_sims({str(i): str(t) for i, t in rows}, [str(r[0]) for r in rows], query)[:k]


def test_a_stale_size_costs_speed_never_rows(postgres_url: str) -> None:
    """Another process grows a selection this backend knows as small, and shrinks one
    it knows as large: both searches still return the exact answer."""
    here = LongTermStore(PostgresColdBackend(postgres_url, exact_below=40), embedder=EMBEDDER)
    there = LongTermStore(PostgresColdBackend(postgres_url, exact_below=40), embedder=EMBEDDER)
    here.setup()
    there.setup()
    try:
        here.put_many(_texts("grows", 30) + _texts("shrinks", 60))
        query = "bakadi fomeru"
        vector = EMBEDDER.embed([query])[0]
        backend = here.backend
        assert isinstance(backend, PostgresColdBackend)
        for name in ("grows", "shrinks"):
            backend.vector_candidates(_scan(("t", name)), vector, EMBEDDER.model_id, 10)
        assert backend._sizes.get(("t", "grows")) is True
        assert backend._sizes.get(("t", "shrinks")) is False
        there.put_many(_texts("grows", 60, start=30))
        there.forget(("t", "shrinks"), [f"k{i}" for i in range(55)], compact=False)
        grown = backend.vector_candidates(_scan(("t", "grows")), vector, EMBEDDER.model_id, 50)
        assert [s for _, s in grown] == pytest.approx(
            _exact_top(postgres_url, ("t", "grows"), query, 50), abs=1e-5
        )
        shrunk = backend.vector_candidates(_scan(("t", "shrinks")), vector, EMBEDDER.model_id, 20)
        assert len(shrunk) == 5 and [s for _, s in shrunk] == pytest.approx(
            _exact_top(postgres_url, ("t", "shrinks"), query, 20), abs=1e-5
        )
        assert backend._sizes.get(("t", "grows")) is True  # the memo was used, not renewed
        here.forget(("t", "grows"), compact=False)
        assert backend._sizes.get(("t", "shrinks")) is None  # erasure drops it
    finally:
        here.close()
        there.close()


def test_selection_sizes_expire() -> None:
    fresh, expired = _SelectionSizes(), _SelectionSizes(ttl=-1.0)
    for sizes in (fresh, expired):
        sizes.put(("acme", "u1"), True)
    assert fresh.get(("acme", "u1")) is True and fresh.get(("acme",)) is None
    assert expired.get(("acme", "u1")) is None
    assert fresh.clear() == 1 and fresh.clear() == 0 and fresh.get(("acme", "u1")) is None


def test_without_iterative_scan_hnsw_loses_rows(
    loaded: tuple[str, list[str], dict[str, str]],
) -> None:
    """The pitfall the backend avoids, reproduced: a plain filtered HNSW scan comes up short."""
    url, vocab, _ = loaded
    vector = EMBEDDER.embed([" ".join(vocab[300:303])])[0]
    sql, params = q.vector_sql(_scan(("tenant23",)), EMBEDDER.model_id, vector, K, exact=False)
    with psycopg.connect(url) as conn:
        register_vector(conn)
        conn.execute(q.HNSW_SETTINGS, q.hnsw_settings_params(40, 20000))
        conn.execute("SELECT set_config('hnsw.iterative_scan', 'off', true)")
        conn.execute("SELECT set_config('enable_sort', 'off', true)")  # force the index scan
        assert len(conn.execute(sql, params).fetchall()) < K


def test_exhausted_scan_budget_falls_back_to_exact(postgres_url: str) -> None:
    """A narrow filter, the index scan forced (sorting priced out for this database)
    and a budget of one tuple: the HNSW scan comes up short and the exact search
    answers, both in the one gated statement (size unknown) and as a second
    statement after the index scan alone (size known not to be small)."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{urlsplit(postgres_url).path[1:]}" SET enable_sort = off')
    rng = random.Random(8)
    vocab = _vocabulary(rng)
    items = [
        (("big", f"u{i % 3}"), f"k{i}", {"text": " ".join(rng.choices(vocab, k=8)), "i": i})
        for i in range(2000)
    ]
    query = " ".join(vocab[400:403])
    vector = EMBEDDER.embed([query])[0]
    texts = {key: str(value["text"]) for _, key, value in items}
    exact = _exact_sims(texts, [f"k{i}" for i in range(25)], query)[:K]
    backend = PostgresColdBackend(postgres_url, exact_below=0, max_scan_tuples=1, ef_search=1)
    store = LongTermStore(backend, embedder=EMBEDDER)
    store.setup()
    try:
        store.put_many(items)
        narrow = _scan(("big",), {"i": {"$lt": 25}})
        for attempt in range(2):
            found = backend.vector_candidates(narrow, vector, EMBEDDER.model_id, K)
            assert [s for _, s in found] == pytest.approx(exact, abs=1e-5), attempt
        assert backend._sizes.get(("big",)) is False
        plan = backend.explain_vector_search(narrow, vector, EMBEDDER.model_id, K)
    finally:
        store.close()
    assert q.hnsw_index_name(384) in _index_names(plan) and plan["Actual Rows"] < K, plan


def test_keyword_search_uses_the_gin_index(
    loaded: tuple[str, list[str], dict[str, str]], backend: PostgresColdBackend
) -> None:
    url, vocab, texts = loaded
    word = vocab[250]
    sql, params = q.keyword_sql(_scan(("acme",)), q.tsquery_text([word]), 10)
    with psycopg.connect(url) as conn:
        plan = conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()
    assert plan is not None and f"{q.TABLE}_tsv" in _index_names(plan[0][0]["Plan"]), plan
    found = backend.keyword_candidates(_scan(("acme",)), word.upper() + "!", 500)
    expected = {i for i, t in texts.items() if word in t.split()} & set(_ids_in(url, "acme"))
    assert set(found) == expected and expected


def test_keyword_search_uses_the_gin_index_right_after_a_bulk_load(postgres_url: str) -> None:
    """No pending list: GIN entries go straight into the tree, so the planner need
    not wait for a vacuum before it prefers the index over scanning the table."""
    rng = random.Random(9)
    vocab = _vocabulary(rng)
    items = [
        (("t", f"u{i % 10}"), f"k{i}", {"text": " ".join(rng.choices(vocab, k=10))})
        for i in range(3000)
    ]
    with open_store(postgres_url) as store:
        for start in range(0, len(items), 1000):
            store.put_many(items[start : start + 1000])
    sql, params = q.keyword_sql(_scan(("t",)), q.tsquery_text(vocab[300:303]), 50)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        row = conn.execute("SELECT pending_tuples FROM pgstatginindex(%s)", (f"{q.TABLE}_tsv",))
        assert row.fetchone() == (0,)
        plan = conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()
    assert plan is not None and f"{q.TABLE}_tsv" in _index_names(plan[0][0]["Plan"]), plan


def test_signals_of_candidates_match_the_table(
    loaded: tuple[str, list[str], dict[str, str]], backend: PostgresColdBackend
) -> None:
    """Candidate searches hand their versions' recorded_at/importance to signals();
    what signals() returns is what the table holds, for those and for other ids."""
    url, vocab, _ = loaded
    query = " ".join(vocab[120:123])
    keyword = backend.keyword_candidates(_scan(("acme",)), query, 30)
    vector = backend.vector_candidates(
        _scan(("acme",)), EMBEDDER.embed([query])[0], EMBEDDER.model_id, 30
    )
    others = _ids_in(url, "tenant03")[:5]
    ids = list(dict.fromkeys([*keyword, *(i for i, _ in vector), *others]))
    with psycopg.connect(url) as conn:
        rows = conn.execute(q.SIGNALS, (ids,)).fetchall()
    expected = {str(i): (at, float(importance)) for i, at, importance in rows}
    assert backend.signals(ids) == expected and len(expected) == len(ids) > 35
    assert backend.signals(ids) == expected  # again: now all from the table


def test_a_typical_row_keeps_its_vector_inline(postgres_url: str) -> None:
    """A sentence plus a 384-d vector stays in the table's page: searches read no TOAST."""
    with open_store(postgres_url, embedder=EMBEDDER) as store:
        store.put(("t", "u"), "k", {"text": "a typical sentence about " + "rivers " * 60})
    with psycopg.connect(postgres_url) as conn:
        toast = conn.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = %s::regclass",
            (q.TABLE,),
        ).fetchone()
        assert toast is not None
        row = conn.execute(f"SELECT count(*) FROM {toast[0]}").fetchone()
        size = conn.execute(f"SELECT pg_column_size(m.*) FROM {q.TABLE} m").fetchone()
    assert row == (0,) and size is not None and size[0] > 2100


def test_repeated_searches_are_planned_for_their_own_tenant(
    loaded: tuple[str, list[str], dict[str, str]],
) -> None:
    """Prepared after a few runs, a search still gets a plan for its values (a GIN scan
    for the big tenant, a b-tree one for a small tenant), never one generic plan."""
    _, vocab, _ = loaded
    vector = EMBEDDER.embed([" ".join(vocab[10:13])])[0]
    for backend in _backend(loaded[0], max_connections=1):
        for tenant in ["acme"] * 8 + ["tenant05"] * 8:
            assert backend.keyword_candidates(_scan((tenant,)), " ".join(vocab[10:13]), K)
            assert (
                len(backend.vector_candidates(_scan((tenant,)), vector, EMBEDDER.model_id, K)) == K
            )
        with backend.pool.connection() as conn:
            rows = conn.execute(
                "SELECT sum(generic_plans), sum(custom_plans) FROM pg_prepared_statements"
            ).fetchone()
    assert rows is not None and rows[0] == 0 and rows[1] >= 16, rows


# -- erasure, byte by byte ------------------------------------------------------------

_TABLES = (
    "SELECT quote_ident(table_name) FROM information_schema.tables "
    "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
)
_RAW_HITS = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL generate_series(
    0, pg_relation_size(c.oid) / current_setting('block_size')::int - 1) AS b
WHERE n.nspname IN (current_schema(), 'pg_toast') AND c.relkind IN ('r', 'i', 't')
  AND c.relpersistence = 'p'
GROUP BY c.relname
HAVING bool_or(position(%s::bytea IN get_raw_page(c.oid::regclass::text, b::int)) > 0)
"""


def _rows_containing(conn: psycopg.Connection[Any], marker: str) -> dict[str, int]:
    tables = [str(r[0]) for r in conn.execute(_TABLES)]
    counts = {}
    for table in tables:
        row = conn.execute(
            f"SELECT count(*) FROM {table} x WHERE x::text LIKE %s", (f"%{marker}%",)
        ).fetchone()
        counts[table] = int(row[0]) if row else 0
    return counts


def _pages_containing(conn: psycopg.Connection[Any], needle: bytes) -> set[str]:
    return {str(r[0]) for r in conn.execute(_RAW_HITS, (needle,))}


RENORMALISED = "zq12728b58ad"
"""A marker whose hash vector (two words share a bucket) pgvector's cosine HNSW index
keeps re-normalised in double precision: other float32 bytes than the table's."""


def _vector_bytes(conn: psycopg.Connection[Any], text: str) -> tuple[bytes, bytes]:
    """The stored vector of ``text``, and the same vector as a cosine HNSW index keeps it."""
    register_vector(conn)
    row = conn.execute(
        f"SELECT embedding, l2_normalize(embedding) FROM {q.TABLE} WHERE text = %s", (text,)
    ).fetchone()
    assert row is not None
    stored, indexed = (v.to_numpy().astype("<f4").tobytes() for v in row)
    return stored, indexed


@pytest.mark.parametrize("fixed_marker", [None, RENORMALISED], ids=["random", "renormalised"])
def test_forget_leaves_no_byte_in_tables_indexes_or_toast(
    postgres_url: str, fixed_marker: str | None
) -> None:
    me = Principal("t", "me")
    marker = fixed_marker or f"zq{uuid.uuid4().hex[:10]}k"
    assert search_terms(marker) == [marker]  # (its own stem: the keyword index holds it whole)
    secret = f"my codename is {marker}"
    with open_store(postgres_url, embedder=EMBEDDER) as store:
        store.remember(me, secret, slot="codename", tags=["profile"])
        store.remember(me, f"my codename is {marker} version two", slot="codename")
        blob = "".join(marker + uuid.uuid4().hex for _ in range(300))  # long: goes to TOAST
        store.put(("t", "me", "notes"), "n1", {"text": "note " + marker, "blob": blob})
        store.remember(("t", "other"), "unrelated fact about sailing", tags=["preference"])
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            stored, indexed = _vector_bytes(conn, secret)
            assert stored == EMBEDDER.embed([secret])[0].astype("<f4").tobytes()
            assert stored != indexed or fixed_marker is None  # the case stays covered
            conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
            conn.execute("CHECKPOINT")
            assert sum(_rows_containing(conn, marker).values()) == 3  # the scans can see it
            assert {q.TABLE, f"{q.TABLE}_tsv"} <= _pages_containing(conn, marker.encode())
            assert q.TABLE in _pages_containing(conn, stored)
            assert q.hnsw_index_name(384) in _pages_containing(conn, indexed)
            report = store.forget(me)
            assert (report.versions, report.vectors, report.compacted) == (3, 3, True)
            conn.execute("CHECKPOINT")
            assert sum(_rows_containing(conn, marker).values()) == 0
            assert _pages_containing(conn, marker.encode()) == set()
            assert _pages_containing(conn, stored) == _pages_containing(conn, indexed) == set()
        assert [r.record.text for r in store.recall(Principal("t", "other"), "sailing")] == [
            "unrelated fact about sailing"
        ]


# -- storage details --------------------------------------------------------------------


def test_vectors_are_stored_bit_exact_as_pgvector(postgres_url: str) -> None:
    with open_store(postgres_url, embedder=EMBEDDER) as store:
        store.put(("t", "u"), "k", {"text": "binary vectors round trip"})
    with psycopg.connect(postgres_url) as conn:
        register_vector(conn)
        row = conn.execute(f"SELECT embedding, dims, model FROM {q.TABLE}").fetchone()
    assert row is not None
    expected = EMBEDDER.embed(["binary vectors round trip"])[0]
    stored = row[0].to_numpy()
    assert stored.dtype == np.float32 and np.array_equal(stored, expected)
    assert (row[1], row[2]) == (384, EMBEDDER.model_id)


def test_buffer_fit_weighs_the_table_and_every_index_against_shared_buffers(
    postgres_url: str,
) -> None:
    items = [(("t", "u"), f"k{i}", {"text": f"fact {i} about rivers"}) for i in range(50)]
    with open_store(postgres_url, embedder=EMBEDDER) as store:
        store.put_many(items)
        assert isinstance(store.backend, PostgresColdBackend)
        fit = store.backend.buffer_fit()
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass",
            (q.TABLE,),
        )
        indexes = {str(r[0]) for r in rows}
        buffers = conn.execute("SELECT pg_size_bytes(current_setting('shared_buffers'))")
        assert fit.shared_buffers == buffers.fetchone()[0]  # type: ignore[index]
    names, sizes = [n for n, _ in fit.relations], [b for _, b in fit.relations]
    assert set(names) == {q.TABLE, *indexes} and q.hnsw_index_name(384) in names
    assert len(names) == len(indexes) + 1 and all(b > 0 for b in sizes)
    assert sizes == sorted(sizes, reverse=True) and fit.total == sum(sizes) and fit.fits
    assert not BufferFit(100, (("table", 60), ("index", 50))).fits


def test_setup_is_idempotent_and_versioned(postgres_url: str) -> None:
    for backend in _backend(postgres_url):
        backend.setup()
    for _ in _backend(postgres_url):
        pass
    with psycopg.connect(postgres_url) as conn:
        versions = [r[0] for r in conn.execute(f"SELECT version FROM {q.VERSION_TABLE_NAME}")]
    assert versions == list(range(1, len(q.MIGRATIONS) + 1))


def test_every_key_starts_with_the_tenant(postgres_url: str) -> None:
    for _ in _backend(postgres_url):
        pass
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
            "WHERE indrelid = %s::regclass AND (indisprimary OR indisunique)",
            (q.TABLE,),
        ).fetchall()
    assert len(rows) == 2
    assert all("(tenant," in str(definition) for _, definition in rows), rows


def test_nul_characters_are_refused_with_a_typed_error(postgres_url: str) -> None:
    with open_store(postgres_url, embedder=EMBEDDER) as store:
        with pytest.raises(InvalidInputError):
            store.put(("t", "u"), "k", {"text": "bad \x00 byte"})
        assert store.get(("t", "u"), "k") is None


async def test_concurrent_async_recalls_share_the_pool(postgres_url: str) -> None:
    import asyncio

    me = Principal("t", "me")
    with open_store(postgres_url, embedder=EMBEDDER) as store:
        for i in range(10):
            store.remember(me, f"fact {i} about rivers and lakes", tags=["profile"])
        results = await asyncio.gather(*(store.arecall(me, "rivers", k=5) for _ in range(8)))
    assert all(len(r) == 5 for r in results)
    assert len({tuple(x.record.id for x in r) for r in results}) == 1


def test_the_store_is_a_basestore_on_postgres(postgres_url: str) -> None:
    with open_store(postgres_url) as store:
        assert isinstance(store, LongTermStore)
        store.put(("t", "u"), "k", {"text": "no embedder: keyword search only"})
        assert [i.key for i in store.search(("t",), query="keyword")] == ["k"]


@pytest.mark.parametrize("version", ["0.7.4", "0.5", "", "dev"])
def test_pgvector_without_iterative_scans_is_refused(version: str) -> None:
    with pytest.raises(ConfigError, match=r"pgvector >= 0\.8"):
        require_pgvector(version)
    require_pgvector("0.8.0")
    require_pgvector("1.0")


# -- keywords in every script ----------------------------------------------------------

ME = Principal("t", "me")


@pytest.fixture
def c_locale_url(postgres_server_url: str) -> Iterator[str]:
    """A database whose ctype and collation are C (no locale knows Cyrillic there)."""
    name = "engram_c_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(
            f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' "
            "LC_COLLATE 'C' LC_CTYPE 'C'"
        )
    parts = urlsplit(postgres_server_url)
    yield urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_keywords_in_every_script_in_a_c_locale_database(c_locale_url: str) -> None:
    with open_store(c_locale_url, embedder=None) as store:
        store.remember(ME, "Я живу в Казани", key="ru", tags=["fact"])
        store.remember(ME, "मुझे हरी चाय पसंद है", key="hi", tags=["fact"])
        store.remember(ME, "我喜欢喝绿茶", key="zh", tags=["fact"])
        assert [r.record.key for r in store.recall(ME, "КАЗАНИ")] == ["ru"]
        assert [r.record.key for r in store.recall(ME, "चाय")] == ["hi"]
        assert [r.record.key for r in store.recall(ME, "绿茶")] == ["zh"]


def test_a_database_of_the_old_keyword_schema_upgrades(postgres_url: str) -> None:
    """Version 3 built ``tsv`` from the raw text on the server; setup fills ``kw`` for
    existing rows in the client and rebuilds ``tsv`` from it."""
    with open_store(postgres_url, embedder=None) as store:
        store.remember(ME, "我喜欢喝绿茶", key="tea", tags=["fact"])
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {q.TABLE} DROP COLUMN tsv")
        conn.execute(f"ALTER TABLE {q.TABLE} DROP COLUMN kw")
        conn.execute(
            f"ALTER TABLE {q.TABLE} ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
            "(to_tsvector('simple'::regconfig, regexp_replace(text, '\\W+', ' ', 'g'))) STORED"
        )
        conn.execute(f"DELETE FROM {q.VERSION_TABLE_NAME} WHERE version > 3")
    with open_store(postgres_url, embedder=None) as store:
        assert [r.record.key for r in store.recall(ME, "绿茶")] == ["tea"]
        store.remember(ME, "我的女儿在上海读大学", key="daughter", tags=["fact"])
        assert [r.record.key for r in store.recall(ME, "上海")] == ["daughter"]
