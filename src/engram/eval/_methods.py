"""The retrieval methods compared side by side, all behind one small interface.

Every method indexes the same turns of one user and returns turn ids ranked best
first. Baselines index each turn as its rendered ``speaker: text`` line; the dense
baseline and engram share one (cached) embedder, so the comparison is fair.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engram.errors import MissingDependencyError
from engram.eval._context import line
from engram.eval._data import Question, Turn
from engram.recall import Embedder, Vectors


class Method(ABC):
    """A retrieval method under evaluation: index a user's turns, rank them for a question."""

    name: str

    @abstractmethod
    def index(self, user: str, turns: Sequence[Turn]) -> None:
        """Store ``turns`` as the memory of ``user`` (called once per user)."""

    @abstractmethod
    def search(self, user: str, question: Question, k: int) -> list[str]:
        """Ids of up to ``k`` of ``user``'s turns, best first."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (files, connections)."""


class CachedEmbedder:
    """Wraps an embedder so a text is embedded once per run, whichever method asks.

    With ``path``, vectors persist in an ``.npz`` file (texts as a unicode array, no
    pickle) tagged with the model id, so repeated runs skip embedding; call :meth:`save`.
    """

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        self._inner = inner
        self._path = path
        self._cache: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        self._dirty = False
        if path is not None and path.is_file():
            self._load(path)

    def _load(self, path: Path) -> None:
        with np.load(path, allow_pickle=False) as data:
            if str(data["model"]) != self._inner.model_id:
                return
            self._cache = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def save(self) -> None:
        """Write the vectors to ``path`` (if any were added)."""
        if self._path is None or not self._dirty:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        texts = list(self._cache)
        vectors = np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.dim))
        with self._path.open("wb") as handle:
            np.savez(handle, model=np.array(self.model_id), texts=np.array(texts), vectors=vectors)
        self._dirty = False

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for text, row in zip(missing, self._inner.embed(missing), strict=True):
                self._cache[text] = row
            self._dirty = True
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._cache[text]
        return out


class BM25Method(Method):
    """Keyword only: Okapi BM25 (``bm25s``, English stop words, no stemmer)."""

    name = "bm25"

    def __init__(self) -> None:
        self._indexes: dict[str, tuple[Any, list[str]]] = {}

    def index(self, user: str, turns: Sequence[Turn]) -> None:
        bm25s = _bm25s()
        tokens = bm25s.tokenize([line(t) for t in turns], stopwords="en", show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        self._indexes[user] = (retriever, [t.id for t in turns])

    def search(self, user: str, question: Question, k: int) -> list[str]:
        retriever, ids = self._indexes[user]
        tokens = _bm25s().tokenize(
            question.text, stopwords="en", show_progress=False, return_ids=False
        )
        scores = retriever.get_scores(tokens[0]) if tokens and tokens[0] else np.zeros(len(ids))
        order = np.argsort(-np.asarray(scores), kind="stable")
        return [ids[i] for i in order[:k] if scores[i] > 0]


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:
        raise MissingDependencyError("the BM25 baseline needs bm25s: pip install bm25s") from exc
    return bm25s


class LangGraphDenseMethod(Method):
    """Dense only, the way most LangGraph users do it: ``InMemoryStore`` with an index config."""

    name = "dense (LangGraph InMemoryStore)"

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._store: Any = None

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [row.tolist() for row in self._embedder.embed(texts)]

    def index(self, user: str, turns: Sequence[Turn]) -> None:
        from langgraph.store.memory import InMemoryStore

        if self._store is None:
            config = {"dims": self._embedder.dim, "embed": self._embed, "fields": ["text"]}
            self._store = InMemoryStore(index=config)  # type: ignore[arg-type]
        # Embed all texts in one call first (the cache then serves each put). One put per
        # item, as users write: InMemoryStore.batch fails on duplicate texts in one batch
        # ("Number of embeddings ... does not match number of indices", langgraph 1.2).
        self._embedder.embed([line(t) for t in turns])
        for turn in turns:
            self._store.put(("eval", user), turn.id, {"text": line(turn)})

    def search(self, user: str, question: Question, k: int) -> list[str]:
        hits = self._store.search(("eval", user), query=question.text, limit=k)
        return [hit.key for hit in hits]
