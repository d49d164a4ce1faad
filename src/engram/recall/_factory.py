"""Embedders by name, for CLI options (``--embedder``) and configuration files.

=====================  ============================================================
name                   embedder
=====================  ============================================================
``hash`` / ``hash:N``  :class:`HashEmbedder` (N dimensions, default 384), no model
``minilm``             :class:`MiniLMEmbedder`, runtime ``auto`` (onnx if installed)
``minilm:numpy``       all-MiniLM-L6-v2 run by numpy (extra ``local``)
``minilm:onnx``        all-MiniLM-L6-v2 run by onnxruntime (extra ``onnx``)
``minilm:onnx-int8``   the same in int8: faster, approximate vectors (cosine 0.99
                       or more to the reference) under their own model id; opt-in
``openai:MODEL``       :class:`OpenAIEmbedder` for MODEL (``$OPENAI_BASE_URL``,
                       ``$OPENAI_API_KEY``)
=====================  ============================================================
"""

from __future__ import annotations

import re

from engram.errors import ConfigError
from engram.recall._embedder import MAX_HASH_DIM, Embedder, HashEmbedder
from engram.recall._http import OpenAIEmbedder
from engram.recall._local import INT8_MODEL_ID, INT8_RUNTIME, RUNTIMES, MiniLMEmbedder
from engram.recall._local import MODEL_ID as MINILM_ID

EMBEDDER_NAMES = (
    "hash",
    "hash:N",
    "minilm",
    "minilm:numpy",
    "minilm:onnx",
    "minilm:onnx-int8",
    "openai:MODEL",
)
EMBEDDER_HELP = "Embedder: " + ", ".join(EMBEDDER_NAMES) + "."
"""One line for a CLI option's help."""

_HASH = re.compile(r"hash(?::(\d+))?")
_HASH_ID = re.compile(r"engram-hash-(\d+)")


def embedder_from_name(name: str, *, threads: int | None = 1) -> Embedder:
    """The embedder that ``name`` designates (see the module table); ``threads`` caps MiniLM."""
    name = name.strip()
    if match := _HASH.fullmatch(name):
        return HashEmbedder(_hash_dim(match.group(1) or "384"))
    kind, _, detail = name.partition(":")
    if kind == "minilm" and (not detail or detail in RUNTIMES):
        # "minilm" and "minilm:auto" both leave the choice to the installation.
        return MiniLMEmbedder(runtime=detail or "auto", threads=threads)
    if kind == "openai" and detail:
        return OpenAIEmbedder(detail)
    raise ConfigError(f"unknown embedder {name!r}; use one of: {', '.join(EMBEDDER_NAMES)}")


def _hash_dim(digits: str) -> int:
    """The dimension of ``hash:N``: 1 to :data:`MAX_HASH_DIM` (read from at most 5 digits)."""
    dim = int(digits) if len(digits) <= 5 else 0
    if not 1 <= dim <= MAX_HASH_DIM:
        raise ConfigError(f"hash:N takes N from 1 to {MAX_HASH_DIM}, got {digits[:12]}")
    return dim


def embedder_for_model_id(model_id: str, *, threads: int | None = 1) -> Embedder:
    """The embedder that produced vectors stored under ``model_id`` (reopening a store)."""
    if model_id == MINILM_ID:
        return MiniLMEmbedder(threads=threads)
    if model_id == INT8_MODEL_ID:
        return MiniLMEmbedder(runtime=INT8_RUNTIME, threads=threads)
    if match := _HASH_ID.fullmatch(model_id):
        return HashEmbedder(_hash_dim(match.group(1)))
    if match := re.fullmatch(r"openai:([^@]+)(?:@(\d+))?", model_id):
        dims = int(match.group(2)) if match.group(2) else None
        return OpenAIEmbedder(match.group(1), dimensions=dims)
    raise ConfigError(f"no embedder known for model id {model_id!r}")
