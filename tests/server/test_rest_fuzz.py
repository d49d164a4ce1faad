"""A bounded fuzz run of the REST API from its OpenAPI document, through a real server:
no 5xx, no answer with another tenant's data (the bigger run: fuzz_support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_support import fuzz, seed_home
from serve_support import Server, start


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    root = tmp_path_factory.mktemp("fuzz")
    tokens = seed_home(root / ".engram")
    server = start(["--home", str(root / ".engram"), "--embedder", "hash"], cwd=root)
    yield server, tokens
    server.stop()


def test_fuzzing_finds_no_server_error_and_no_other_tenant(
    target: tuple[Server, dict[str, str]],
) -> None:
    server, tokens = target
    found = fuzz(server.url, tokens, examples=3)
    assert found.requests > 100  # every operation was reached
    assert {200, 401, 403, 404, 422} <= set(found.by_status)
    assert found.server_errors == []
    assert found.other_tenant == []


def test_the_fuzzer_would_see_a_leak(target: tuple[Server, dict[str, str]], tmp_path: Path) -> None:
    server, _ = target
    from engram.server.auth import open_keyring

    home = Path(server.process.args[server.process.args.index("--home") + 1])  # type: ignore[union-attr]
    beta = {"beta": open_keyring(home=home).create("beta", user_id="alice").token}
    found = fuzz(server.url, beta, examples=2)
    assert found.other_tenant  # beta's own key sees the marker: the check is live
