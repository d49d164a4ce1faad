"""The retrieved context as it is handed to a model, and packing it into a token budget.

Every method's retrieved turns are rendered the same way, so budgets compare retrieval,
not formatting: a delimited block, turns grouped by session in time order under one
header carrying the session's date, one ``speaker: text`` line per turn. Content is
escaped so a stored turn cannot close the block (recalled memory is data).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engram.eval._data import Turn
from engram.eval._tokens import TokenCounter

OPEN = "<memory>"
CLOSE = "</memory>"


def escape(text: str) -> str:
    """Neutralise block delimiters and line structure inside a stored text."""
    return text.replace("<", "‹").replace(">", "›").replace("\n", " ")


def header(turn: Turn) -> str:
    return f"## {escape(turn.date)} (session {escape(turn.session)})"


def line(turn: Turn) -> str:
    return f"{escape(turn.speaker)}: {escape(turn.text)}"


def render(turns: Iterable[Turn], order: Sequence[str] | None = None) -> str:
    """Render turns grouped by session; sessions and turns keep ``order`` (default: given order)."""
    chosen = list(turns)
    if order is not None:
        rank = {turn_id: i for i, turn_id in enumerate(order)}
        chosen.sort(key=lambda t: rank.get(t.id, len(rank)))
    lines = [OPEN]
    current = None
    for turn in chosen:
        if turn.session != current:
            current = turn.session
            lines.append(header(turn))
        lines.append(line(turn))
    lines.append(CLOSE)
    return "\n".join(lines)


@dataclass(frozen=True)
class Packed:
    """The turns that fit a budget and the tokens their rendered context takes."""

    ids: tuple[str, ...]
    tokens: int


class Packer:
    """Fits ranked turns of one haystack into token budgets, counting the rendered block.

    Each line is counted with its newline; the cost of a turn is its line plus, for
    the first turn of its session, the session header. Pre-tokenisation splits at
    newlines, so the sum matches the count of the rendered block (a test pins it).
    """

    def __init__(self, turns: Sequence[Turn], counter: TokenCounter) -> None:
        self._turns = {t.id: t for t in turns}
        counts = counter.count([line(t) + "\n" for t in turns])
        self._line = {t.id: n for t, n in zip(turns, counts, strict=True)}
        sessions = {t.session: t for t in turns}
        heads = counter.count([header(t) + "\n" for t in sessions.values()])
        self._header = dict(zip(sessions, heads, strict=True))
        self._frame = sum(counter.count([OPEN + "\n", CLOSE]))

    def full(self) -> Packed:
        """Everything: the full-context baseline."""
        tokens = self._frame + sum(self._line.values()) + sum(self._header.values())
        return Packed(tuple(self._turns), tokens)

    def pack(self, ranked: Sequence[str], budget: int) -> Packed:
        """Take ranked turns while they fit (skipping any that would overflow)."""
        used = self._frame
        seen: set[str] = set()
        taken: list[str] = []
        for turn_id in ranked:
            session = self._turns[turn_id].session
            need = self._line[turn_id] + (0 if session in seen else self._header[session])
            if used + need <= budget:
                taken.append(turn_id)
                seen.add(session)
                used += need
        return Packed(tuple(taken), used if taken else 0)

    def text(self, packed: Packed) -> str:
        """The rendered block, in time order (the order the haystack was given)."""
        chosen = set(packed.ids)
        return render(t for t in self._turns.values() if t.id in chosen)
