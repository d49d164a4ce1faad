"""Document tier: Markdown documents a project or agent keeps, people read, diff and edit.

Paths are relative POSIX paths (``research/rates.md``, rules in
:mod:`engram.stores.documents.paths`); metadata is the document's YAML front matter
(:mod:`engram.stores.documents.markdown`). Every call names the
:class:`~engram.Principal` it acts for; the documents belong to its tenant.
Backends implement :mod:`engram.stores.documents.contract`; ``_open.py`` is the one
table from location to backend.
"""

from engram.stores.documents._open import open_documents, setup_documents
from engram.stores.documents.contract import (
    SCAFFOLD,
    Document,
    DocumentEngine,
    DocumentInfo,
    DocumentOptions,
    DocumentStore,
    SearchHit,
    SearchMode,
    SyncReport,
    digest_of,
    sync,
)

__all__ = [
    "SCAFFOLD",
    "Document",
    "DocumentEngine",
    "DocumentInfo",
    "DocumentOptions",
    "DocumentStore",
    "SearchHit",
    "SearchMode",
    "SyncReport",
    "digest_of",
    "open_documents",
    "setup_documents",
    "sync",
]
