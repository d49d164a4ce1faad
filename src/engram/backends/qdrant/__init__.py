"""Qdrant backend: the cold tier (``qdrant://host:port``, ``qdrant+local:///folder``)."""

from engram.backends.qdrant._client import FolderInUseError

__all__ = ["FolderInUseError"]
