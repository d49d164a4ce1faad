"""Tools for a model, bound to one :class:`~engram.Principal` when they are made.

- :func:`memory_tools`: ``manage_memory`` / ``search_memory`` over the memory layer;
- :class:`MemoryTool`, :func:`memory_tool`, :func:`document_tools`: the commands of
  Anthropic's client-side memory tool over the document tier.
"""

from engram.tools._documents import (
    ROOT,
    DocumentGuard,
    MemoryCommand,
    MemoryTool,
    document_tools,
    memory_tool,
)
from engram.tools._layer import memory_tools

__all__ = [
    "ROOT",
    "DocumentGuard",
    "MemoryCommand",
    "MemoryTool",
    "document_tools",
    "memory_tool",
    "memory_tools",
]
