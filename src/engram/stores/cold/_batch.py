"""``LongTermStore.remember_many``: many facts at the embedder's batch rate.

Each fact goes through what :meth:`LongTermStore.remember` does (write policy and
poisoning guard, slot inference, consolidation, storage), in order. What a batch
changes is only when texts are embedded: the guard's segments and the stored texts
of ``batch_size`` facts are embedded in one call, by a worker thread that prepares
the next batch while this one is stored (the embedder and SQLite both release the
GIL). Screening and embedding depend on no stored data, so they may run ahead;
consolidation reads the store, so each fact is decided and written in its own
transaction, after every fact before it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram import _validate as check
from engram.errors import InvalidInputError
from engram.policy import WritePolicy
from engram.recall import Embedder, RecentEmbeddings
from engram.stores.cold._note import Note
from engram.stores.cold.contract import Vector
from engram.stores.cold.records import Namespace, NewFact, WriteResult

if TYPE_CHECKING:
    from engram.stores.cold._store import LongTermStore


@dataclass(frozen=True, slots=True)
class _Ready:
    """A fact screened and embedded, waiting for its turn to be stored."""

    note: Note
    key: str | None
    refusal: WriteResult | None
    vector: Vector | None


def remember_batches(
    store: LongTermStore,
    namespace: Namespace,
    facts: Sequence[NewFact],
    batch_size: int,
    progress: Callable[[int], object] | None = None,
) -> list[WriteResult]:
    """Every fact checked first (an error names its index), then stored batch by batch."""
    check.integer("batch_size", batch_size, minimum=1)
    noted = [_noted(store, namespace, i, fact) for i, fact in enumerate(facts)]
    batches = [noted[i : i + batch_size] for i in range(0, len(noted), batch_size)]
    results: list[WriteResult] = []
    with ThreadPoolExecutor(1, thread_name_prefix="engram-embed") as worker:
        ahead: Future[list[_Ready]] | None = None
        for index, _ in enumerate(batches):
            ready = ahead.result() if ahead else _prepare(store, batches[index])
            following = batches[index + 1] if index + 1 < len(batches) else None
            ahead = worker.submit(_prepare, store, following) if following else None
            results += [_store(store, r) for r in ready]
            if progress is not None:
                progress(len(ready))
    return results


def _noted(
    store: LongTermStore, namespace: Namespace, index: int, fact: object
) -> tuple[Note, str | None]:
    if not isinstance(fact, NewFact):
        raise InvalidInputError(f"item {index}: expected a NewFact, got {type(fact).__name__}")
    try:
        return store._noted(namespace, fact)
    except InvalidInputError as exc:
        raise InvalidInputError(f"item {index}: {exc}") from exc


def _prepare(store: LongTermStore, batch: Sequence[tuple[Note, str | None]]) -> list[_Ready]:
    """Screen and embed ``batch``: the guard's texts in one call, then the stored ones."""
    with _holding(_guard_embedder(store), _guard_texts(store, batch)):
        screened = [(*store._ready(note, key), key) for note, key in batch]
        texts = [note.text if refusal is None else "" for note, refusal, _ in screened]
        vectors = _embedded(store.embedder, texts)
    return [
        _Ready(note, key, refusal, vector)
        for (note, refusal, key), vector in zip(screened, vectors, strict=True)
    ]


def _embedded(embedder: Embedder | None, texts: list[str]) -> list[Vector | None]:
    """A vector for each non-empty text (one call for them all), ``None`` for the rest."""
    wanted = [t for t in texts if t]
    if embedder is None or not wanted:
        return [None] * len(texts)
    found = iter(embedder.embed(wanted))
    return [next(found) if t else None for t in texts]


def _store(store: LongTermStore, ready: _Ready) -> WriteResult:
    if ready.refusal is not None:
        return ready.refusal
    return store._decide(ready.note, ready.key, ready.vector)


def _guard_embedder(store: LongTermStore) -> Embedder | None:
    policy = store.policy
    return policy.guard.embedder if isinstance(policy, WritePolicy) else None


def _guard_texts(store: LongTermStore, batch: Sequence[tuple[Note, str | None]]) -> list[str]:
    """What the poisoning guard will embed for ``batch`` (nothing for another policy)."""
    policy = store.policy
    if not isinstance(policy, WritePolicy) or not policy.hold_instructions:
        return []
    return [t for note, _ in batch for t in policy.guard.embedded_texts(note.text)]


@contextmanager
def _holding(embedder: Embedder | None, texts: list[str]) -> Iterator[None]:
    """Keep ``texts`` embedded in one call while the block runs, when ``embedder``
    keeps vectors (:class:`RecentEmbeddings`); otherwise each is embedded when asked."""
    with ExitStack() as stack:
        if isinstance(embedder, RecentEmbeddings) and texts:
            stack.enter_context(embedder.holding(texts))
        yield
