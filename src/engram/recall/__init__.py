"""Pure retrieval building blocks: embedders, fusion, scoring, chunking."""

from engram.recall._embedder import Embedder, HashEmbedder, Vectors, normalise

__all__ = ["Embedder", "HashEmbedder", "Vectors", "normalise"]
