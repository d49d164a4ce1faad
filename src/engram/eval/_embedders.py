"""Picks the embedder a run uses (the same one for every method)."""

from __future__ import annotations

import importlib

from engram.errors import ConfigError, MissingDependencyError
from engram.recall import Embedder, HashEmbedder

EMBEDDERS = ("hash", "minilm")


def make_embedder(name: str, threads: int | None = 2) -> Embedder:
    """``hash`` (deterministic, no model) or ``minilm`` (all-MiniLM-L6-v2, local)."""
    if name == "hash":
        return HashEmbedder()
    if name == "minilm":
        recall = importlib.import_module("engram.recall")
        factory = getattr(recall, "MiniLMEmbedder", None)
        if factory is None:
            raise MissingDependencyError("this engram build has no MiniLM embedder")
        embedder: Embedder = factory(threads=threads)
        return embedder
    raise ConfigError(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDERS)}")
