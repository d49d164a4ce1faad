"""The document tier over MCP: the memory-tool commands as tools, and the resources.

The six tools are :class:`engram.tools.MemoryTool`'s commands (Anthropic's client-side
memory tool: paths under ``/memories``), each its own tool with its own schema and scope:
``view`` reads, ``create`` / ``str_replace`` / ``insert`` / ``rename`` write, ``delete``
erases. A file is shown as the memory tool shows it, with line numbers, so that an edit
can quote it exactly; text a command writes passes the poisoning guard.

Resources: ``engram://profile`` (the user's profile facts, as data blocks),
``engram://documents`` (the paths the user can read) and ``engram://documents/{+path}``
(one document's Markdown).
"""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from pydantic import Field

from engram._principal import Principal
from engram.errors import NotFoundError
from engram.server import _models as m
from engram.server._mcp_access import ToolScope
from engram.server._mcp_tools import (
    ERASES,
    READ_ONLY,
    WRITES,
    Service,
    add_tool,
    render_facts,
)
from engram.stores.documents.paths import split_path
from engram.stores.documents.review import in_review
from engram.tools import ROOT, DocumentGuard, MemoryTool

Path = Annotated[
    str, Field(max_length=m.PATH, description=f"A path under {ROOT}, e.g. {ROOT}/notes.md")
]
Text = Annotated[str, Field(max_length=m.TEXT)]


def _tool(service: Service, command: Callable[[MemoryTool], str]) -> Callable[[Principal], str]:
    """``command`` on a :class:`MemoryTool` bound to the call's principal."""
    guard = DocumentGuard(service.memory.policy.guard)

    def run(principal: Principal) -> str:
        return command(MemoryTool(service.memory.documents, principal, guard))

    return run


class DocumentTools:
    """memory_view, memory_create, memory_str_replace, memory_insert, memory_delete,
    memory_rename: the memory-tool commands, each acting for the call's principal."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.memory = service.memory

    async def _run(self, scope: ToolScope, command: Callable[[MemoryTool], str]) -> str:
        return await self.service.run(scope, _tool(self.service, command))

    async def memory_view(
        self,
        path: Path = ROOT,
        view_range: Annotated[
            list[int] | None,
            Field(min_length=2, max_length=2, description="[start_line, end_line]; end -1: last"),
        ] = None,
    ) -> str:
        """View a directory of the memory files (two levels deep, with sizes) or a file
        with line numbers. Check /memories before starting a task. Needs the read scope."""
        return await self._run("read", lambda t: t.view(path, view_range))

    async def memory_create(
        self,
        path: Path,
        file_text: Annotated[Text, Field(description="The new file's content")],
    ) -> str:
        """Create a new memory file (an existing one is never overwritten). Needs the
        write scope."""
        return await self._run("write", lambda t: t.create(path, file_text))

    async def memory_str_replace(
        self,
        path: Path,
        old_str: Annotated[
            Text, Field(min_length=1, description="Text that occurs exactly once in the file")
        ],
        new_str: Annotated[Text, Field(description="Its replacement")],
    ) -> str:
        """Replace the one occurrence of old_str in a memory file. Needs the write scope."""
        return await self._run("write", lambda t: t.str_replace(path, old_str, new_str))

    async def memory_insert(
        self,
        path: Path,
        insert_line: Annotated[
            int, Field(ge=0, le=m.LINES, description="Insert after this line (0: top)")
        ],
        insert_text: Annotated[Text, Field(description="The text to insert")],
    ) -> str:
        """Insert text after a line of a memory file. Needs the write scope."""
        return await self._run("write", lambda t: t.insert(path, insert_line, insert_text))

    async def memory_delete(self, path: Path) -> str:
        """Delete a memory file, or a directory with everything in it. Needs the erase
        scope."""
        return await self._run("erase", lambda t: t.delete(path))

    async def memory_rename(
        self,
        old_path: Annotated[Path, Field(description=f"The current path under {ROOT}")],
        new_path: Annotated[Path, Field(description=f"The new path under {ROOT} (must not exist)")],
    ) -> str:
        """Rename or move a memory file or directory. Needs the write scope."""
        return await self._run("write", lambda t: t.rename(old_path, new_path))

    def register(self, server: MCPServer[Any]) -> None:
        add_tool(server, self.memory_view, annotations=READ_ONLY, structured_output=False)
        add_tool(server, self.memory_create, annotations=WRITES, structured_output=False)
        add_tool(server, self.memory_str_replace, annotations=WRITES, structured_output=False)
        add_tool(server, self.memory_insert, annotations=WRITES, structured_output=False)
        add_tool(server, self.memory_delete, annotations=ERASES, structured_output=False)
        add_tool(server, self.memory_rename, annotations=WRITES, structured_output=False)


def add_document_tools(server: MCPServer[Any], service: Service) -> None:
    """Register the memory-tool commands (see :class:`DocumentTools`)."""
    DocumentTools(service).register(server)


def _resource_error(message: str) -> Exception:
    """A missing document reads as not found; any other engram error as a failed read."""
    if message.startswith(NotFoundError.__name__ + ":"):
        return ResourceNotFoundError(message)
    return ResourceError(message)


def add_resources(server: MCPServer[Any], service: Service) -> None:
    """engram://profile, engram://documents and engram://documents/{+path}."""
    memory = service.memory

    @server.resource(
        "engram://profile",
        name="profile",
        description="The user's profile facts (profile, preference, constraint), as data blocks",
        mime_type="text/plain",
    )
    async def profile() -> str:
        found = await service.run("read", memory.profile, _resource_error)
        return render_facts(found, "(no profile facts)")

    @server.resource(
        "engram://documents",
        name="documents",
        description="Paths of the documents the user can read, one a line",
        mime_type="text/plain",
    )
    async def documents() -> str:
        found = await service.run("read", memory.documents.list, _resource_error)
        paths = [info.path for info in found if not in_review(info.path.split("/"))]
        return "\n".join(paths) or "(no documents)"

    @server.resource(
        "engram://documents/{+path}",
        name="document",
        description="One document's Markdown (front matter included)",
        mime_type="text/markdown",
    )
    async def document(path: str) -> str:
        def read(principal: Principal) -> str:
            if in_review(split_path(path, allow_root=True)):
                raise NotFoundError(f"no document {path!r}: the review queue is read with review")
            return memory.documents.read_text(principal, path)

        return await service.run("read", read, _resource_error)
