from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from engram.cli import main
from engram.errors import ConfigError, InvalidInputError
from engram.recall import Embedder, HashEmbedder, embedder_for_model_id, embedder_from_name


def test_hash_embedder_is_deterministic_unit_and_lexical() -> None:
    emb = HashEmbedder(dim=64)
    assert isinstance(emb, Embedder)
    a, b, c = emb.embed(["NVDA risk tolerance", "risk tolerance NVDA", "weather in Paris"])
    assert np.allclose(np.linalg.norm([a, b, c], axis=1), 1.0, atol=1e-5)
    assert float(a @ b) > 0.99 > float(a @ c)
    assert np.array_equal(emb.embed(["NVDA risk tolerance"])[0], a)
    assert emb.embed([]).shape == (0, 64)


def test_recent_embeddings_are_the_inner_vectors_bounded_and_cleared() -> None:
    from engram.recall import RecentEmbeddings

    inner = HashEmbedder()
    recent = RecentEmbeddings(inner, size=2)
    texts = ["alpha beta", "gamma", "alpha beta", "delta"]
    assert np.array_equal(recent.embed(texts), inner.embed(texts))
    assert recent.embed([]).shape == (0, inner.dim)
    assert (recent.model_id, recent.dim) == (inner.model_id, inner.dim)
    assert recent.clear() == 2 and recent.clear() == 0


@pytest.mark.parametrize("dim", [0, -1, 4097, 2_000_000, True, 1.5, "384"])
def test_hash_embedder_refuses_a_dimension_outside_1_to_4096(dim: object) -> None:
    with pytest.raises(InvalidInputError, match="HashEmbedder dim must be"):
        HashEmbedder(dim)  # type: ignore[arg-type]
    assert (HashEmbedder(1).dim, HashEmbedder(4096).dim) == (1, 4096)


@pytest.mark.parametrize("name", ["hash:0", "hash:4097", "hash:2000000", "hash:" + "9" * 5000])
def test_an_embedder_name_bounds_the_hash_dimension(name: str) -> None:
    with pytest.raises(ConfigError, match="from 1 to 4096"):
        embedder_from_name(name)
    with pytest.raises(ConfigError, match="from 1 to 4096"):
        embedder_for_model_id(f"engram-hash-{name[5:]}")
    assert (embedder_from_name("hash:1").dim, embedder_from_name("hash:4096").dim) == (1, 4096)


@pytest.mark.parametrize("name", ["hash:0", "hash:5000"])
def test_the_cli_refuses_a_huge_or_empty_hash_embedder_before_writing(
    name: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    args = ["--tenant", "acme", "--user", "alice", "--home", str(home), "--embedder", name]
    result = CliRunner().invoke(main, ["remember", "the grass is green", *args])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert result.output.startswith("Error: ConfigError: ") and "4096" in result.output
