"""Fuzz a running ``engram serve`` from its OpenAPI document (schemathesis + hypothesis).

Every operation gets ``examples`` generated requests (valid and invalid inputs) per
credential: a valid key of tenant ``acme``, a tenant-level key of ``acme`` (the
``X-Engram-User`` header is fuzzed too), a read-only key, and a forged key. A finding is
a 5xx answer, or an answer holding tenant ``beta``'s marker. Run as a script for a
bigger run that prints the counts:

    python tests/server/fuzz_support.py --examples 100
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.generation import GenerationMode

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
OTHER_MARKER = "wombat-9013"


@dataclass
class Findings:
    """Counts of a fuzz run."""

    requests: int = 0
    by_status: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    other_tenant: list[str] = field(default_factory=list)
    unsatisfiable: int = 0


def fuzz(url: str, tokens: dict[str, str], examples: int, seed: int = 0) -> Findings:
    """Send ``examples`` generated requests per operation, mode and credential to ``url``."""
    schema = schemathesis.openapi.from_path(str(DOCUMENT))
    found = Findings()
    with httpx.Client(base_url=url, timeout=60.0) as client:
        for result in schema.get_all_operations():
            operation = result.ok()
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                strategy = operation.as_strategy(generation_mode=mode)
                _run(client, strategy, tokens, examples, seed, found)
    return found


def _run(
    client: httpx.Client,
    strategy: st.SearchStrategy,  # type: ignore[type-arg]
    tokens: dict[str, str],
    examples: int,
    seed: int,
    found: Findings,
) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed == 0,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy, who=st.sampled_from(sorted(tokens)))
    def probe(case: schemathesis.Case, who: str) -> None:
        headers = {**(case.headers or {}), "Authorization": f"Bearer {tokens[who]}"}
        kwargs = case.as_transport_kwargs(base_url=str(client.base_url), headers=headers)
        try:
            response = client.request(
                kwargs["method"],
                kwargs["url"],
                headers=kwargs.get("headers"),
                params=kwargs.get("params"),
                content=_content(kwargs),
            )
        except (httpx.InvalidURL, httpx.LocalProtocolError, UnicodeEncodeError, ValueError):
            return  # a request no HTTP client can send (e.g. a header with a NUL)
        except httpx.TransportError as exc:  # the server dropped or never answered it
            found.requests += 1
            found.server_errors.append(f"{who} {case.method} {case.formatted_path}: {exc!r}")
            return
        found.requests += 1
        found.by_status[response.status_code] += 1
        line = f"{who} {case.method} {case.formatted_path} -> {response.status_code}"
        if response.status_code >= 500:
            found.server_errors.append(f"{line}: {response.text[:300]}")
        if OTHER_MARKER in response.text:
            found.other_tenant.append(line)

    try:
        probe()
    except Unsatisfiable:
        found.unsatisfiable += 1  # e.g. no invalid request exists for GET /healthz


def _content(kwargs: dict[str, object]) -> bytes | None:
    import json

    if "json" in kwargs:
        return json.dumps(kwargs["json"]).encode()
    data = kwargs.get("data") or kwargs.get("content")
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    return data if isinstance(data, bytes) else None


def seed_home(home: Path) -> dict[str, str]:
    """A home where ``beta`` holds the marker, and the credentials the fuzzer uses."""
    from engram import Memory, Principal
    from engram.recall import HashEmbedder
    from engram.server.auth import open_keyring

    beta = Principal("beta", "alice")
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.remember(beta, f"My codename is {OTHER_MARKER}", slot="codename")
        memory.documents.write(beta, "users/alice/notes.md", f"# Notes\n\n{OTHER_MARKER}\n")
        memory.documents.write(beta, "conventions/style.md", f"- {OTHER_MARKER}\n")
        memory.remember(Principal("acme", "alice"), "Alice likes tea", slot="drink")
    keyring = open_keyring(home=home)
    every = ["read", "write", "erase"]
    return {
        "acme-alice": keyring.create("acme", user_id="alice", scopes=every).token,
        "acme-tenant": keyring.create("acme", scopes=every).token,
        "acme-reader": keyring.create("acme", user_id="bob", scopes=["read"]).token,
        "forged": "egk_000000000000.YmV0YQ.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    }


def main() -> int:
    from serve_support import start

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        home = Path(root) / ".engram"
        tokens = seed_home(home)
        server = start(["--home", str(home), "--embedder", "hash"], cwd=Path(root))
        try:
            found = fuzz(server.url, tokens, args.examples, args.seed)
        finally:
            server.stop()
    print(f"requests {found.requests}; by status {dict(sorted(found.by_status.items()))}")
    print(
        f"5xx {len(found.server_errors)}; answers with another tenant's data "
        f"{len(found.other_tenant)}"
    )
    for line in found.server_errors[:20] + found.other_tenant[:20]:
        print(" ", line)
    return 1 if found.server_errors or found.other_tenant else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    sys.exit(main())
