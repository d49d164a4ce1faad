"""The memory layer: one API over the hot, cold and document tiers.

:class:`Memory` composes the tiers for one :class:`~engram.Principal` at a time:
``recall`` builds a context block within a token budget, ``remember`` writes a
fact through the write policy with its provenance, ``forget`` erases a user from
every tier and ``export`` returns everything engram holds about them.
:class:`AsyncMemory` runs the same code in a worker thread.

Constructing either touches nothing; :meth:`Memory.open` (or ``setup()``) opens
the tiers and :meth:`Memory.close` releases them::

    with Memory.open(home="./.engram") as memory:
        memory.remember(principal, "Prefers a conservative risk profile", slot="risk")
        print(memory.recall(principal, "risk tolerance", budget_tokens=300).text)
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from engram import _validate as check
from engram._principal import Principal, tenant_scope
from engram.config import DEFAULT_HOME, AppRole
from engram.errors import (
    BackendError,
    ConfigError,
    EngramError,
    InvalidInputError,
    NotFoundError,
    PolicyRejectedError,
)
from engram.memory import _records as rec
from engram.memory._records import (
    PROFILE_TAGS,
    BranchReport,
    ErasureReport,
    Observation,
    RecallResult,
    RememberResult,
)
from engram.memory._review import HeldWrite, find_held, held_entry, parse_entry
from engram.memory._tiers import (
    ErasureParticipant,
    Locations,
    answering,
    erase_participants,
    open_documents,
    participants,
)
from engram.policy import PoisoningGuard, WritePolicy, redact
from engram.recall import (
    DEFAULT_MIN_SCORE,
    DEFAULT_MIN_SIMILARITY,
    Embedder,
    RecentEmbeddings,
    embedder_from_name,
    is_relevant_item,
)
from engram.stores.audit import ErasureLog, audit_beside, local_actor, record_of
from engram.stores.cold import (
    LongTermStore,
    MemoryRecord,
    NewFact,
    Provenance,
    Resolver,
    Sensitivity,
    Source,
    View,
    WriteResult,
    backend_for,
)
from engram.stores.documents import DocumentStore
from engram.stores.documents.review import (
    held_entries,
    outside_review,
    queue_held,
    remove_entry,
)
from engram.stores.hot import Threads, open_checkpointer
from engram.tokens import TokenCounter

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_BUDGET = 800
"""Tokens a context block may take when the caller does not say."""

_PAGE = 500
_PROFILE = 50
"""At most this many profile facts in one block (as :meth:`Memory.profile` returns)."""


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Memory:
    """The memory layer over the tiers named by ``where`` (see :meth:`open`)."""

    def __init__(
        self,
        where: Locations,
        *,
        embedder: Embedder | str | None = None,
        policy: WritePolicy | None = None,
        clock: Callable[[], datetime] = _utcnow,
        fact_ttl: timedelta | None = None,
        counter: TokenCounter | None = None,
        participants: Sequence[ErasureParticipant] = (),
        resolver: Resolver | None = None,
    ) -> None:
        self.where = where
        self.resolver = resolver
        self.embedder = _embedder(embedder)
        self.policy = policy or WritePolicy(guard=PoisoningGuard(self.embedder))
        self.clock = clock
        self.fact_ttl = fact_ttl
        self.counter = counter
        self.participants = tuple(participants)
        self._stack: ExitStack | None = None
        self._store: LongTermStore | None = None
        self._saver: BaseCheckpointSaver[Any] | None = None
        self._docs: DocumentStore | None = None
        self._opened: Locations | None = None
        self._audit: ErasureLog | None = None
        self._reviewing = threading.Lock()  # approvals and discards take turns

    def add_participant(self, participant: ErasureParticipant) -> None:
        """Have :meth:`forget` erase ``participant`` too (once, however often added)."""
        if participant not in self.participants:
            self.participants = (*self.participants, participant)

    # -- opening -----------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        home: str | Path | None = None,
        *,
        url: str | None = None,
        app_role: AppRole | None = None,
        admin: bool = True,
        hot_url: str | None = None,
        **options: Any,
    ) -> Memory:
        """Open the tiers: embedded under ``home`` (default ``./.engram``: SQLite
        checkpoints, SQLite store, Markdown files) or all on ``url`` (PostgreSQL).

        On PostgreSQL ``url`` is an admin's by default: every tier's schema and the
        application role ``app_role`` (default ``engram_app``: no superuser, no
        ``BYPASSRLS``) are set up with it (idempotent), then every tier runs as that
        role, under row-level security. ``admin=False``: ``url`` is the application
        role's own (the schema set up beforehand), and the tiers run as it is.
        ``hot_url`` puts the hot tier on its own URL (e.g. ``redis://host:6379/0``), the
        other tiers staying where ``home`` / ``url`` put them.

        ``options`` go to the constructor (``embedder=``, ``policy=``, ``clock=``,
        ``fact_ttl=``, ``counter=``, ``participants=``: other stores :meth:`forget`
        erases, see :class:`ErasureParticipant`; ``resolver=``: how a new fact is
        consolidated, :class:`RuleResolver` by default, or an ``LLMResolver``).
        """
        if home is not None and url is not None:
            raise ConfigError("give home= or url=, not both")
        if url is not None:
            where = Locations.from_url(url, app_role, setup=admin)
        else:
            where = Locations.embedded(home if home is not None else DEFAULT_HOME)
        if hot_url is not None:
            where = replace(where, hot_url=hot_url)
        memory = cls(where, **options)
        memory.setup()
        return memory

    def setup(self) -> None:
        """Open every tier and create or migrate its schema (idempotent)."""
        if self._stack is not None:
            return
        where = self.where.as_app_role()
        with ExitStack() as stack:
            store = LongTermStore(
                backend_for(where.cold_url),
                embedder=self.embedder,
                policy=self.policy,
                clock=self.clock,
                resolver=self.resolver,
            )
            store.setup()
            stack.callback(store.close)
            self._saver = stack.enter_context(open_checkpointer(where.hot_url))
            self._docs = open_documents(where, self.embedder, stack)
            self._audit = audit_beside(where.cold_url)
            if self._audit is not None:
                stack.callback(self._audit.close)
            self._store = store
            self._opened = where
            self._stack = stack.pop_all()

    def close(self) -> None:
        """Release every tier's connections."""
        if self._stack is not None:
            self._stack.close()
        self._stack = self._store = self._saver = self._docs = self._opened = None
        self._audit = None

    def __enter__(self) -> Memory:
        self.setup()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def opened_at(self) -> Locations:
        """Where the open tiers are, as opened: on PostgreSQL the application role's URLs
        (what a component beside the memory, such as an agent's outbox, connects with)."""
        return _opened(self._opened)

    @property
    def erasure_log(self) -> ErasureLog | None:
        """The log each whole-user :meth:`forget` is recorded in (kept with the cold
        tier: its SQLite file or PostgreSQL database); ``None`` when the cold tier has
        no place for one (Qdrant, in-process) or the tiers are not open."""
        return self._audit

    @property
    def store(self) -> LongTermStore:
        """The cold tier (a LangGraph ``BaseStore``)."""
        return _opened(self._store)

    @property
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """The hot tier (a LangGraph checkpoint saver)."""
        return _opened(self._saver)

    @property
    def documents(self) -> DocumentStore:
        """The document tier."""
        return _opened(self._docs)

    def now(self) -> datetime:
        return self.store.now()

    # -- remember / recall -------------------------------------------------------------

    def remember(
        self,
        principal: Principal,
        observation: str,
        *,
        slot: str | None = None,
        tags: Sequence[str] = ("fact",),
        source: Source = "user",
        sensitivity: Sensitivity = "normal",
        importance: float = 0.5,
        ttl: timedelta | None = None,
        thread_id: str | None = None,
        checkpoint_id: str | None = None,
        message_ids: Sequence[str] = (),
        quote: str | None = None,
        key: str | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        expires_at: datetime | None = None,
    ) -> RememberResult:
        """Write policy, redaction, consolidation, storage; says what happened and why.

        ``slot`` names what the fact is about (``"risk_tolerance"``): a new value in
        a slot supersedes the old one, which stays visible with ``as_of``; with no slot,
        one is read from statements like "My risk tolerance is ..." (the result's reason
        says so). Provenance (thread, checkpoint, message ids, and ``quote``: the user's
        words the fact was extracted from, redacted like the fact) is stored with it.
        ``key`` writes a new version of that fact (no consolidation); ``valid_from`` /
        ``valid_to`` bound when the fact held, ``expires_at`` when it is dropped.
        """
        check.principal(principal)
        seen = Observation(
            observation, slot, tags, source, sensitivity, importance, ttl, thread_id,
            checkpoint_id, message_ids, quote, key, valid_from, valid_to, expires_at,
        )  # fmt: skip
        fact = self._new_fact(seen)
        result = self.store.remember(principal, fact.text, **_arguments(fact))
        queue_held(self.documents, principal, *self._held_entries([(seen, fact, result)]))
        return rec.to_remembered(result)

    def remember_many(
        self,
        principal: Principal,
        items: Iterable[Observation | str],
        *,
        batch_size: int = 32,
        progress: Callable[[int], object] | None = None,
    ) -> list[RememberResult]:
        """:meth:`remember` for each item (an :class:`Observation`, or a text with the
        defaults), in order, with the same results, at the embedder's batch rate: every
        item is checked before any is written (an error names its index), then
        ``batch_size`` items are embedded in one call while the batch before is stored.
        An item is consolidated against everything stored before it, earlier items of the
        same call included (a later value in a slot supersedes an earlier one).
        ``progress(n)`` is called after each batch of ``n`` items is stored, and the writes
        that batch held have joined the review queue by then (one write of the queue per
        batch that held any): what an error or a killed process stops later keeps them."""
        check.principal(principal)
        seen = [_observation(i, item) for i, item in enumerate(items)]
        facts = [self._new_fact(item, index) for index, item in enumerate(seen)]
        results: list[WriteResult] = []

        def stored(batch: list[WriteResult]) -> None:
            start = len(results)
            results.extend(batch)
            done = zip(seen[start:], facts[start:], batch, strict=False)
            queue_held(self.documents, principal, *self._held_entries(list(done)))

        self.store.remember_many(
            principal, facts, batch_size=batch_size, progress=progress, stored=stored
        )
        return [rec.to_remembered(result) for result in results]

    def check_fact(self, principal: Principal, item: Observation | str) -> None:
        """Raise :class:`InvalidInputError` when :meth:`remember` would refuse ``item``'s
        arguments, reading and writing nothing: every check :meth:`remember_many` makes
        of an item before it writes any, for a caller that checks the items of several
        users first (``engram import``)."""
        check.principal(principal)
        self.store.check_fact(principal, self._new_fact(_observation(0, item)))

    def _new_fact(self, seen: Observation, index: int | None = None) -> NewFact:
        """The cold tier's record of ``seen``: its provenance checked, the quote redacted."""
        try:
            said = check.optional_text("quote", seen.quote)
            provenance = Provenance(
                check.optional_text("thread_id", seen.thread_id),
                check.optional_text("checkpoint_id", seen.checkpoint_id),
                check.texts("message_ids", seen.message_ids),
                None if said is None else redact(said, self.policy.redact_kinds)[0],
            )
            self._plain_ids(seen)
        except InvalidInputError as exc:
            where = "" if index is None else f"item {index}: "
            raise InvalidInputError(f"{where}{exc}") from exc
        return NewFact(
            seen.text, seen.key, seen.slot, None, seen.tags, seen.source, seen.sensitivity,
            seen.importance, _ttl(seen.ttl, seen.expires_at, self.fact_ttl),
            seen.expires_at, seen.valid_from, seen.valid_to, provenance,
        )  # fmt: skip

    def _plain_ids(self, seen: Observation) -> None:
        """Refuse a key or provenance id that reads like an instruction to the agent: recall
        prints them in each memory's attributes, beside the text the guard screened. An id
        without a space carries no sentence, and is not read."""
        if not self.policy.hold_instructions:
            return
        named = [("key", seen.key), ("thread_id", seen.thread_id)]
        named += [("checkpoint_id", seen.checkpoint_id)]
        named += [("message_ids", message) for message in seen.message_ids]
        for name, value in named:
            if isinstance(value, str) and len(value.split()) > 1:
                hold = self.policy.guard.judge(value)
                if hold is not None:
                    raise InvalidInputError(
                        f"{name} reads like an instruction to the agent ({hold.describe()}): "
                        "ids name facts, threads and messages"
                    )

    def _held_entries(self, done: Sequence[tuple[Observation, NewFact, WriteResult]]) -> list[str]:
        """The review queue's entries for the held writes among ``done``, in order."""
        return [
            held_entry(
                self.now(),
                redact(seen.text, self.policy.redact_kinds)[0],
                result.reason or "held for review",
                fact.provenance or Provenance(),
                slot=seen.slot,
                source=seen.source,
                tags=seen.tags,
                key=seen.key,
            )
            for seen, fact, result in done
            if result.action == "held"
        ]

    def held_for_review(self, principal: Principal) -> list[str]:
        """The user's writes held by the poisoning guard (never recalled), oldest first."""
        check.principal(principal)
        return held_entries(self.documents, principal)

    def review_queue(self, principal: Principal) -> list[HeldWrite]:
        """The user's held writes with their ids, oldest first (:meth:`held_for_review`
        gives the same entries as queue lines)."""
        check.principal(principal)
        return [parse_entry(line) for line in held_entries(self.documents, principal)]

    def approve_held(self, principal: Principal, held_id: str) -> RememberResult:
        """Store the held fact ``held_id`` as a person approved it: the write it was, through
        the rest of the write policy (no poisoning guard; its source trusted) and
        consolidation, with its provenance; then it leaves the queue. A write the policy
        still refuses stays queued and raises :class:`~engram.errors.PolicyRejectedError`.

        The fact is stored before the entry leaves the queue, so a crash in between leaves
        it queued, never lost; approving it again then finds the stored fact (a no-op), and
        so does a second approver racing the first. Approvals and discards in one
        process take turns, so a write discarded while it was being approved is never
        stored."""
        with self._reviewing:
            entry = self._held(principal, held_id, approving=True)
            result = self._approving_store(entry.source).remember(
                principal,
                entry.text,
                slot=entry.slot,
                tags=entry.tags,
                source=entry.source,
                ttl=self.fact_ttl,
                provenance=entry.provenance,
                key=entry.key,
            )
            if result.action in ("rejected", "held"):
                raise PolicyRejectedError(f"not stored: {result.reason or result.action}")
            remove_entry(self.documents, principal, entry.line)
        return rec.to_remembered(result)

    def discard_held(self, principal: Principal, held_id: str) -> HeldWrite:
        """Remove the held write ``held_id`` from the user's review queue; returns it."""
        with self._reviewing:
            entry = self._held(principal, held_id, approving=False)
            if not remove_entry(self.documents, principal, entry.line):
                raise NotFoundError(f"no held write {held_id!r} in the review queue")
        return entry

    def _held(self, principal: Principal, held_id: str, *, approving: bool) -> HeldWrite:
        entry = find_held(self.review_queue(principal), check.text("held_id", held_id))
        if approving and entry.kind != "fact":
            raise InvalidInputError(
                f"held write {entry.id} is a document ({entry.path}): the queue keeps only its "
                "redacted text; discard it and write the document again"
            )
        return entry

    def _approving_store(self, source: Source) -> LongTermStore:
        """The cold tier as an approval writes to it: the guard off, ``source`` trusted."""
        policy = dataclasses.replace(
            self.policy,
            hold_instructions=False,
            trusted_sources=self.policy.trusted_sources | {source},
        )
        store = self.store
        return LongTermStore(
            store.backend,
            embedder=store.embedder,
            options=store.options,
            resolver=store.resolver,
            policy=policy,
            clock=self.clock,
        )

    def profile(self, principal: Principal, as_of: datetime | None = None) -> list[MemoryRecord]:
        """The user's profile facts (tagged profile / preference / constraint), newest first."""
        check.principal(principal)
        view = View(self.now(), check.moment("as_of", as_of))
        return self.store.records(principal, view, tags=PROFILE_TAGS, limit=_PROFILE)

    def recall(
        self,
        principal: Principal,
        query: str,
        budget_tokens: int = DEFAULT_BUDGET,
        *,
        k: int = 8,
        passages: int = 4,
        as_of: datetime | None = None,
        include_profile: bool | None = None,
        min_score: float = DEFAULT_MIN_SCORE,
    ) -> RecallResult:
        """A context block for the next model call, within ``budget_tokens``.

        Profile facts (exact lookups) first, then recalled memories with their scores
        and provenance, then document passages (scored as memories are, shown only
        when at least ``min_score``); rendered as escaped, delimited
        untrusted data. ``k`` facts and ``passages`` document paragraphs are candidates;
        ``as_of`` asks what was true at that time (documents have no history: left out).

        ``include_profile``: ``True`` puts every profile fact in the block, ``False``
        none; by default only those that answer ``query`` (scored as recalled memories
        are, at least ``min_score``; all of them when the query is blank). Recalled
        memories scoring under ``min_score`` are left out (scores are calibrated across
        queries: ``engram.recall.DEFAULT_MIN_SCORE``; 0 keeps all ``k``). So a question
        nothing answers gets an empty block.
        """
        check.principal(principal)
        check.text("query", query, blank=True)
        check.integer("budget_tokens", budget_tokens, minimum=1)
        check.integer("k", k, minimum=1)
        check.integer("passages", passages, minimum=0)
        check.moment("as_of", as_of)
        if include_profile is not None:
            check.flag("include_profile", include_profile)
        check.number("min_score", min_score)
        profile = self._profile_for(principal, query, as_of, include_profile, min_score)
        found = (
            self.store.recall(principal, query, k=k, as_of=as_of, min_score=min_score)
            if query.strip()
            else []
        )
        items = [
            *rec.profile_items(profile),
            *rec.memory_items(found, {r.key for r in profile}),
        ]
        if passages > 0 and query.strip() and as_of is None:
            hits = outside_review(self.documents.search(principal, query, k=passages))
            floor = self.store.options.min_similarity
            centre = DEFAULT_MIN_SIMILARITY if floor is None else floor
            items += rec.document_items(answering(query, hits, self.embedder, centre, min_score))
        return rec.pack(items, budget_tokens, self.counter)

    def _profile_for(
        self,
        principal: Principal,
        query: str,
        as_of: datetime | None,
        include: bool | None,
        min_score: float,
    ) -> list[MemoryRecord]:
        """The profile facts for ``query``: all of them when asked (or the query is
        blank), else those that answer it as a recalled memory must (a calibrated score
        of at least ``min_score``) and pass the relevance floor on their own."""
        if include is False:
            return []
        if include or not query.strip():
            return self.profile(principal, as_of)
        found = self.store.recall(
            principal, query, k=_PROFILE, tags=PROFILE_TAGS, as_of=as_of, min_score=min_score
        )
        floor = self.store.options.min_similarity
        return [
            r.record for r in found if is_relevant_item(query, r.record.text, r.similarity, floor)
        ]

    def history(self, principal: Principal, key: str) -> list[MemoryRecord]:
        """Every version of one fact, oldest first."""
        check.principal(principal)
        return self.store.history(principal, key)

    def facts(self, principal: Principal, *, include_history: bool = True) -> list[MemoryRecord]:
        """Every fact version held for ``principal`` (superseded and expired too, by default)."""
        check.principal(principal)
        check.flag("include_history", include_history)
        view = View(self.now(), include_expired=include_history, include_superseded=include_history)
        found: list[MemoryRecord] = []
        while page := self.store.records(principal, view, limit=_PAGE, offset=len(found)):
            found += page
            if len(page) < _PAGE:
                break
        return found

    # -- documents -----------------------------------------------------------------------

    def conventions(self, principal: Principal) -> list[str]:
        """The project's conventions: the bullet lines of ``conventions/*.md``."""
        check.principal(principal)
        lines: list[str] = []
        for info in self.documents.list(principal, "conventions/**"):
            body = self.documents.read(principal, info.path).content
            lines += [ln[2:].strip() for ln in body.splitlines() if ln.startswith(("- ", "* "))]
        return lines

    # -- threads and branches ------------------------------------------------------------

    def threads(self, principal: Principal) -> list[str]:
        """Ids of the user's threads in the checkpoint store, newest first."""
        check.principal(principal)
        with tenant_scope(principal.tenant_id):
            return [t.thread_id for t in Threads(self.checkpointer).list_threads(principal)]

    def lineage(
        self, principal: Principal, thread_id: str, keep: str | None = None
    ) -> tuple[str, ...]:
        """Checkpoint ids from ``keep`` (default: the thread's latest checkpoint) back to
        its first: the lineage a rewind or fork keeps."""
        check.principal(principal)
        with tenant_scope(principal.tenant_id):
            history = Threads(self.checkpointer).history(thread_id, principal)
        parents = {c.checkpoint_id: c.parent_id for c in history}
        if keep is not None and keep not in parents:
            raise NotFoundError(f"no checkpoint {keep!r} in thread {thread_id!r}")
        chain: list[str] = []
        current = keep or (history[0].checkpoint_id if history else None)
        while current is not None and current not in chain:
            chain.append(current)
            current = parents.get(current)
        return tuple(chain)

    def branch_facts(
        self, principal: Principal, thread_id: str, keep: str | None = None
    ) -> BranchReport:
        """Current facts written from ``thread_id`` at checkpoints outside its kept lineage:
        a rewound branch, or (with ``keep`` = the checkpoint a fork started from) whatever
        the source thread did after the fork."""
        check.principal(principal)
        kept = self.lineage(principal, thread_id, keep)
        orphans = tuple(
            r
            for r in self.facts(principal, include_history=False)
            if r.provenance.thread_id == thread_id
            and r.provenance.checkpoint_id is not None
            and r.provenance.checkpoint_id not in kept
        )
        return BranchReport(thread_id, kept, orphans)

    def discard_branch(
        self, principal: Principal, thread_id: str, keep: str | None = None
    ) -> BranchReport:
        """Erase the facts :meth:`branch_facts` finds (every version of their keys)."""
        check.principal(principal)
        found = self.branch_facts(principal, thread_id, keep)
        by_namespace: dict[tuple[str, ...], list[str]] = {}
        for record in found.facts:
            by_namespace.setdefault(record.namespace, []).append(record.key)
        removed = 0
        for namespace, keys in by_namespace.items():
            removed += self.store.forget(namespace, keys).keys
        return BranchReport(thread_id, found.kept_checkpoints, found.facts, removed)

    # -- erasure and export ---------------------------------------------------------------

    def forget(
        self,
        principal: Principal,
        keys: Sequence[str] | None = None,
        *,
        actor: str | None = None,
    ) -> ErasureReport:
        """Erase ``keys``, or (by default) everything about the user from every tier: facts
        and their history, the user's documents, threads, indexes and caches, and from
        every erasure participant (the publication outbox under the home, if there is one,
        and those given as ``participants=``).

        A whole-user erasure is then recorded in :attr:`erasure_log` (ids, time and
        counts, never content), naming ``actor`` as who asked (default
        ``library:<login>``); when the record cannot be written the user is erased
        already and :class:`~engram.errors.BackendError` says so.

        Within this process, no write of the user's facts (``remember``, the LangGraph
        store's ``put``, the review queue) is acknowledged while the erasure runs: one
        committing when it starts is waited for and erased, one arriving meanwhile waits
        and is stored after it, as the user's new memory."""
        check.principal(principal)
        if actor is not None:
            check.text("actor", actor, line=True)
        if keys is not None:
            chosen = self.store.forget(principal, check.texts("keys", keys))
            return ErasureReport(*principal.namespace, chosen, (), (), False, False)
        failed: list[str] = []

        def failure(what: str, exc: Exception) -> None:
            failed.append(f"{what}: {type(exc).__name__}: {exc}")

        def step(what: str, erase: Callable[[], R]) -> R | None:
            """One tier's part, whatever another's did: a failure is reported at the end."""
            try:
                return erase()
            except Exception as exc:  # noqa: BLE001 (every other tier is still erased)
                failure(what, exc)
                return None

        hot = Threads(self.checkpointer)

        def threads_of_user() -> tuple[str, ...]:
            with tenant_scope(principal.tenant_id):
                return tuple(hot.delete_user_threads(principal))

        def participants_of_user() -> dict[str, Mapping[str, int]]:
            found = participants(self.opened_at, self.participants)
            return erase_participants(found, principal, failure)

        with self.store.backend.fence.erasing(principal.namespace):  # (see forget's note)
            facts = step("facts", lambda: self.store.forget(principal))
            paths = step("documents", lambda: self._delete_documents(principal))
            threads = step("threads", threads_of_user)
            docs_compacted = step("document compaction", self.documents.compact)
            hot_compacted = step("thread compaction", hot.compact)
            others = step("participants", participants_of_user)
        if failed:
            raise BackendError(
                f"the erasure of {principal.tenant_id}/{principal.user_id} is incomplete, so "
                f"it is not recorded ({'; '.join(failed)}); every other part was erased: "
                "run forget again"
            )
        assert facts is not None and paths is not None and threads is not None
        assert docs_compacted is not None and hot_compacted is not None and others is not None
        report = ErasureReport(
            *principal.namespace, facts, paths, threads, hot_compacted, docs_compacted, others
        )
        self._record(report, actor or local_actor("library"))
        return report

    def _delete_documents(self, principal: Principal) -> tuple[str, ...]:
        """The user's documents (a shared one naming the user, alone or with others,
        included) and the user's folder, whatever a person saved there."""
        return self.documents.erase_user(principal)

    def _record(self, report: ErasureReport, actor: str) -> None:
        """Append the record of a whole-user erasure to the log (when there is one)."""
        if self._audit is None:
            return
        record = record_of(report.tenant_id, report.user_id, actor, report.to_json(), self.now())
        try:
            self._audit.add(record)
        except EngramError as exc:
            raise BackendError(f"erased, but the erasure record was not written: {exc}") from exc

    def export(self, principal: Principal) -> dict[str, Any]:
        """Everything engram holds about the user, as JSON-ready data."""
        check.principal(principal)
        with tenant_scope(principal.tenant_id):
            return self._export(principal)

    def _export(self, principal: Principal) -> dict[str, Any]:
        threads = Threads(self.checkpointer)
        return {
            "principal": {"tenant_id": principal.tenant_id, "user_id": principal.user_id},
            "exported_at": self.now().isoformat(),
            "facts": [rec.record_json(r) for r in self.facts(principal)],
            "documents": [
                {"path": d.path, "metadata": dict(d.metadata), "content": d.content}
                for d in self.documents.about_user(principal)
            ],
            "threads": [
                {
                    "thread_id": t.thread_id,
                    "checkpoints": t.checkpoints,
                    "last_checkpoint_id": t.last_checkpoint_id,
                    "state": _plain(threads.get(t.thread_id).checkpoint["channel_values"]),
                }
                for t in threads.list_threads(principal)
            ],
        }

    def export_json(self, principal: Principal) -> str:
        """:meth:`export` as a JSON string (values JSON cannot hold are written as text)."""
        check.principal(principal)
        return json.dumps(self.export(principal), indent=1, sort_keys=True, default=str)

    def sweep(self) -> int:
        """Apply the expiry policy now: delete expired fact versions; returns how many."""
        return self.store.sweep()


def _embedder(given: Embedder | str | None) -> Embedder | None:
    """An embedder, or one named (``"minilm"``, ``"hash"``: see :func:`embedder_from_name`),
    keeping its last vectors so the guard's and the store's embedding of a fact is one."""
    found = embedder_from_name(given) if isinstance(given, str) else given
    check.instance("embedder", found, Embedder)  # type: ignore[type-abstract]
    if found is None or isinstance(found, RecentEmbeddings):
        return found
    return RecentEmbeddings(found)


def _observation(index: int, item: object) -> Observation:
    if isinstance(item, str):
        return Observation(item)
    if not isinstance(item, Observation):
        raise InvalidInputError(
            f"item {index}: expected an Observation or a text, got {type(item).__name__}"
        )
    return item


def _arguments(fact: NewFact) -> dict[str, Any]:
    """``fact``'s fields but its text: :meth:`LongTermStore.remember`'s keywords."""
    fields = {f.name: getattr(fact, f.name) for f in dataclasses.fields(fact)}
    del fields["text"]
    return fields


def _plain(values: Any) -> Any:
    """``values`` as plain JSON data (messages and other objects become text)."""
    return json.loads(json.dumps(values, default=str))


def _opened(tier: R | None) -> R:
    if tier is None:
        raise ConfigError("the memory is not open: use Memory.open(...) or call setup()")
    return tier


def _in_thread(
    method: Callable[Concatenate[Memory, P], R],
) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, R]]:
    """The async twin of a :class:`Memory` method: the same code, in a worker thread."""

    async def twin(self: AsyncMemory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    twin.__name__ = method.__name__
    twin.__doc__ = f"Async form of :meth:`Memory.{method.__name__}`."
    return twin


class AsyncMemory:
    """:class:`Memory` for asyncio callers: every method runs the sync code in a thread."""

    def __init__(self, memory: Memory) -> None:
        self.sync = memory

    @classmethod
    async def open(
        cls,
        home: str | Path | None = None,
        *,
        url: str | None = None,
        app_role: AppRole | None = None,
        admin: bool = True,
        hot_url: str | None = None,
        **options: Any,
    ) -> AsyncMemory:
        """Async form of :meth:`Memory.open`."""

        def build() -> Memory:
            return Memory.open(
                home, url=url, app_role=app_role, admin=admin, hot_url=hot_url, **options
            )

        return cls(await asyncio.to_thread(build))

    async def __aenter__(self) -> AsyncMemory:
        await self.setup()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    setup = _in_thread(Memory.setup)
    close = _in_thread(Memory.close)
    remember = _in_thread(Memory.remember)
    remember_many = _in_thread(Memory.remember_many)
    check_fact = _in_thread(Memory.check_fact)
    held_for_review = _in_thread(Memory.held_for_review)
    review_queue = _in_thread(Memory.review_queue)
    approve_held = _in_thread(Memory.approve_held)
    discard_held = _in_thread(Memory.discard_held)
    recall = _in_thread(Memory.recall)
    profile = _in_thread(Memory.profile)
    history = _in_thread(Memory.history)
    facts = _in_thread(Memory.facts)
    conventions = _in_thread(Memory.conventions)
    threads = _in_thread(Memory.threads)
    lineage = _in_thread(Memory.lineage)
    branch_facts = _in_thread(Memory.branch_facts)
    discard_branch = _in_thread(Memory.discard_branch)
    forget = _in_thread(Memory.forget)
    export = _in_thread(Memory.export)
    export_json = _in_thread(Memory.export_json)
    sweep = _in_thread(Memory.sweep)
    add_participant = _in_thread(Memory.add_participant)


def _ttl(
    ttl: timedelta | None, expires_at: datetime | None, default: timedelta | None
) -> timedelta | None:
    """A fact's time to live: its own, else none when it names its expiry, else the
    memory's ``fact_ttl``."""
    if ttl is not None or expires_at is not None:
        return ttl
    return default
