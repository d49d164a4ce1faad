"""Pure retrieval building blocks: embedders, fusion, scoring, chunking."""

from engram.recall._context import ContextBoost
from engram.recall._embedder import Embedder, HashEmbedder, Vectors, normalise
from engram.recall._factory import (
    EMBEDDER_HELP,
    EMBEDDER_NAMES,
    embedder_for_model_id,
    embedder_from_name,
)
from engram.recall._http import OpenAIEmbedder
from engram.recall._local import MiniLMEmbedder

__all__ = [
    "EMBEDDER_HELP",
    "EMBEDDER_NAMES",
    "ContextBoost",
    "Embedder",
    "HashEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "Vectors",
    "embedder_for_model_id",
    "embedder_from_name",
    "normalise",
]
