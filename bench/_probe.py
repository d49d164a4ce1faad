"""A store opened in a process of its own, driven line by line over stdin/stdout.

    python -m bench._probe sqlite:///path/engram.db hash [sign-bits]

Prints ``ready <open ms>``, then answers each command with one line:
``q all|user <query>`` (search, prints ms), ``w <key> <text>`` (one write, prints
ms), ``rss`` (prints ``<RssAnon kB> <RssFile kB>`` of this process), ``exit``.
With ``sign-bits``, a SQLite store's vector index takes its approximate pass from
``APPROXIMATE_FROM`` rows on (it is exact by default).
"""

from __future__ import annotations

import sys
import time

from bench.cold import ROOT, USER, make_embedder


def rss_kb() -> tuple[int, int]:
    """(anonymous, file-backed) resident memory of this process, in kB."""
    found = {}
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(("RssAnon", "RssFile")):
                found[line.split(":")[0]] = int(line.split()[1])
    return found.get("RssAnon", 0), found.get("RssFile", 0)


def main(argv: list[str]) -> int:
    from engram.stores.cold import LongTermStore, backend_for

    url, embedder = argv[0], argv[1]
    start = time.perf_counter()
    backend = backend_for(url)
    if argv[2:] == ["sign-bits"]:
        from engram.backends.sqlite._index_search import APPROXIMATE_FROM
        from engram.backends.sqlite.cold import SQLiteColdBackend

        path = url.removeprefix("sqlite:///")
        backend = SQLiteColdBackend(path, approximate_from=APPROXIMATE_FROM)
    store = LongTermStore(backend, embedder=make_embedder(embedder, 1))
    store.setup()
    print(f"ready {(time.perf_counter() - start) * 1000:.2f}", flush=True)
    for line in sys.stdin:
        kind, _, rest = line.rstrip("\n").partition(" ")
        start = time.perf_counter()
        if kind == "q":
            scope, _, query = rest.partition(" ")
            store.search(ROOT if scope == "all" else USER, query=query, limit=10)
        elif kind == "w":
            key, _, text = rest.partition(" ")
            store.put(USER, key, {"text": text})
        elif kind == "rss":
            print(*rss_kb(), flush=True)
            continue
        else:
            break
        print(f"{(time.perf_counter() - start) * 1000:.3f}", flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
