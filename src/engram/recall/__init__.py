"""Pure retrieval building blocks: embedders, fusion, scoring, chunking."""

from engram.recall._embedder import Embedder, HashEmbedder, Vectors, normalise
from engram.recall._http import OpenAIEmbedder
from engram.recall._local import MiniLMEmbedder

__all__ = ["Embedder", "HashEmbedder", "MiniLMEmbedder", "OpenAIEmbedder", "Vectors", "normalise"]
