"""Embedders by name and by stored model id."""

from __future__ import annotations

import pytest

from engram.errors import ConfigError
from engram.recall import (
    HashEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    embedder_for_model_id,
    embedder_from_name,
)


def test_hash_names() -> None:
    default, sized = embedder_from_name("hash"), embedder_from_name("hash:64")
    assert isinstance(default, HashEmbedder) and default.dim == 384
    assert isinstance(sized, HashEmbedder) and sized.dim == 64


@pytest.mark.parametrize(
    ("name", "runtime"),
    [
        ("minilm", "auto"),
        ("minilm:numpy", "numpy"),
        ("minilm:onnx", "onnx"),
        ("minilm:onnx-int8", "onnx-int8"),
    ],
)
def test_minilm_names(name: str, runtime: str) -> None:
    embedder = embedder_from_name(name, threads=1)
    assert isinstance(embedder, MiniLMEmbedder) and embedder.runtime == runtime


def test_openai_names() -> None:
    embedder = embedder_from_name("openai:text-embedding-3-small")
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.model_id == "openai:text-embedding-3-small" and embedder.dim == 1536


@pytest.mark.parametrize("name", ["", "bert", "minilm:tensorflow", "openai:", "hash:x"])
def test_unknown_names_are_config_errors(name: str) -> None:
    with pytest.raises(ConfigError, match="unknown embedder"):
        embedder_from_name(name)


@pytest.mark.parametrize(
    "name", ["hash:32", "minilm", "minilm:onnx-int8", "openai:text-embedding-3-large"]
)
def test_model_ids_round_trip(name: str) -> None:
    embedder = embedder_from_name(name)
    again = embedder_for_model_id(embedder.model_id)
    assert type(again) is type(embedder) and again.model_id == embedder.model_id


def test_int8_vectors_never_share_the_float32_model_id() -> None:
    exact, int8 = embedder_from_name("minilm:onnx"), embedder_from_name("minilm:onnx-int8")
    assert exact.model_id == embedder_from_name("minilm:numpy").model_id
    assert int8.model_id != exact.model_id and int8.model_id.endswith(":onnx-int8:2")


def test_dimensioned_openai_ids_round_trip() -> None:
    embedder = OpenAIEmbedder("text-embedding-3-small", dimensions=256)
    assert embedder_for_model_id(embedder.model_id).dim == 256


def test_unknown_model_ids_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        embedder_for_model_id("word2vec")
