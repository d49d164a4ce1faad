"""``LongTermStore``: a LangGraph ``BaseStore`` over a :class:`ColdBackend`, with the
memory API (remember / recall / update / forget / history) on top.

Every method is written once, synchronously, against the backend; each async
twin runs the same method in a worker thread (:func:`_in_thread`).
"""

from __future__ import annotations

import asyncio
import functools
import secrets
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Concatenate, ParamSpec, TypeVar, get_args

from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from engram import _validate as check
from engram._principal import Principal, tenant_scope
from engram._retry import on_conflict
from engram.errors import HeldForReviewError, InvalidInputError, NotFoundError
from engram.policy import WriteCandidate, redact
from engram.recall import (
    DEFAULT_CONTEXT,
    DEFAULT_MIN_SIMILARITY,
    ContextBoost,
    Embedder,
    RecentEmbeddings,
    Weights,
    clear_keyword_caches,
    is_relevant,
    pool_size,
    stem,
)
from engram.recall.filters import parse_filter
from engram.stores.cold import _pipeline as pipe
from engram.stores.cold._batch import remember_batches
from engram.stores.cold._candidates import (
    Hit,
    Ranking,
    candidates,
    cosines_of,
    in_context,
)
from engram.stores.cold._consolidation import (
    Action,
    Existing,
    Fact,
    Resolution,
    Resolver,
    RuleResolver,
)
from engram.stores.cold._excerpts import ExcerptCache
from engram.stores.cold._labels import EngramLabels
from engram.stores.cold._note import Note
from engram.stores.cold._slots import infer_slot
from engram.stores.cold._sweeper import Sweeper
from engram.stores.cold._turns import TurnRule, TurnWindow
from engram.stores.cold.contract import (
    ChangeSet,
    Closure,
    ColdBackend,
    Excerpt,
    NewVersion,
    Scan,
    Vector,
)
from engram.stores.cold.records import (
    ForgetReport,
    MemoryRecord,
    Namespace,
    NewFact,
    Provenance,
    Recalled,
    Sensitivity,
    Source,
    View,
    WriteAction,
    WriteResult,
    utc,
)

P = ParamSpec("P")
R = TypeVar("R")

TEXT_CACHES = 3
"""The caches of memory text every store keeps: keyword stems and counts, excerpts."""
Target = Principal | Namespace


def _in_thread(method: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """The async twin of a sync method: the same code, run in a worker thread."""

    async def twin(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, *args, **kwargs)

    twin.__name__ = "a" + method.__name__
    twin.__qualname__ = twin.__name__
    twin.__doc__ = f"Async form of :meth:`{method.__name__}` (runs it in a worker thread)."
    return twin


@contextmanager
def _acting(namespace: Namespace) -> Iterator[None]:
    """Act for ``namespace``'s tenant (its first label) while a call runs, so a backend
    that enforces tenants in the database scopes its by-id statements; an empty
    namespace keeps the caller's :func:`~engram.tenant_scope`."""
    if not namespace:
        yield
        return
    with tenant_scope(namespace[0]):
        yield


S = TypeVar("S", bound="LongTermStore")


def _for_target(
    method: Callable[Concatenate[S, Target, P], R],
) -> Callable[Concatenate[S, Target, P], R]:
    """A memory-API method run acting for its target's tenant (see :func:`_acting`)."""

    @functools.wraps(method)
    def scoped(self: S, target: Target, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with _acting(pipe.namespace_of(target)):
            return method(self, target, *args, **kwargs)

    return scoped


def _op_namespace(op: Op) -> Namespace:
    if isinstance(op, SearchOp):
        return tuple(op.namespace_prefix)
    if isinstance(op, ListNamespacesOp):
        return pipe.literal_prefix(op.match_conditions or ())
    return tuple(op.namespace)


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _slot_kept(value: dict[str, Any], previous: MemoryRecord) -> dict[str, Any]:
    """``value`` with ``previous``'s slot when it names none of its own: a new value that
    names no slot ("I now have a high risk tolerance") stays the attribute's, so the next
    statement of it supersedes this one."""
    slot = previous.value.get("slot")
    if "slot" in value or not isinstance(slot, str) or not slot:
        return value
    return {**value, "slot": slot}


def _new_id() -> str:
    """A fresh version id (random). Ties in recall are broken by id, so a run that must
    be reproducible (evaluation) passes a deterministic ``new_id`` instead."""
    return secrets.token_hex(16)


@dataclass(frozen=True, slots=True)
class Options:
    """Store behaviour; every field has a sensible default."""

    weights: Weights = field(default_factory=Weights)
    refresh_on_read: bool = False
    max_items_per_namespace: int | None = None
    index_fields: tuple[str, ...] | None = None
    candidates: int = 50
    consolidation_neighbours: int = 5
    min_similarity: float | None = DEFAULT_MIN_SIMILARITY
    """``recall`` returns nothing unless the best cosine reaches this or a content word
    of the query matches (``None``: no floor). LangGraph's ``search`` has no floor."""
    excerpt_cache: int = 16384
    """Candidate excerpts a re-ranked recall keeps in process for the next (0: none),
    within 16 Mi characters of text (:mod:`engram.stores.cold._excerpts`)."""


class LongTermStore(EngramLabels):
    """Long-term memory that drops into ``builder.compile(store=...)``.

    Build it on a backend (``memory://``, ``sqlite://``, ``postgresql://`` through
    :func:`engram.stores.cold.open_store`), then call ``setup()`` once.
    """

    supports_ttl = True

    def __init__(
        self,
        backend: ColdBackend,
        *,
        embedder: Embedder | None = None,
        options: Options | None = None,
        resolver: Resolver | None = None,
        policy: pipe.Policy | None = None,
        clock: Callable[[], datetime] = _utcnow,
        new_id: Callable[[], str] = _new_id,
    ) -> None:
        self.backend = backend
        self.embedder = embedder
        self.options = options or Options()
        self.resolver: Resolver = resolver or RuleResolver()
        self.policy = policy
        self._clock = clock
        self._erasures_seen: int | None = None
        self._new_id = new_id
        self._excerpts = ExcerptCache(self.options.excerpt_cache)

    def setup(self) -> None:
        """Create or migrate the backend's schema (idempotent); from here on a recall
        drops this process's caches after any erasure of the store (:meth:`forget`, in
        this process or another)."""
        self.backend.setup()
        self._erasures_seen = self.backend.erasures()

    def close(self) -> None:
        self.backend.close()

    def now(self) -> datetime:
        return utc(self._clock())

    # -- LangGraph BaseStore -----------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if self.embedder and any(isinstance(op, PutOp) and op.value is not None for op in ops):
            self._follow_erasures()  # once for the batch, before any put embeds
        return [self._op(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _op(self, op: Op) -> Result:
        pipe.check_op(op)
        with _acting(_op_namespace(op)):
            return self._run(op)

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, ListNamespacesOp):
            return self._list(op)
        raise InvalidInputError(f"unknown store operation {type(op).__name__}")

    def _get(self, op: GetOp) -> Item | None:
        head = self.backend.heads(tuple(op.namespace), [op.key]).get(op.key)
        if head is None or not head.is_live(self.now()):
            return None
        self._refresh([head], op.refresh_ttl)
        return _item(head)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        if op.query:
            found = self._recall(
                prefix, op.query, op.limit + op.offset, op.filter, (), View(self.now())
            )
            page = found[op.offset :]
            self._refresh([r.record for r in page], op.refresh_ttl)
            return [_item(r.record, r.score) for r in page]
        scan = Scan(prefix, View(self.now()), parse_filter(op.filter), (), op.limit, op.offset)
        rows = self.backend.scan(scan)
        self._refresh(rows, op.refresh_ttl)
        return [_item(r) for r in rows]

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        if op.value is None:  # (LangGraph's delete: an erasure, as forget(keys) is)
            self.forget(namespace, [op.key])
            return
        check.storable("value", op.value)

        def indexed(value: Mapping[str, Any]) -> str:
            fields = op.index or self.options.index_fields
            return "" if op.index is False else pipe.text_of(value, fields)

        value = self._admitted(op.value, indexed(op.value))
        text = indexed(value)
        ttl = None if op.ttl is None else check.span("ttl", op.ttl, "minutes")
        vector = self._embed(text)
        on_conflict(lambda: self._store(namespace, op.key, value, text, ttl=ttl, vector=vector))

    def _admitted(self, value: Mapping[str, Any], text: str, where: str = "") -> dict[str, Any]:
        """``value`` as a LangGraph ``put`` may store it under the store's write policy:
        refused (:class:`HeldForReviewError`, nothing written) when its indexed ``text``
        reads like an instruction to the agent, its strings PII-redacted otherwise. A put
        names no tags, source or ttl, so the policy's rules for those (``remember``'s)
        do not apply; and it has no review queue to wait in: the caller hears why."""
        if self.policy is None or not text.strip():
            return dict(value)
        held = _held_reason(self.policy, text)
        if held is not None:
            raise HeldForReviewError(f"{where}nothing was written: the value was {held}")
        kinds = getattr(self.policy, "redact_kinds", None)
        return dict(value) if kinds is None else _redacted(dict(value), tuple(kinds))

    def _list(self, op: ListNamespacesOp) -> list[Namespace]:
        conditions = op.match_conditions or ()
        found = self.backend.namespaces(pipe.literal_prefix(conditions))
        return pipe.list_namespaces(found, conditions, op.max_depth, op.limit, op.offset)

    def _refresh(self, records: Sequence[MemoryRecord], requested: bool = True) -> None:
        if not (self.options.refresh_on_read and requested):
            return
        now = self.now()  # (only what is live: an audit or as_of read revives nothing)
        expiry = tuple(
            (r.id, now + timedelta(seconds=r.ttl_seconds))
            for r in records
            if r.ttl_seconds and r.is_live(now)
        )
        if expiry:
            self.backend.apply(ChangeSet(expiry=expiry))

    # -- storing versions --------------------------------------------------------------

    def _store(
        self,
        namespace: Namespace,
        key: str,
        value: dict[str, Any],
        text: str,
        *,
        ttl: timedelta | None = None,
        expires_at: datetime | None = None,
        fields: Mapping[str, Any] | None = None,
        vector: Vector | None = None,
        keep_slot: bool = False,
    ) -> tuple[MemoryRecord, MemoryRecord | None]:
        """Write a new version of ``key`` (its vector embedded from ``text`` already),
        superseding the current one; return both. With ``keep_slot``, a ``value`` that
        names no slot takes the current version's (:func:`_slot_kept`)."""
        with self._holding(namespace):
            now = self.now()
            previous = self.backend.heads(namespace, [key]).get(key)
            if keep_slot and previous is not None:
                value = _slot_kept(value, previous)
            record = self._version(
                namespace, key, value, text, now, previous, ttl, expires_at, fields
            )
            if previous is not None and record.valid_from > now:
                raise InvalidInputError(
                    f"valid_from {record.valid_from.isoformat()} is in the future: a new value "
                    f"of {key!r} takes over from now or an earlier moment (until then the "
                    "current one would be hidden with nothing in its place)"
                )
            closures = (
                (Closure(previous.id, _end(previous, record), record.id),) if previous else ()
            )
            inserts = (NewVersion(record, vector),)
            self.backend.apply(ChangeSet(inserts=inserts, closures=closures))
        return record, previous

    def _version(
        self,
        namespace: Namespace,
        key: str,
        value: dict[str, Any],
        text: str,
        now: datetime,
        previous: MemoryRecord | None,
        ttl: timedelta | None,
        expires_at: datetime | None,
        fields: Mapping[str, Any] | None,
    ) -> MemoryRecord:
        extra = dict(fields or {})
        valid_from = utc(extra.pop("valid_from", None) or now)
        if ttl is not None:
            expires_at = now + ttl
        return MemoryRecord(
            id=self._new_id(),
            namespace=namespace,
            key=key,
            value=value,
            text=text,
            recorded_at=now,
            created_at=previous.created_at if previous else now,
            valid_from=valid_from,
            expires_at=None if expires_at is None else utc(expires_at),
            ttl_seconds=None if ttl is None else ttl.total_seconds(),
            embedding_model=self.embedder.model_id if self.embedder and text else None,
            **extra,
        )

    def _embed(self, text: str) -> Vector | None:
        return self.embedder.embed([text])[0] if self.embedder and text else None

    def put_many(
        self,
        items: Sequence[tuple[Namespace, str, Mapping[str, Any]]],
        *,
        turn_context: int = 0,
        turn_context_rule: TurnRule = "always",
    ) -> int:
        """Bulk insert of new ``(namespace, key, value)`` items in one embedding call and
        one transaction; returns the count.

        For loading data: unlike ``put`` it does not look for versions to supersede,
        so every key must be new in its namespace. With ``turn_context=n``, an item whose
        value names a ``session`` is embedded with the texts of the ``n`` items before
        it in that session of its namespace (its stored text stays its own; see ``_turns``),
        as ``turn_context_rule`` says (``"always"`` or ``"shorter"``).
        """
        now = self.now()
        fields = self.options.index_fields
        for i, (_, _, value) in enumerate(items):
            check.storable(f"item {i} value", value)
        items = [
            (ns, key, self._admitted(v, pipe.text_of(v, fields), f"item {i}: "))
            for i, (ns, key, v) in enumerate(items)
        ]
        texts = [pipe.text_of(v, fields) for _, _, v in items]
        namespaces = [pipe.namespace_of(ns) for ns, _, _ in items]
        window = TurnWindow(turn_context, turn_context_rule)
        embedded = [
            window.embedded(t, v, ns)
            for t, ns, (_, _, v) in zip(texts, namespaces, items, strict=True)
        ]
        if self.embedder and texts:
            self._follow_erasures()
        vectors = self.embedder.embed(embedded) if self.embedder and texts else None
        model = self.embedder.model_id if self.embedder else None
        inserts = tuple(
            NewVersion(
                MemoryRecord(
                    self._new_id(),
                    ns,
                    key,
                    dict(value),
                    text,
                    now,
                    now,
                    now,
                    embedding_model=model,
                ),
                None if vectors is None else vectors[i],
            )
            for i, ((_, key, value), ns, text) in enumerate(
                zip(items, namespaces, texts, strict=True)
            )
        )
        self.backend.apply(ChangeSet(inserts=inserts))
        return len(inserts)

    # -- the memory API ------------------------------------------------------------------

    @_for_target
    def remember(
        self,
        target: Target,
        text: str,
        *,
        key: str | None = None,
        slot: str | None = None,
        value: Mapping[str, Any] | None = None,
        tags: Sequence[str] = (),
        source: Source = "user",
        sensitivity: Sensitivity = "normal",
        importance: float = 0.5,
        ttl: timedelta | None = None,
        expires_at: datetime | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        provenance: Provenance | None = None,
    ) -> WriteResult:
        """Write policy → redaction → consolidation → storage; says what happened.

        ``slot`` names what the fact is about (``"home_city"``): a new fact in a
        slot supersedes the old one. An explicit ``key`` always updates that key.
        ``valid_from`` / ``valid_to`` bound when the fact held (default: from now on).
        """
        fact = NewFact(
            text, key, slot, value, tags, source, sensitivity, importance, ttl,
            expires_at, valid_from, valid_to, provenance,
        )  # fmt: skip
        note, key = self._noted(pipe.namespace_of(target), fact)
        note, refusal = self._ready(note, key)
        if refusal is not None:
            return refusal
        if self.embedder:
            self._follow_erasures()  # a writer that never recalls keeps no erased text either
        vector = self._embed(note.text)
        if key is not None:
            return on_conflict(lambda: self._write_key(note, key, vector))
        return on_conflict(lambda: self._consolidate(note, vector))

    @_for_target
    def remember_many(
        self,
        target: Target,
        facts: Sequence[NewFact],
        *,
        batch_size: int = 32,
        progress: Callable[[int], object] | None = None,
        stored: Callable[[list[WriteResult]], object] | None = None,
        turn_context: int = 0,
        turn_context_rule: TurnRule = "always",
    ) -> list[WriteResult]:
        """:meth:`remember` for each of ``facts``, in order, with the same results: every
        fact is checked before any is written, then ``batch_size`` facts at a time are
        embedded in one call (the next batch while this one is stored) and each is
        screened, then consolidated against what is stored by then (an earlier fact of
        the same call included); a batch is written in one transaction, and
        ``progress(n)`` is called once its ``n`` facts are committed (``stored``, with
        their results: what an error in a later batch leaves acknowledged).

        With ``turn_context=n``, a fact whose value names a ``session`` is embedded with
        the texts (as stored, after redaction) of the ``n`` facts before it in that
        session that the policy let through, as ``turn_context_rule`` says; only its
        vector changes (see ``_turns``)."""
        namespace = pipe.namespace_of(target)
        window = TurnWindow(turn_context, turn_context_rule)
        self._follow_erasures()
        return remember_batches(self, namespace, facts, batch_size, progress, stored, window)

    def check_fact(self, target: Target, fact: NewFact) -> None:
        """Raise :class:`InvalidInputError` when :meth:`remember` would refuse ``fact``'s
        arguments (what :meth:`remember_many` checks of every fact before writing any);
        nothing is read or written."""
        if not isinstance(fact, NewFact):
            raise InvalidInputError(f"expected a NewFact, got {type(fact).__name__}")
        self._noted(pipe.namespace_of(target), fact)

    def _noted(self, namespace: Namespace, fact: NewFact) -> tuple[Note, str | None]:
        """``fact`` checked, as a note on its way in, and its explicit key."""
        note = Note(
            namespace,
            check.text("text", fact.text),
            check.optional_text("slot", fact.slot),
            _stored_value(fact.value),
            check.texts("tags", fact.tags),
            check.choice("source", fact.source, get_args(Source)),
            check.choice("sensitivity", fact.sensitivity, get_args(Sensitivity)),
            check.number("importance", fact.importance, low=0.0, high=1.0),
            check.duration("ttl", fact.ttl),
            self._ahead("expires_at", fact.expires_at),
            check.moment("valid_from", fact.valid_from),
            _provenance(fact.provenance),
            valid_to=_valid_to(fact),
        )
        return note, check.optional_text("key", fact.key)

    def _ahead(self, name: str, moment: object) -> datetime | None:
        """``moment`` if it is a datetime still to come (an expiry that has passed would
        store a fact no one sees, and end the current one it replaces)."""
        when = check.moment(name, moment)
        if when is not None and utc(when) <= self.now():
            raise InvalidInputError(f"{name} {when.isoformat()} has passed")
        return when

    def _ready(self, note: Note, key: str | None) -> tuple[Note, WriteResult | None]:
        """The note after the write policy (and its slot read from the text when it
        has neither key nor slot), or the policy's refusal."""
        note, refusal = self._screen(note)
        unnamed = refusal is None and key is None and note.slot is None
        if unnamed and (inferred := infer_slot(note.text)):
            note = replace(note, slot=inferred, slot_inferred=True)
        return note, refusal

    def _decide(self, note: Note, key: str | None, vector: Vector | None) -> WriteResult:
        """Store a screened note: as :meth:`remember` does, the resolver deciding while
        the namespace is held (once: a batch does not mind holding it)."""
        if key is not None:
            return on_conflict(lambda: self._write_key(note, key, vector))

        def held() -> WriteResult:
            fact = Fact(note.text, note.slot, note.tags, note.slot_inferred)
            with self._holding(note.namespace):
                found = self.resolver.resolve(fact, self._neighbours(note, vector))
                return self._enact(note, found, vector)

        return on_conflict(held)

    def _write_key(self, note: Note, key: str, vector: Vector | None) -> WriteResult:
        with self._holding(note.namespace):
            exists = key in self.backend.heads(note.namespace, [key])
            resolution = Resolution(Action.UPDATE if exists else Action.ADD, key, "explicit key")
            return self._enact(note, resolution, vector)

    def _consolidate(self, note: Note, vector: Vector | None) -> WriteResult:
        """Decide against the neighbours and write, both while holding the namespace: the
        resolver (perhaps a model) runs first outside, and again inside only if the
        neighbours changed meanwhile."""
        fact = Fact(note.text, note.slot, note.tags, note.slot_inferred)
        seen = self._neighbours(note, vector)
        resolution = self.resolver.resolve(fact, seen)
        with self._holding(note.namespace):
            current = self._neighbours(note, vector)
            if [e.record.id for e in current] != [e.record.id for e in seen]:
                resolution = self.resolver.resolve(fact, current)
            return self._enact(note, resolution, vector)

    def update(self, target: Target, key: str, text: str, **fields: Any) -> WriteResult:
        """Write a new version of an existing ``key`` (the old one stays in history); its
        tags, source, sensitivity and importance are the current version's unless given."""
        namespace = pipe.namespace_of(target)
        key = check.text("key", key, line=True)
        current = self.backend.heads(namespace, [key]).get(key)
        if current is None:
            raise NotFoundError(f"no memory {key!r} in {namespace}")
        kept = {
            "tags": current.tags,
            "source": current.source,
            "sensitivity": current.sensitivity,
            "importance": current.importance,
        }
        return self.remember(target, text, key=key, **{**kept, **fields})

    @_for_target
    def recall(
        self,
        target: Target,
        query: str,
        *,
        k: int = 10,
        tags: Sequence[str] = (),
        filter: Mapping[str, Any] | None = None,
        min_score: float = 0.0,
        as_of: datetime | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        weights: Weights | None = None,
        context: ContextBoost | None = DEFAULT_CONTEXT,
    ) -> list[Recalled]:
        """Recall under ``target``'s namespace, best first.

        Keyword and vector candidates are fused by rank and cosine; a pool of them sized
        from the memory (``ContextBoost.pool``) is re-scored with stemmed keywords, the
        speakers and dates the query names (``context``; :mod:`engram.recall._context`),
        then ranked ``alpha*recency + beta*importance + gamma*relevance``; nothing when
        nothing is relevant (``Options.min_similarity``). Scores are calibrated: the top
        item scores how well the best candidate matches the query (absolute cosine and
        keyword coverage, :mod:`engram.recall._calibrate`), so ``min_score`` (e.g.
        ``DEFAULT_MIN_SCORE``) means the same for every query. ``context=None`` is plain
        hybrid recall (scores relative to the candidates). Expired and superseded facts
        are left out unless asked; ``as_of`` returns what was valid then.
        """
        check.text("query", query, blank=True)
        check.integer("k", k, minimum=1)
        tags = check.texts("tags", tags)
        parse_filter(check.mapping("filter", filter))  # (checked before any work)
        check.number("min_score", min_score)
        check.moment("as_of", as_of)
        check.flag("include_expired", include_expired)
        check.flag("include_superseded", include_superseded)
        check.instance("weights", weights, Weights)
        check.instance("context", context, ContextBoost)
        now = self.now()
        view = View(now, None if as_of is None else utc(as_of), include_expired, include_superseded)
        namespace = pipe.namespace_of(target)
        if context is None:
            found = self._recall(namespace, query, k, filter, tuple(tags), view, weights, True)
        else:
            scope = (namespace, filter, tuple(tags), view, weights)
            found = self._in_context(scope, query, k, context)
        kept = [r for r in found if r.score >= min_score]
        self._refresh([r.record for r in kept])
        return kept

    def records(
        self,
        target: Target,
        view: View | None = None,
        *,
        tags: Sequence[str] = (),
        limit: int = 10,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        """Versions under ``target`` that ``view`` admits (default: live ones now), carrying
        any of ``tags`` when given; newest first, ``limit`` from ``offset``."""
        namespace = pipe.namespace_of(target)
        view = check.instance("view", view, View) or View(self.now())
        tags = check.texts("tags", tags)
        limit = check.integer("limit", limit, minimum=1)
        offset = check.integer("offset", offset, minimum=0)
        return self.backend.scan(Scan(namespace, view, (), tags, limit, offset))

    def history(self, target: Target, key: str) -> list[MemoryRecord]:
        """Every version of ``key``, oldest first (superseded ones included)."""
        namespace = pipe.namespace_of(target)
        return self.backend.history(namespace, check.text("key", key, line=True))

    @_for_target
    def retract(self, target: Target, key: str) -> MemoryRecord:
        """End the current version of ``key`` now: it leaves recall, its history stays
        (:class:`NotFoundError` when ``key`` holds no current version)."""
        namespace = pipe.namespace_of(target)
        key = check.text("key", key, line=True)
        with self._holding(namespace):
            head = self.backend.heads(namespace, [key]).get(key)
            if head is None or not head.is_live(self.now()):
                raise NotFoundError(f"no current memory {key!r} in {namespace}")
            self.backend.apply(ChangeSet(closures=(Closure(head.id, self.now(), None),)))
        return head

    @contextmanager
    def _holding(self, namespace: Namespace) -> Iterator[None]:
        """Hold ``namespace`` for one write: its user's fence (an erasure of the user waits
        for the write, or the write for the erasure), then the backend's lock."""
        with self.backend.fence.writing(namespace), self.backend.atomically(namespace):
            yield

    def forget(
        self, target: Target, keys: Sequence[str] | None = None, *, compact: bool = True
    ) -> ForgetReport:
        """Erase ``keys`` (or everything under ``target``): rows, history, keyword
        entries, vectors and caches; ``compact`` makes the bytes unrecoverable."""
        namespace = pipe.namespace_of(target)
        chosen = check.optional_texts("keys", keys)
        check.flag("compact", compact)
        with self.backend.fence.erasing(namespace[:2]):  # no write commits meanwhile
            counts = self.backend.erase(namespace, None if chosen is None else list(chosen))
        caches, compacted = self._after_erasure(compact, drop=counts.versions > 0)
        return ForgetReport(
            namespace,
            counts.keys,
            counts.versions,
            counts.vectors,
            counts.keyword_entries,
            caches,
            compacted,
        )

    def sweep(self) -> int:
        """Delete expired versions now; returns how many were removed. Their bytes go as an
        erasure's do (caches cleared, storage compacted): an expiry is a promise to forget."""
        removed = self.backend.sweep(self.now())
        if removed:
            self._after_erasure(compact=True)
        return removed

    def _after_erasure(self, compact: bool, *, drop: bool = True) -> tuple[int, bool]:
        """What follows rows erased: every cache of their text dropped (when ``drop``: an
        erasure of nothing has nothing to drop), and the storage compacted when asked
        (whether it was: always, so a second ``forget`` finishes a first one's compaction).
        The count is of the caches emptied, not of those that held something: what other
        users' reads left in the process's caches is none of the caller's business."""
        caches = 0
        if drop:
            self.backend.clear_caches()
            caches = 1 + self._drop_text_caches()
            self._erasures_seen = self.backend.erasures()
        return caches, self.backend.compact() if compact else False

    def start_sweeper(self, interval_seconds: float = 3600.0) -> Sweeper:
        """Sweep expired versions every ``interval_seconds`` in a daemon thread; returns
        the running :class:`Sweeper` (``stop()`` it, or use it as a context manager)."""
        return Sweeper(self.sweep, interval_seconds).start()

    def re_embed(
        self,
        embedder: Embedder,
        *,
        batch_size: int = 256,
        progress: Callable[[int], object] | None = None,
    ) -> int:
        """Re-embed every version not embedded with ``embedder``; then use it. Returns the
        count; ``progress(n)`` is called after each batch of ``n`` versions."""
        done = 0
        while batch := self.backend.stale(embedder.model_id, batch_size):
            vectors = embedder.embed([r.text for r in batch])
            self.backend.set_vectors([r.id for r in batch], vectors, embedder.model_id)
            done += len(batch)
            if progress is not None:
                progress(len(batch))
        self.embedder = embedder
        return done

    aremember = _in_thread(remember)
    aupdate = _in_thread(update)
    arecall = _in_thread(recall)
    ahistory = _in_thread(history)
    aforget = _in_thread(forget)
    asweep = _in_thread(sweep)
    are_embed = _in_thread(re_embed)

    # -- internals -----------------------------------------------------------------------

    def _recall(
        self,
        prefix: Namespace,
        query: str,
        k: int,
        filter_: Mapping[str, Any] | None,
        tags: tuple[str, ...],
        view: View,
        weights: Weights | None = None,
        floor: bool = False,
    ) -> list[Recalled]:
        """The best ``k`` fused candidates, with their records."""
        self._follow_erasures()
        hits, _ = self._pool(prefix, query, k, filter_, tags, view, weights, floor)
        return self._with_records([(h, h.score, h.relevance) for h in hits])

    def _drop_text_caches(self) -> int:
        """Drop the in-process caches of memory text: the keyword scorer's stems and
        counts, the embedder's recent vectors, recall's candidate excerpts (how many
        caches: full or not)."""
        clear_keyword_caches()
        self._excerpts.clear()
        if isinstance(self.embedder, RecentEmbeddings):
            self.embedder.clear()
            return TEXT_CACHES + 1
        return TEXT_CACHES

    def _follow_erasures(self) -> None:
        """Before a recall or an embedding write: when the store committed an erasure
        since this store last looked (another process's ``forget``; a store never set up
        here has not looked yet), drop the caches keyed by text, so none keeps what the
        erasure removed (the backend's own caches follow its files: an erased vector
        leaves them)."""
        seen = self.backend.erasures()
        if seen != self._erasures_seen:
            self._drop_text_caches()
            self._erasures_seen = seen

    def _with_records(self, ranked: Sequence[tuple[Hit, float, float]]) -> list[Recalled]:
        """``(hit, score, relevance)`` as :class:`Recalled`, in order (a hit whose version
        is gone meanwhile is left out)."""
        records = {r.id: r for r in self.backend.fetch([h.id for h, _, _ in ranked])}
        return [
            Recalled(
                records[h.id],
                score,
                relevance,
                h.recency,
                h.importance,
                h.similarity,
                h.keyword_rank,
                h.vector_rank,
            )
            for h, score, relevance in ranked
            if h.id in records
        ]

    def _pool(
        self,
        prefix: Namespace,
        query: str,
        k: int,
        filter_: Mapping[str, Any] | None,
        tags: tuple[str, ...],
        view: View,
        weights: Weights | None = None,
        floor: bool = False,
        sized: Callable[[int], int] | None = None,
        read: bool = False,
    ) -> tuple[list[Hit], dict[str, Excerpt]]:
        """The best ``k`` fused candidates, records not read (with ``read``, the
        candidates' excerpts, which carry their signals); with ``sized``, each search
        returns ``k`` candidates and ``sized(visible memories)`` says how many to keep."""
        scan = Scan(prefix, view, parse_filter(filter_), tags)
        n = max(self.options.candidates, k if sized else 4 * k)
        complete = sized is not None
        keyword, vector = candidates(self.backend, self.embedder, scan, query, n, complete)
        if floor and not is_relevant(query, keyword, vector, self.options.min_similarity):
            return [], {}
        if sized is not None:
            k = sized(len(vector) if self.embedder is not None and len(vector) < n else n)
        relevance = pipe.fuse(keyword, vector)
        excerpts = self._excerpts.read(list(relevance), self.backend.excerpts) if read else {}
        signals = (
            {i: (e.recorded_at, e.importance) for i, e in excerpts.items()}
            if read
            else self.backend.signals(list(relevance))
        )
        best = pipe.score(signals, relevance, weights or self.options.weights, view.now)[:k]
        cosines = dict(vector)
        by_keyword = {row: n for n, row in enumerate(keyword, 1)}
        by_vector = {row: n for n, (row, _) in enumerate(vector, 1)}
        hits = [
            Hit(
                i,
                value,
                rel,
                rec,
                signals[i][1],
                cosines.get(i),
                by_keyword.get(i),
                by_vector.get(i),
            )
            for i, value, rel, rec in best
        ]
        return hits, excerpts

    def _in_context(
        self, scope: tuple[Any, ...], query: str, k: int, boost: ContextBoost
    ) -> list[Recalled]:
        """The candidates of a pool sized from the memory, re-ranked (``in_context``):
        the pool's excerpts are read, whole records only for the best ``k``."""
        namespace, filter_, tags, view, weights = scope
        self._follow_erasures()
        probe = pool_size(boost, None, k)

        def sized(visible: int) -> int:
            return pool_size(boost, visible, k)

        def cosines(text: str, ids: Sequence[str]) -> dict[str, float]:
            """The cosines of ``text`` (the topic's) with the candidates ``ids``."""
            scan = Scan(namespace, view, parse_filter(filter_), tags)
            return cosines_of(self.backend, self.embedder, scan, text, ids)

        floor = self.options.min_similarity
        calibration = DEFAULT_MIN_SIMILARITY if floor is None else floor
        known = frozenset(stem(part.lower()) for part in namespace)
        rank = Ranking(weights or self.options.weights, calibration, view.now.date(), known)
        pooled = (namespace, query, probe, filter_, tags, view, weights)
        hits, excerpts = self._pool(*pooled, floor=True, sized=sized, read=True)
        found = [(h, excerpts[h.id]) for h in hits]
        return self._with_records(in_context(query, found, boost, cosines, rank, k))

    def _screen(self, note: Note) -> tuple[Note, WriteResult | None]:
        if not note.text or not note.text.strip():
            raise InvalidInputError("a memory needs non-empty text")
        if self.policy is None:
            return note, None
        life = note.ttl  # (an expiry named as a moment is bounded as a ttl is)
        if life is None and note.expires_at is not None:
            life = utc(note.expires_at) - self.now()
        ttl_days = None if life is None else life.total_seconds() / 86400
        candidate = WriteCandidate(note.text, note.tags, note.source, note.sensitivity, ttl_days)
        decision = self.policy.evaluate(candidate)
        redacted = replace(note, text=decision.text, redactions=tuple(decision.redactions))
        if decision.held_for_review:
            reason = decision.reason or "held for review"
            return redacted, WriteResult("held", reason=reason, redactions=redacted.redactions)
        if not decision.allowed:
            reason = decision.reason or "rejected by the write policy"
            return redacted, WriteResult("rejected", reason=reason, redactions=redacted.redactions)
        return redacted, None

    def _neighbours(self, note: Note, qvec: Vector | None) -> list[Existing]:
        """The current facts ``note`` is consolidated against: those of its slot, then the
        nearest by vector and by keyword; only those of its speaker (a ``speaker`` value,
        or none for the user's own facts): "I" and "my" in one speaker's turn say nothing
        of what another said."""
        view = View(self.now())
        speaker = note.extra.get("speaker")
        said = {"speaker": speaker} if isinstance(speaker, str) else {}
        scan = Scan(note.namespace, view, parse_filter(said))
        n = self.options.consolidation_neighbours
        slot = parse_filter({"slot": note.slot, **said}) if note.slot else ()
        same_slot = self.backend.scan(Scan(note.namespace, view, slot, limit=n)) if slot else []
        sims: dict[str, float] = {}
        if self.embedder is not None and qvec is not None:
            sims = dict(self.backend.vector_candidates(scan, qvec, self.embedder.model_id, n))
        ids = [i for i in self.backend.keyword_candidates(scan, note.text, n) if i not in sims]
        near = self.backend.fetch([*sims, *ids])
        near.sort(key=lambda r: -sims.get(r.id, 0.0))
        seen: set[str] = set()
        out = []
        for record in [*same_slot, *near]:
            said_by = record.value.get("speaker")
            if record.namespace == note.namespace and record.id not in seen and said_by == speaker:
                seen.add(record.id)
                out.append(Existing(record, sims.get(record.id, 0.0)))
        return out

    def _enact(self, note: Note, resolution: Resolution, vector: Vector | None) -> WriteResult:
        target = resolution.target
        if resolution.action in (Action.ADD, Action.UPDATE):
            key = target or self._new_id()
            record, previous = self._store(
                note.namespace,
                key,
                note.value(),
                note.text,
                ttl=note.ttl,
                expires_at=note.expires_at,
                fields={**note.fields(), "valid_to": note.valid_to},  # (one write: closed)
                vector=vector,
                keep_slot=resolution.action is Action.UPDATE,
            )
            action: WriteAction = "updated" if previous is not None else "added"
            evicted = self._enforce_cap(note.namespace, key)
            return WriteResult(
                action, record, resolution.reason, previous, note.redactions, evicted
            )
        head = self.backend.heads(note.namespace, [target or ""]).get(target or "")
        if head is None:
            raise NotFoundError(f"consolidation targeted unknown key {target!r}")
        if resolution.action is Action.NOOP:
            return WriteResult("noop", head, resolution.reason, None, note.redactions)
        self.backend.apply(ChangeSet(closures=(Closure(head.id, self.now(), None),)))
        return WriteResult("deleted", None, resolution.reason, head, note.redactions)

    def _enforce_cap(self, namespace: Namespace, keep: str) -> tuple[str, ...]:
        cap = self.options.max_items_per_namespace
        if cap is None:
            return ()
        now = self.now()
        rows = [
            r
            for r in self.backend.scan(Scan(namespace, View(now), limit=2 * cap + 16))
            if r.namespace == namespace
        ]
        if len(rows) <= cap:
            return ()
        ranked = pipe.rank(rows, {}, self.options.weights, now)
        doomed = tuple(r.record.key for r in reversed(ranked) if r.record.key != keep)
        doomed = doomed[: len(rows) - cap]
        self.backend.erase(namespace, list(doomed))
        return doomed


def _provenance(provenance: object) -> Provenance:
    """``provenance`` (or none) with every id checked: ids land in SQL and exports."""
    found = check.instance("provenance", provenance, Provenance) or Provenance()
    check.optional_text("thread_id", found.thread_id)
    check.optional_text("checkpoint_id", found.checkpoint_id)
    check.texts("message_ids", found.message_ids)
    return found


def _end(previous: MemoryRecord, record: MemoryRecord) -> datetime:
    """When ``previous`` stops being valid as ``record`` supersedes it: when ``record``
    starts (a value backdated before ``previous`` began leaves it empty, never an interval
    that ends before it starts), or the end it had already (retracted, or stored with a
    ``valid_to``): a later write never re-opens it."""
    ends = max(record.valid_from, previous.valid_from)
    return ends if previous.valid_to is None else min(ends, previous.valid_to)


def _valid_to(fact: NewFact) -> datetime | None:
    """``fact.valid_to``, after its ``valid_from`` (which a closed version must give)."""
    valid_to = check.moment("valid_to", fact.valid_to)
    if valid_to is None:
        return None
    start = check.moment("valid_from", fact.valid_from)
    if start is None or utc(valid_to) <= utc(start):
        raise InvalidInputError("valid_to needs a valid_from before it")
    return utc(valid_to)


def _held_reason(policy: pipe.Policy, text: str) -> str | None:
    """Why ``policy`` holds ``text`` for review, or None: its poisoning guard alone when it
    has one (a put is no fact with tags to check), else its whole verdict."""
    guard = getattr(policy, "guard", None)
    if guard is not None and callable(getattr(guard, "judge", None)):
        if not getattr(policy, "hold_instructions", True):
            return None
        hold = guard.judge(text)
        return None if hold is None else f"held for review: {hold.describe()}"
    decision = policy.evaluate(WriteCandidate(text, ("fact",)))
    return (decision.reason or "held for review") if decision.held_for_review else None


def _redacted(value: Any, kinds: tuple[str, ...]) -> Any:
    """``value`` with every string in it PII-redacted (mapping keys kept)."""
    if isinstance(value, str):
        return redact(value, kinds)[0]
    if isinstance(value, Mapping):
        return {key: _redacted(item, kinds) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(item, kinds) for item in value]
    return value


def _item(record: MemoryRecord, score: float | None = None) -> SearchItem:
    return SearchItem(
        record.namespace,
        record.key,
        dict(record.value),
        record.created_at,
        record.recorded_at,
        score,
    )


def _stored_value(value: object) -> dict[str, Any]:
    """A fact's ``value`` mapping, checked to be storable on every backend."""
    mapping = dict(check.mapping("value", value) or {})
    check.storable("value", mapping)
    return mapping
