"""The code blocks of the README and the documentation pages, as the docs tests run them.

The convention: ```` ```python ```` blocks of one page run in order in one namespace;
```` ```bash ```` blocks of one page run in order, each with ``bash -euo pipefail``, in one
temporary working directory with a fresh ``ENGRAM_HOME`` and the running Python's
``bin`` folder first on ``PATH``; ```` ```text ````, ```` ```console ```` and
```` ```json ```` blocks are output and are not run. A block directly preceded by the line
``<!-- not run: <reason> -->`` is not run; the reason is required. Any other fence
language (or none) is an error, and so is a marker without a reason or without a block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = frozenset({"python", "bash"})
OUTPUT = frozenset({"text", "console", "json"})

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*not run\b(?P<rest>.*?)-->\s*$")


class BlockError(Exception):
    """A page breaks the code-block convention (``page:line: what``)."""


@dataclass(frozen=True)
class Block:
    """One fenced block: where it starts (1-based line of its first code line), its
    language, its code (dedented) and, when a marker skips it, the reason."""

    page: str
    line: int
    language: str
    code: str
    not_run: str | None = None

    @property
    def runs(self) -> bool:
        return self.language in RUN and self.not_run is None


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/, in a fixed order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def page_name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def parse(text: str, page: str) -> list[Block]:
    """Every fenced block of ``text``; raises :class:`BlockError` on a broken convention."""
    lines = text.splitlines()
    found: list[Block] = []
    at = 0
    while at < len(lines):
        opening = _FENCE.match(lines[at])
        marker = _marker(lines[at], page, at + 1)
        if marker is not None and not _opens_next(lines, at):
            raise BlockError(f"{page}:{at + 1}: a not-run marker must directly precede a block")
        if opening is None:
            at += 1
            continue
        end = _closing(lines, at, opening)
        language = _language(opening["info"], page, at + 1)
        skipped = _marker(lines[at - 1], page, at) if at > 0 else None
        code = _dedent(lines[at + 1 : end], opening["indent"])
        found.append(Block(page, at + 2, language, code, skipped))
        at = end + 1
    return found


def _marker(line: str, page: str, number: int) -> str | None:
    match = _MARKER.match(line)
    if match is None:
        return None
    rest = match["rest"].strip()
    reason = rest[1:].strip() if rest.startswith(":") else ""
    if not reason:
        raise BlockError(f"{page}:{number}: a not-run marker needs a reason: <!-- not run: why -->")
    return reason


def _opens_next(lines: list[str], at: int) -> bool:
    return at + 1 < len(lines) and _FENCE.match(lines[at + 1]) is not None


def _closing(lines: list[str], at: int, opening: re.Match[str]) -> int:
    fence = opening["fence"]
    for end in range(at + 1, len(lines)):
        stripped = lines[end].strip()
        if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
            return end
    raise BlockError(f"{opening.string!r} at {at + 1}: the block is never closed")


def _language(info: str, page: str, number: int) -> str:
    language = info.strip().split(" ")[0] if info.strip() else ""
    if language not in RUN | OUTPUT:
        known = ", ".join(sorted(RUN | OUTPUT))
        raise BlockError(f"{page}:{number}: fence language {language!r} is not one of {known}")
    return language


def _dedent(lines: list[str], indent: str) -> str:
    return "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in lines)


def blocks_of(path: Path) -> list[Block]:
    return parse(path.read_text(encoding="utf-8"), page_name(path))
