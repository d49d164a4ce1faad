"""Token counter figures: speed of each counter and the error of the offline ones vs cl100k_base.

    .venv/bin/python bench/tokens_bench.py [--js-tiktoken DIR] [--limit N]

Texts: every string of LoCoMo + LongMemEval ($ENGRAM_EVAL_DATA or ../shared/data) plus 2,000
synthetic JSON tool results.
Errors need the real cl100k_base file offline: either TIKTOKEN_CACHE_DIR already holds it, or pass
``--js-tiktoken`` the unpacked npm package (``npm pack js-tiktoken && tar xzf js-tiktoken-*.tgz``),
whose ranks are converted to tiktoken's file format (the sha256 is checked against tiktoken's pin).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engram.tokens import (
    _TIKTOKEN_FILES,
    ApproxCounter,
    TiktokenCounter,
    WordPieceCounter,
    count_tokens,
    tiktoken_available,
)


def corpus_texts(limit: int) -> list[str]:
    texts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str) and len(node) > 3:
            texts.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    from engram.eval import default_data_root

    for path in sorted(default_data_root().glob("*/*.json")):
        walk(json.loads(path.read_text()))
    return list(dict.fromkeys(texts))[:limit]


def json_texts(prose: list[str], n: int = 2000) -> list[str]:
    rng = random.Random(1)
    out = []
    for _ in range(n):
        row = {
            "ticker": rng.choice(["NVDA", "AAPL", "TSLA", "MSFT", "AMD"]),
            "price": round(rng.uniform(10, 900), 2),
            "volume": rng.randint(1000, 10**8),
            "date": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "headline": rng.choice(prose)[:200],
            "pe_ratio": round(rng.uniform(5, 80), 3),
        }
        out.append(json.dumps(row, indent=rng.choice([None, 2])))
    return out


def install_js_tiktoken(package_dir: Path) -> None:
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-cache-"))
    for name, (url, sha256) in _TIKTOKEN_FILES.items():
        source = package_dir / "dist" / "ranks" / f"{name}.js"
        ranks = json.loads(source.read_text().removeprefix("export default ").rstrip().rstrip(";"))
        lines = []
        for row in filter(None, ranks["bpe_ranks"].split("\n")):
            _, offset, *tokens = row.split(" ")
            lines.extend(f"{tok} {int(offset) + i}" for i, tok in enumerate(tokens))
        data = ("\n".join(lines) + "\n").encode()
        ok = hashlib.sha256(data).hexdigest() == sha256
        print(f"{name}: {len(lines)} ranks, sha256 matches tiktoken's pin: {ok}")
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


def per_text_us(fn: Callable[[str], int], texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        fn(text)
    return (time.perf_counter() - start) / len(texts) * 1e6


def errors(fn: Callable[[str], int], ref: Callable[[str], int], texts: list[str]) -> str:
    pairs = [(fn(t), ref(t)) for t in texts]
    rel = sorted(abs(a - b) / b for a, b in pairs if b >= 20)
    total = sum(a for a, _ in pairs) / sum(b for _, b in pairs)
    p95 = rel[int(0.95 * len(rel))]
    return (
        f"median err {statistics.median(rel):6.1%}  p95 {p95:6.1%}  "
        f"total ratio {total:.3f}  (n={len(rel)} texts of >=20 tokens)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--js-tiktoken", type=Path)
    parser.add_argument("--limit", type=int, default=30000)
    args = parser.parse_args()
    if args.js_tiktoken:
        install_js_tiktoken(args.js_tiktoken)
    prose = corpus_texts(args.limit)
    sets = {"dialogue+docs": prose, "json tool results": json_texts(prose)}
    approx, wordpiece = ApproxCounter(), WordPieceCounter()
    sample = prose[:5000]
    print(f"{len(prose)} corpus texts, {len(sets['json tool results'])} JSON texts")
    print(f"approx     {per_text_us(approx.count, sample):7.1f} us/text (uncached)")
    print(f"wordpiece  {per_text_us(wordpiece.count, sample):7.1f} us/text (uncached)")
    count_tokens(sample[0], approx)
    per_text_us(lambda t: count_tokens(t, approx), sample)
    print(f"cached     {per_text_us(lambda t: count_tokens(t, approx), sample):7.1f} us/text (hit)")
    if not tiktoken_available("cl100k_base"):
        print("cl100k_base not cached offline: no error figures (see --js-tiktoken)")
        return
    exact = TiktokenCounter("cl100k_base")
    print(f"tiktoken   {per_text_us(exact.count, sample):7.1f} us/text")
    for label, texts in sets.items():
        for name, counter in (("approx", approx), ("wordpiece", wordpiece)):
            print(f"{label:18s} {name:9s} {errors(counter.count, exact.count, texts)}")


if __name__ == "__main__":
    main()
