"""``LongTermStore.remember_many``: many facts at the embedder's batch rate.

Each fact goes through what :meth:`LongTermStore.remember` does (write policy and
poisoning guard, slot inference, consolidation, storage), in order. What a batch
changes is only when texts are embedded: the guard's segments and the stored texts
of ``batch_size`` facts are embedded in one call, by a worker thread that embeds the
next batch while this one is screened and stored (the embedder releases the GIL, so
the model runs on one core while the patterns and the store run on the other).
While the first batch embeds (and the model loads), the guard compiles its patterns
and embeds its banks, as its first screened fact would have it do later.
Screening and embedding depend on no stored data, so they may run ahead;
consolidation reads the store, so each fact is decided after every fact before it
is written. A batch's facts are decided and written in one transaction, holding the
namespace (the backend's reads inside it see the batch's earlier writes): nothing of
a batch is stored, nor reported to ``progress``, unless all of it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram import _validate as check
from engram.errors import InvalidInputError
from engram.policy import WritePolicy
from engram.recall import Embedder, RecentEmbeddings
from engram.stores.cold._note import Note
from engram.stores.cold._turns import TurnWindow
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
    stored: Callable[[list[WriteResult]], object] | None = None,
    window: TurnWindow | None = None,
) -> list[WriteResult]:
    """Every fact checked first (an error names its index), then stored batch by batch;
    ``stored`` gets each committed batch's results, then ``progress`` its size; each
    fact is embedded from what ``window`` makes of its text (its text alone by default)."""
    check.integer("batch_size", batch_size, minimum=1)
    window = window or TurnWindow(0)
    noted = [_noted(store, namespace, i, fact) for i, fact in enumerate(facts)]
    batches = [noted[i : i + batch_size] for i in range(0, len(noted), batch_size)]
    results: list[WriteResult] = []
    with ThreadPoolExecutor(1, thread_name_prefix="engram-embed") as worker:
        ahead: Future[Callable[[], None]] | None = None
        try:
            for index, batch in enumerate(batches):
                ahead = ahead or worker.submit(_hold_guard_texts, store, batch)
                if index == 0:
                    _warm_guard(store)  # while the worker embeds (and loads its model)
                embedded, ahead = ahead, None
                release = embedded.result()
                if index + 1 < len(batches):  # embedded while this batch is screened, stored
                    ahead = worker.submit(_hold_guard_texts, store, batches[index + 1])
                try:
                    ready = _prepare(store, batch, window)
                finally:
                    release()
                committed = _store_batch(store, namespace, ready)
                results += committed
                if stored is not None:
                    stored(committed)
                if progress is not None:
                    progress(len(ready))
        finally:
            if ahead is not None and not ahead.cancel():
                ahead.add_done_callback(_release_when_done)
    return results


def _release_when_done(done: Future[Callable[[], None]]) -> None:
    """Release what a batch left behind (an error stopped the call) holds."""
    if not done.cancelled() and done.exception() is None:
        done.result()()


def _noted(
    store: LongTermStore, namespace: Namespace, index: int, fact: object
) -> tuple[Note, str | None]:
    if not isinstance(fact, NewFact):
        raise InvalidInputError(f"item {index}: expected a NewFact, got {type(fact).__name__}")
    try:
        return store._noted(namespace, fact)
    except InvalidInputError as exc:
        raise InvalidInputError(f"item {index}: {exc}") from exc


def _prepare(
    store: LongTermStore, batch: Sequence[tuple[Note, str | None]], window: TurnWindow
) -> list[_Ready]:
    """Screen ``batch`` (the guard's texts are held embedded already), then embed the
    texts to store in one call (most of them the guard's: kept, not embedded again),
    each with the turns before it when ``window`` says so (refused facts are no turn)."""
    screened = [(*store._ready(note, key), key) for note, key in batch]
    texts = [
        window.embedded(note.text, note.extra) if refusal is None else ""
        for note, refusal, _ in screened
    ]
    vectors = _embedded(store.embedder, texts)
    return [
        _Ready(note, key, refusal, vector)
        for (note, refusal, key), vector in zip(screened, vectors, strict=True)
    ]


def _hold_guard_texts(
    store: LongTermStore, batch: Sequence[tuple[Note, str | None]]
) -> Callable[[], None]:
    """Embed in one call what the poisoning guard will embed for ``batch``, kept until
    the returned ``release()`` (nothing when the guard's embedder keeps no vectors)."""
    embedder = _guard_embedder(store)
    if not isinstance(embedder, RecentEmbeddings):
        return _nothing
    texts = _guard_texts(store, batch)
    return embedder.hold(texts) if texts else _nothing


def _nothing() -> None:
    return None


def _embedded(embedder: Embedder | None, texts: list[str]) -> list[Vector | None]:
    """A vector for each non-empty text (one call for them all), ``None`` for the rest."""
    wanted = [t for t in texts if t]
    if embedder is None or not wanted:
        return [None] * len(texts)
    found = iter(embedder.embed(wanted))
    return [next(found) if t else None for t in texts]


def _store_batch(
    store: LongTermStore, namespace: Namespace, batch: Sequence[_Ready]
) -> list[WriteResult]:
    """Decide and write ``batch`` in order, in one transaction (refusals write nothing)."""
    if all(ready.refusal is not None for ready in batch):
        return [_store(store, ready) for ready in batch]
    with store._holding(namespace):  # the user's fence first, as every write takes it
        return [_store(store, ready) for ready in batch]


def _store(store: LongTermStore, ready: _Ready) -> WriteResult:
    if ready.refusal is not None:
        return ready.refusal
    return store._decide(ready.note, ready.key, ready.vector)


def _guard_embedder(store: LongTermStore) -> Embedder | None:
    policy = store.policy
    return policy.guard.embedder if isinstance(policy, WritePolicy) else None


def _warm_guard(store: LongTermStore) -> None:
    """Have the poisoning guard compile its patterns and embed its banks now, as the
    first fact it screens would (nothing for another policy)."""
    policy = store.policy
    if isinstance(policy, WritePolicy) and policy.hold_instructions:
        policy.guard.warm()


def _guard_texts(store: LongTermStore, batch: Sequence[tuple[Note, str | None]]) -> list[str]:
    """What the poisoning guard will embed for ``batch`` (nothing for another policy)."""
    policy = store.policy
    if not isinstance(policy, WritePolicy) or not policy.hold_instructions:
        return []
    return [t for note, _ in batch for t in policy.guard.embedded_texts(note.text)]
