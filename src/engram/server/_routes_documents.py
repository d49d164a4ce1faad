"""``/v1/documents``: the memory-tool commands, listing and search."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from engram._principal import Principal
from engram.server import _models as m
from engram.server._deps import Layer, Paging, Reader, Writer, paginate
from engram.server._problems import responses as problems
from engram.stores.documents.review import in_review, outside_review
from engram.tools import MemoryTool

router = APIRouter(prefix="/v1/documents", tags=["documents"])


def _tool(layer: Layer, who: Principal) -> MemoryTool:
    return MemoryTool(layer.memory.documents, who)


@router.get("")
def list_documents(
    who: Reader,
    layer: Layer,
    page: Paging,
    pattern: Annotated[str, Query(max_length=1024, description="A glob (`notes/**`).")] = "**",
) -> m.Page[m.DocumentOut]:
    """The documents the user can see, by path (never the review queue: see ``/v1/review``)."""
    found = layer.memory.documents.list(who, pattern)
    items, cursor = paginate([i for i in found if not in_review(i.path.split("/"))], page)
    return m.Page[m.DocumentOut](items=[m.DocumentOut.of(i) for i in items], next_cursor=cursor)


@router.get("/search", responses=problems(502, 504))
def search(
    who: Reader,
    layer: Layer,
    q: Annotated[str, Query(min_length=1, max_length=m.TEXT)],
    k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> list[m.SearchHitOut]:
    """The best-matching paragraphs of the documents the user can see (never the review
    queue's held text: see ``/v1/review``)."""
    found = outside_review(layer.memory.documents.search(who, q, k=k))
    return [m.SearchHitOut.of(hit) for hit in found]


@router.post("/view", responses=problems(404))
def view(body: m.ViewIn, who: Reader, layer: Layer) -> m.ToolOut:
    """A file with line numbers, or a directory listing (``/memories/...``)."""
    return m.ToolOut(result=_tool(layer, who).view(body.path, body.view_range))


@router.post("/create", responses=problems(409, 502, 504))
def create(body: m.CreateIn, who: Writer, layer: Layer) -> m.ToolOut:
    """Create or overwrite a file."""
    return m.ToolOut(result=_tool(layer, who).create(body.path, body.file_text))


@router.post("/str_replace", responses=problems(404, 409, 502, 504))
def str_replace(body: m.StrReplaceIn, who: Writer, layer: Layer) -> m.ToolOut:
    """Replace the one occurrence of ``old_str``."""
    return m.ToolOut(result=_tool(layer, who).str_replace(body.path, body.old_str, body.new_str))


@router.post("/insert", responses=problems(404, 409, 502, 504))
def insert(body: m.InsertIn, who: Writer, layer: Layer) -> m.ToolOut:
    """Insert text after line ``insert_line`` (0: at the top)."""
    tool = _tool(layer, who)
    return m.ToolOut(result=tool.insert(body.path, body.insert_line, body.insert_text))


@router.post("/delete", responses=problems(404, 409))
def delete(body: m.DeleteIn, who: Writer, layer: Layer) -> m.ToolOut:
    """Delete a file or directory."""
    return m.ToolOut(result=_tool(layer, who).delete(body.path))


@router.post("/rename", responses=problems(404, 409, 502, 504))
def rename(body: m.RenameIn, who: Writer, layer: Layer) -> m.ToolOut:
    """Move a file or directory."""
    return m.ToolOut(result=_tool(layer, who).rename(body.old_path, body.new_path))
