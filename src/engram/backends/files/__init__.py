"""The embedded document backend: Markdown files with a SQLite FTS5 index."""

from engram.backends.files.documents import FileDocumentStore, RefreshReport

__all__ = ["FileDocumentStore", "RefreshReport"]
