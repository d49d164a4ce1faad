"""The document tier as tools for a model.

:class:`MemoryTool` implements the commands of Anthropic's client-side memory tool
(``view``, ``create``, ``str_replace``, ``insert``, ``delete``, ``rename``) over any
:class:`~engram.stores.documents.DocumentStore`, with paths under ``/memories`` and
error messages a model can act on. :func:`memory_tool` and :func:`document_tools`
wrap them as LangChain tools.

Text a command writes (``create``'s file, ``str_replace``'s new text, ``insert``'s
text and the file it leaves; ``write_document``'s content and metadata) passes the same
poisoning guard as remembered facts: when it reads like an instruction to an agent
nothing is written, the write goes to the user's review queue (``review/<user>.md``,
see :meth:`engram.memory.Memory.held_for_review`) with the signal that fired, and the
model is told it was held. The queue itself is out of these tools' reach: they neither
read, list, search nor write it (held text waits there for a person, not the model).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NoReturn

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from engram._principal import Principal
from engram.errors import (
    AccessDeniedError,
    ConflictError,
    EngramError,
    HeldForReviewError,
    InvalidInputError,
    NotFoundError,
    PathEscapeError,
)
from engram.policy import Hold, PoisoningGuard, redact
from engram.stores.documents import DocumentStore
from engram.stores.documents.markdown import render
from engram.stores.documents.paths import split_path
from engram.stores.documents.review import entry_line, in_review, outside_review, queue_held

ROOT = "/memories"
_SNIPPET = 4


def _human(size: int) -> str:
    if size < 1024:
        return str(size)
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}K"
    return f"{size / 1024 / 1024:.1f}M"


def _numbered(lines: Sequence[str], first: int) -> str:
    return "\n".join(f"{number:6d}\t{line}" for number, line in enumerate(lines, start=first))


def _lines(text: str) -> list[str]:
    """The lines of ``text`` as an editor counts them (a final newline ends the last)."""
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class DocumentGuard:
    """The poisoning guard in front of document writes, and the queue it holds them in."""

    guard: PoisoningGuard | None = field(default_factory=PoisoningGuard)
    clock: Callable[[], datetime] = _now

    def screen(self, store: DocumentStore, principal: Principal, path: str, text: str) -> None:
        """Raise :class:`HeldForReviewError` (after queueing ``text``) when it is suspect."""
        hold = self.judge(text)
        if hold is not None:
            self.hold(store, principal, path, text, hold)

    def judge(self, text: str) -> Hold | None:
        """Why ``text`` would be held, or None (always None with the guard off)."""
        return None if self.guard is None else self.guard.judge(text)

    def hold(
        self, store: DocumentStore, principal: Principal, path: str, text: str, hold: Hold
    ) -> NoReturn:
        """Queue ``text`` for review, held for ``hold``, and raise :class:`HeldForReviewError`."""
        reason = f"held for review: {hold.describe()}"
        entry = entry_line(
            self.clock().isoformat(timespec="seconds"), reason, {"document": path}, redact(text)[0]
        )
        queue_held(store, principal, entry)
        raise HeldForReviewError(
            f"Nothing was written to {path}: the text was {reason}. It waits in the user's "
            "review queue; do not retry it."
        )


class MemoryTool:
    """Anthropic's memory-tool commands over a document store, for one principal.

    ``guard`` screens every text a command writes (``DocumentGuard(None)`` turns it off).
    """

    def __init__(
        self, store: DocumentStore, principal: Principal, guard: DocumentGuard | None = None
    ) -> None:
        self._store = store
        self._principal = principal
        self._guard = guard or DocumentGuard()

    def _screen(self, path: str, text: str) -> None:
        self._guard.screen(self._store, self._principal, path, text)

    def _rel(self, path: str) -> str:
        if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
            raise PathEscapeError(
                f"The path {path} is outside {ROOT}; paths must start with {ROOT}"
            )
        return "/".join(split_path(path[len(ROOT) + 1 :], allow_root=True))

    def _writable(self, path: str) -> str:
        """The relative path of ``path``, unless it is (or holds) the review queue: engram
        alone writes it, so an entry in it is one the guard held (approve or discard it
        with the review commands), and a person alone reads it."""
        rel = self._rel(path)
        if in_review(rel.split("/")):
            raise _review_denied(path)
        return rel

    def _missing(self, path: str) -> NotFoundError:
        return NotFoundError(f"The path {path} does not exist. Please provide a valid path.")

    def _file(self, path: str) -> str:
        """The relative path of the file ``path`` names (not a directory)."""
        rel = self._rel(path)
        if not rel or self._store.is_dir(self._principal, rel):
            raise InvalidInputError(f"The path {path} is a directory, not a file.")
        return rel

    def _read(self, path: str) -> str:
        rel = self._file(path)
        try:
            return self._store.read_text(self._principal, rel)
        except NotFoundError:
            raise self._missing(path) from None

    def _edit(self, path: str, edit: Callable[[str], str]) -> str:
        """Apply ``edit`` to the file's text without losing a concurrent write (it runs
        again on the newer text when someone saved first); the text written.

        The file the edit leaves is screened too, not only the text it adds: two edits
        each harmless alone ("Never approve payments" with "Never approve" replaced by
        "Approve") can leave an instruction. A file that read as one before the edit (a
        person wrote it) is judged by the added text alone."""
        written = ""
        held: tuple[str, Hold] | None = None

        def apply(text: str | None) -> str:
            nonlocal written, held
            if text is None:
                raise self._missing(path)
            written = edit(text)
            hold = self._guard.judge(written)
            if hold is not None and self._guard.judge(text) is None:
                held = (written, hold)
                raise _Held
            return written

        self._writable(path)
        try:
            self._store.update_text(self._principal, self._file(path), apply)
        except _Held:
            assert held is not None
            self._guard.hold(self._store, self._principal, path, *held)
        return written

    def execute(self, command: Mapping[str, Any]) -> str:
        """Run one tool call (``{"command": "view", "path": ...}``); errors come back as text."""
        name = command.get("command")
        commands: dict[str, Callable[..., str]] = {
            "view": self.view,
            "create": self.create,
            "str_replace": self.str_replace,
            "insert": self.insert,
            "delete": self.delete,
            "rename": self.rename,
        }
        handler = commands.get(str(name))
        if handler is None:
            return f"Error: Unknown command {name!r}; use one of {', '.join(commands)}."
        args = {key: value for key, value in command.items() if key != "command"}
        try:
            return handler(**args)
        except TypeError as exc:
            return f"Error: Wrong parameters for {name}: {exc}"
        except EngramError as exc:
            return f"Error: {exc}"

    def view(self, path: str, view_range: Sequence[int] | None = None) -> str:
        """A directory listing (two levels deep, with sizes) or a file with line numbers."""
        rel = self._rel(path)
        if in_review(rel.split("/")):
            raise _review_denied(path)
        if not rel or self._store.is_dir(self._principal, rel):
            return self._listing(path, rel)
        lines = _lines(self._read(path))
        first, last = self._range(view_range, len(lines))
        body = _numbered(lines[first - 1 : last], first)
        return f"Here's the content of {path} with line numbers:\n{body}"

    @staticmethod
    def _range(view_range: Sequence[int] | None, count: int) -> tuple[int, int]:
        if view_range is None:
            return 1, count
        if not isinstance(view_range, list | tuple) or len(view_range) != 2:
            raise InvalidInputError("`view_range` must be two integers: [start_line, end_line].")
        start, end = _line_number(view_range[0]), _line_number(view_range[1])
        end = count if end == -1 else end
        if not 1 <= start <= max(count, 1) or not start <= end <= count:
            raise InvalidInputError(
                f"Invalid `view_range` parameter: {list(view_range)}. Lines run from 1 to "
                f"{count}; give [start, end] with start <= end, or end = -1 for the last line."
            )
        return start, end

    def _listing(self, path: str, rel: str) -> str:
        prefix = rel + "/" if rel else ""
        sizes: dict[str, int] = {}
        for info in self._store.list(self._principal, prefix + "**"):
            if in_review(info.path.split("/")):
                continue
            parts = info.path[len(prefix) :].split("/")
            for depth in range(1, min(len(parts), 2) + 1):
                entry = "/".join(parts[:depth]) + ("/" if depth < len(parts) else "")
                sizes[entry] = sizes.get(entry, 0) + info.size
        total = sum(size for entry, size in sizes.items() if "/" not in entry.rstrip("/"))
        rows = [f"{_human(total)}\t{path}"]
        rows += [f"{_human(sizes[e])}\t{path.rstrip('/')}/{e}" for e in sorted(sizes)]
        head = f"Here're the files and directories up to 2 levels deep in {path}"
        return head + ", excluding hidden items:\n" + "\n".join(rows)

    def create(self, path: str, file_text: str) -> str:
        """Create a new file; refuses to overwrite."""
        rel = self._writable(path)
        if self._store.exists(self._principal, rel):
            raise ConflictError(f"File {path} already exists")
        self._screen(path, file_text)
        try:
            self._store.write_text(self._principal, rel, file_text, overwrite=False)
        except ConflictError:
            raise ConflictError(f"File {path} already exists") from None
        return f"File created successfully at: {path}"

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        """Replace the one occurrence of ``old_str``; zero or several is an error."""
        if not old_str:
            raise InvalidInputError("`old_str` must not be empty.")
        line = 0

        def replace(text: str) -> str:
            nonlocal line
            starts = _occurrences(text, old_str)
            if not starts:
                raise NotFoundError(
                    f"No replacement was performed, old_str `{old_str}` did not appear "
                    f"verbatim in {path}."
                )
            if len(starts) > 1:
                lines = [text.count("\n", 0, start) + 1 for start in starts]
                raise ConflictError(
                    f"No replacement was performed. Multiple occurrences of old_str "
                    f"`{old_str}` in lines: {lines}. Please ensure it is unique"
                )
            line = text.count("\n", 0, starts[0]) + 1
            return text.replace(old_str, new_str, 1)

        self._screen(path, new_str)
        edited = self._edit(path, replace)
        return "The memory file has been edited.\n" + self._snippet(path, edited, line, new_str)

    def _snippet(self, path: str, text: str, line: int, inserted: str) -> str:
        lines = _lines(text)
        first = max(1, line - _SNIPPET)
        last = min(len(lines), line + inserted.count("\n") + _SNIPPET)
        return f"Here's the result of running `cat -n` on a snippet of {path}:\n" + _numbered(
            lines[first - 1 : last], first
        )

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        """Insert ``insert_text`` after line ``insert_line`` (0 inserts at the top)."""
        self._screen(path, insert_text)
        edited = self._edit(path, lambda text: _inserted(text, insert_line, insert_text))
        return f"The file {path} has been edited.\n" + self._snippet(
            path, edited, insert_line + 1, insert_text
        )

    def delete(self, path: str) -> str:
        """Delete a file or a directory with everything in it."""
        rel = self._rel(path)
        if not rel:
            raise InvalidInputError(f"Cannot delete the {ROOT} directory itself.")
        self._writable(path)
        try:
            self._store.delete(self._principal, rel)
        except NotFoundError:
            raise self._missing(path) from None
        return f"Successfully deleted {path}"

    def rename(self, old_path: str, new_path: str) -> str:
        """Rename or move a file or directory; the destination must not exist."""
        old, new = self._rel(old_path), self._rel(new_path)
        if not old or not new:
            raise InvalidInputError(f"Cannot rename the {ROOT} directory itself.")
        self._writable(old_path)
        self._writable(new_path)
        try:
            self._store.move(self._principal, old, new)
        except ConflictError:
            raise ConflictError(f"The destination {new_path} already exists") from None
        except NotFoundError:
            raise self._missing(old_path) from None
        return f"Successfully renamed {old_path} to {new_path}"


class _Held(Exception):
    """An edit left a file the guard holds: nothing is written (raised inside the update)."""


def _review_denied(path: str) -> AccessDeniedError:
    return AccessDeniedError(
        f"{path} is the review queue: writes held for review wait there for a person, who "
        "approves or discards them with the review commands; no tool reads or writes it"
    )


def _checked(path: str) -> str:
    """``path`` as the document tier names it, unless it is (or is in) the review queue."""
    if in_review(split_path(path, allow_root=True)):
        raise _review_denied(path)
    return path


def _inserted(text: str, insert_line: int, insert_text: str) -> str:
    """``text`` with ``insert_text`` as new lines after line ``insert_line``."""
    lines = text.splitlines(keepends=True)
    if not isinstance(insert_line, int) or not 0 <= insert_line <= len(lines):
        raise InvalidInputError(
            f"Invalid `insert_line` parameter: {insert_line}. It should be within the "
            f"range of lines of the file: [0, {len(lines)}]"
        )
    if lines and not lines[-1].endswith("\n") and insert_line == len(lines):
        lines[-1] += "\n"
    block = insert_text if insert_text.endswith("\n") else insert_text + "\n"
    return "".join([*lines[:insert_line], block, *lines[insert_line:]])


def _occurrences(text: str, needle: str) -> list[int]:
    starts, index = [], text.find(needle)
    while index != -1:
        starts.append(index)
        index = text.find(needle, index + 1)
    return starts


class MemoryCommand(BaseModel):
    """Arguments of the memory tool (fields used depend on ``command``)."""

    command: Literal["view", "create", "str_replace", "insert", "delete", "rename"]
    path: str | None = Field(None, description="Path under /memories (all but rename)")
    view_range: list[int] | None = Field(None, description="view: [start_line, end_line]")
    file_text: str | None = Field(None, description="create: the file's content")
    old_str: str | None = Field(None, description="str_replace: text that occurs exactly once")
    new_str: str | None = Field(None, description="str_replace: replacement text")
    insert_line: int | None = Field(None, description="insert: line to insert after (0 = top)")
    insert_text: str | None = Field(None, description="insert: text to insert")
    old_path: str | None = Field(None, description="rename: current path")
    new_path: str | None = Field(None, description="rename: new path")


def memory_tool(
    store: DocumentStore, principal: Principal, guard: DocumentGuard | None = None
) -> BaseTool:
    """A LangChain tool named ``memory`` that runs :class:`MemoryTool` commands."""
    tool = MemoryTool(store, principal, guard)

    def run(**kwargs: Any) -> str:
        return tool.execute({k: v for k, v in kwargs.items() if v is not None})

    return StructuredTool.from_function(
        func=run,
        name="memory",
        description=(
            "Your persistent memory directory /memories: view a directory or file, create "
            "a file, str_replace text that occurs exactly once, insert after a line, delete "
            "or rename. Check it before starting a task; record progress as you go."
        ),
        args_schema=MemoryCommand,
    )


def _guarded(func: Callable[..., str]) -> Callable[..., str]:
    """Return engram errors to the model as text instead of raising them."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> str:
        try:
            return func(*args, **kwargs)
        except EngramError as exc:
            return f"Error: {exc}"

    return run


def document_tools(
    store: DocumentStore, principal: Principal, guard: DocumentGuard | None = None
) -> list[BaseTool]:
    """The document operations (read, write, list, search, delete, move) as LangChain tools."""
    screen = guard or DocumentGuard()

    def read_document(path: str) -> str:
        """Read a Markdown document (front matter included) by its relative path."""
        return store.read_text(principal, _checked(path))

    def write_document(path: str, content: str, metadata: dict[str, Any] | None = None) -> str:
        """Write (create or replace) a Markdown document; metadata becomes YAML front matter."""
        screen.screen(store, principal, _checked(path), render(content, metadata))
        info = store.write(principal, path, content, metadata)
        return f"Wrote {info.path} ({info.size} bytes)"

    def list_documents(pattern: str = "**") -> str:
        """List document paths matching a glob such as 'research/*.md' or '**/*.md'."""
        found = [i.path for i in store.list(principal, pattern) if not in_review(i.path.split("/"))]
        return "\n".join(found) or "(no documents)"

    def search_documents(query: str, k: int = 5) -> str:
        """Search the documents; returns path, heading, line span and matching paragraph."""
        hits = outside_review(store.search(principal, query, k=k))
        return (
            "\n\n".join(
                f"{h.path}:{h.line_start}-{h.line_end} [{h.heading}]\n{h.text}" for h in hits
            )
            or "(no matches)"
        )

    def delete_document(path: str) -> str:
        """Delete a document or a whole directory of documents."""
        return f"Deleted {store.delete(principal, _checked(path))} document(s) at {path}"

    def move_document(source: str, target: str) -> str:
        """Move or rename a document or directory; the target must not exist."""
        store.move(principal, _checked(source), _checked(target))
        return f"Moved {source} to {target}"

    funcs: list[Callable[..., str]] = [read_document, write_document, list_documents]
    funcs += [search_documents, delete_document, move_document]
    return [StructuredTool.from_function(_guarded(f)) for f in funcs]


def _line_number(value: object) -> int:
    """One end of a ``view_range``: an integer (``2.0`` too, as JSON may spell it)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidInputError(
        f"`view_range` must be two integers: [start_line, end_line], got {value!r}."
    )
