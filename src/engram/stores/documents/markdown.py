"""Pure helpers of the document tier: front matter, paragraphs, globs, digests, fusion.

Nothing here touches the file system or a database; every backend shares it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from engram import _validate as check
from engram.errors import InvalidInputError, PathEscapeError
from engram.recall import MAX_QUERY_CHARS, first_terms, rrf

_FENCE = "---"
_BOM = "\ufeff"
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CODE_FENCE = re.compile(r"^\s*(```|~~~)")
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One searchable block of a Markdown file: its heading and 1-based line span."""

    heading: str
    text: str
    line_start: int
    line_end: int


_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
"""Characters a metadata string may not hold: control characters but tab and newline
(a database refuses NUL), and those YAML reads back as a line break (NEL, U+2028/9)."""


def _plain(value: str) -> str:
    """``value`` if it is a metadata string that survives a round trip through YAML and
    every backend, else :class:`InvalidInputError`."""
    check.unicode("metadata", value)
    if _UNSAFE.search(value):
        raise InvalidInputError(f"metadata holds a control or line-break character: {value!r}")
    return value


MAX_DEPTH = 32
"""How deep metadata may nest (mappings and lists within each other)."""

MAX_FRONT_MATTER = 64 * 1024
"""The most front matter a document may hold, in UTF-8 bytes between its ``---`` lines:
more is refused on write, and read as body text in a file saved by hand."""

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""PyYAML's safe loader on libyaml when it was built with it (several times faster)."""


def _jsonable(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH and isinstance(value, Mapping | list | tuple):
        raise InvalidInputError(f"metadata nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        return {_plain(str(k)): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, str):
        return _plain(value)
    if value is None or isinstance(value, int | float | bool):
        return value
    raise InvalidInputError(f"metadata values must be plain data, got {type(value).__name__}")


def split_front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """Split ``text`` into (metadata, body, number of lines the front matter took).

    A file without a leading ``---`` line (after a byte-order mark, if any) has no
    metadata. Front matter over :data:`MAX_FRONT_MATTER`, malformed YAML, no mapping,
    using aliases, nesting deeper than :data:`MAX_DEPTH` or holding a value Python cannot
    build (``2024-02-30``, an integer of thousands of digits) raises
    :class:`InvalidInputError` naming the problem.
    """
    lines = text.split("\n")
    if lines[0].removeprefix(_BOM).rstrip("\r") != _FENCE:
        return {}, text, 0
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") in (_FENCE, "..."):
            raw = "\n".join(lines[1:index])
            size = len(raw.encode("utf-8", "surrogatepass"))
            if size > MAX_FRONT_MATTER:
                raise InvalidInputError(
                    f"front matter is {size:,} bytes; at most {MAX_FRONT_MATTER:,}"
                )
            return _load_yaml(raw), "\n".join(lines[index + 1 :]), index + 1
    raise InvalidInputError("front matter starts with '---' but has no closing '---' line")


def _load_yaml(raw: str) -> dict[str, Any]:
    """The front matter's mapping. Aliases and deep nesting are refused before anything
    is built: a few hundred bytes of aliases expand to millions of nodes, or to a value
    that holds itself, and thousands of ``[`` exhaust the stack."""
    try:
        _check_events(yaml.parse(raw, _LOADER))
        loaded = yaml.load(raw, _LOADER) if raw.strip() else {}  # (a safe loader)
    except InvalidInputError:
        raise
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"front matter is not valid YAML: {exc}") from exc
    except (ValueError, OverflowError, RecursionError) as exc:  # (dates, huge integers)
        raise InvalidInputError(f"front matter holds a value that cannot be read: {exc}") from exc
    if not isinstance(loaded, Mapping):
        raise InvalidInputError("front matter must be a YAML mapping (key: value lines)")
    result: dict[str, Any] = _jsonable(loaded)
    return result


def _check_events(events: Iterable[yaml.Event]) -> None:
    """Refuse aliases and collections nested deeper than :data:`MAX_DEPTH`."""
    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise InvalidInputError("front matter may not use YAML aliases (*name)")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH + 1:  # (the front matter's own mapping is one level)
                raise InvalidInputError(f"metadata nests deeper than {MAX_DEPTH} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def render(content: str, metadata: Mapping[str, Any] | None = None) -> str:
    """The file text of a document: YAML front matter (when any) and the body."""
    if not metadata:
        return content
    dumped = yaml.safe_dump(
        _jsonable(metadata), sort_keys=True, allow_unicode=True, default_flow_style=False
    )
    return f"{_FENCE}\n{dumped}{_FENCE}\n{content}"


@dataclass(frozen=True, slots=True)
class ParsedText:
    """A document's file text taken apart: metadata, body, where the body starts."""

    metadata: dict[str, Any]
    body: str
    first_line: int
    digest: str

    def paragraphs(self) -> list[Paragraph]:
        """The body's paragraphs with file line numbers."""
        return paragraphs(self.body, self.first_line)


def parse_text(text: str, *, strict: bool = False) -> ParsedText:
    """Parse a document's text leniently: front matter that cannot be read counts as body
    text; with ``strict``, it raises :class:`InvalidInputError` (:func:`split_front_matter`)."""
    try:
        metadata, body, offset = split_front_matter(text)
    except InvalidInputError:
        if strict:
            raise
        metadata, body, offset = {}, text, 0
    return ParsedText(metadata, body, offset + 1, digest(text))


def digest(text: str) -> str:
    """The fingerprint of a document's text, byte for byte (front matter, comments and
    spacing included): what compare-and-swap and sync compare. The SHA-256 of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def paragraphs(body: str, first_line: int = 1) -> list[Paragraph]:
    """Cut a Markdown body into paragraphs (blank-line separated, code fences kept whole).

    Heading lines set the heading of the paragraphs that follow (and are searched with
    them); a heading with nothing under it is no paragraph: a passage has content.
    ``first_line`` is the file line number of the body's first line.
    """
    out: list[Paragraph] = []
    block: list[str] = []
    heading, start, in_code = "", 0, False
    for number, line in enumerate(body.split("\n"), start=first_line):
        if _CODE_FENCE.match(line):
            in_code = not in_code
        match = None if in_code else _HEADING.match(line)
        if match or (not line.strip() and not in_code):
            _flush(out, heading, block, start)
            block = []
            heading = match.group(2) if match else heading
            continue
        if not block:
            start = number
        block.append(line)
    _flush(out, heading, block, start)
    return out


def is_heading(text: str) -> bool:
    """Whether ``text`` is one Markdown heading line and nothing else."""
    return "\n" not in text.strip() and _HEADING.match(text.strip()) is not None


def _flush(out: list[Paragraph], heading: str, block: list[str], start: int) -> None:
    if block:
        out.append(Paragraph(heading, "\n".join(block), start, start + len(block) - 1))


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob: ``*`` and ``?`` stay in one component, ``**`` spans many."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            char = pattern[i]
            out.append({"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char)))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def check_glob(pattern: str) -> str:
    """Return ``pattern`` unless it could reach outside the root (``..``, absolute, NUL)."""
    if "\x00" in pattern or pattern.startswith("/") or ".." in pattern.split("/"):
        raise PathEscapeError(f"glob must stay inside the document root: {pattern!r}")
    return pattern


def literal_prefix(pattern: str) -> str:
    """The part of a glob before its first wildcard (for an indexed prefix scan)."""
    return re.split(r"[*?\[]", pattern, maxsplit=1)[0]


def fts_query(query: str) -> str:
    """Turn free text into a safe FTS5 expression: its :func:`words` quoted, OR-ed together."""
    return " OR ".join(f'"{word}"' for word in words(query))


def words(query: str) -> list[str]:
    """The words of ``query`` a keyword search sends (for engines that take a word list):
    the first :data:`~engram.recall.MAX_SEARCH_TERMS` distinct ones of its first
    :data:`~engram.recall.MAX_QUERY_CHARS` characters, stop words last, as the cold tier
    picks them (:func:`~engram.recall.first_terms`)."""
    return first_terms(_WORD.findall(query[:MAX_QUERY_CHARS]))


def fuse(rankings: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion of separately retrieved rankings, best first."""
    return sorted(rrf(rankings).items(), key=lambda item: (-item[1], item[0]))
