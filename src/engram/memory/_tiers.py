"""How the memory layer opens its tiers from one home or URL, and the erasure helpers
that belong to no single tier (which documents are about a user, who else holds user
content: :class:`ErasureParticipant`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol

import numpy as np

from engram._principal import Principal
from engram.config import (
    DEFAULT_HOME,
    AppRole,
    default_documents_root,
    default_url,
    parse_url,
)
from engram.errors import ConfigError
from engram.recall import Embedder, confidence, cosine_confidence, keyword_coverage, normalise
from engram.stores.audit import setup_audit
from engram.stores.cold import setup_store
from engram.stores.documents import DocumentStore, SearchHit, setup_documents
from engram.stores.documents import open_documents as open_document_store
from engram.stores.hot import setup_checkpointer


@dataclass(frozen=True, slots=True)
class Locations:
    """Where each tier lives: two URLs and a document root (a directory or a URL)."""

    hot_url: str
    cold_url: str
    documents: str
    index_path: Path | None = None
    app_role: AppRole | None = None
    """For PostgreSQL: the URLs are an admin's; ``setup()`` sets up each tier's schema and
    this application role, then opens every tier as the role (row-level security)."""
    home: Path | None = None
    """The embedded home, whose erasure participants ``forget`` finds by itself."""

    @classmethod
    def embedded(cls, home: str | Path = DEFAULT_HOME) -> Locations:
        """SQLite checkpoints, SQLite store and Markdown files under ``home``."""
        home = Path(home)
        return cls(
            default_url("hot", home),
            default_url("cold", home),
            str(default_documents_root(home)),
            home / "index" / "documents.db",
            home=home,
        )

    @classmethod
    def from_url(
        cls, url: str, app_role: AppRole | None = None, *, setup: bool = True
    ) -> Locations:
        """Every tier on one PostgreSQL URL: an admin's, whose ``setup()`` sets up every
        tier and ``app_role`` (default ``engram_app``) and runs the tiers as that role;
        with ``setup=False``, the application role's own URL (set up beforehand), used
        as it is."""
        parsed = parse_url(url)
        if parsed.scheme != "postgresql":
            raise ConfigError(
                f"one URL for every tier needs postgresql://; for {parsed.scheme} pass home= "
                "or per-tier URLs"
            )
        return cls(url, url, url, app_role=(app_role or AppRole()) if setup else None)

    def as_app_role(self) -> Locations:
        """These locations as the application role sees them, every tier set up first as
        the admin (idempotent); unchanged without an ``app_role``."""
        if self.app_role is None:
            return self
        setup_audit(self.cold_url, self.app_role)  # the erasure log, beside the cold tier
        return replace(
            self,
            hot_url=setup_checkpointer(self.hot_url, self.app_role),
            cold_url=setup_store(self.cold_url, self.app_role),
            documents=setup_documents(self.documents, self.app_role),
            app_role=None,
        )


def open_documents(where: Locations, embedder: Embedder | None, stack: ExitStack) -> DocumentStore:
    """The document store named by ``where.documents`` (files or PostgreSQL), set up
    first as the admin when ``where.app_role`` names the application role."""
    store = open_document_store(
        where.documents,
        embedder=embedder,
        index_path=where.index_path,
        setup_role=where.app_role,
    )
    return stack.enter_context(store)


class ErasureParticipant(Protocol):
    """A store outside the tiers that holds user content, erased by ``Memory.forget``
    (an agent's publication outbox, an application's own cache, ...)."""

    @property
    def name(self) -> str:
        """Its key in the erasure report."""
        ...

    def erase(self, principal: Principal) -> dict[str, int]:
        """Remove everything held for ``principal``, bytes included; counts by kind."""
        ...


HOME_PARTICIPANTS = "engram.home_participants"
"""Entry-point group of the stores kept under an embedded home beside the tiers (an
agent's publication outbox, ...): each entry is ``(home: Path) -> ErasureParticipant |
None``, ``None`` when that store has nothing there."""
URL_PARTICIPANTS = "engram.url_participants"
"""Entry-point group of the stores kept beside a hot tier served at a URL (the outbox
table beside PostgreSQL checkpoints, ...): each entry is ``(hot_url: str) ->
ErasureParticipant | None``, ``None`` when there is none beside that tier."""


def home_participants(home: Path) -> list[ErasureParticipant]:
    """The erasure participants that hold something under ``home``."""
    return _found(HOME_PARTICIPANTS, home)


def url_participants(hot_url: str) -> list[ErasureParticipant]:
    """The erasure participants kept beside the hot tier at ``hot_url``."""
    return _found(URL_PARTICIPANTS, hot_url)


def _found(group: str, where: object) -> list[ErasureParticipant]:
    found = (entry.load()(where) for entry in entry_points(group=group))
    return [participant for participant in found if participant is not None]


def participants(
    where: Locations, registered: Sequence[ErasureParticipant]
) -> list[ErasureParticipant]:
    """The ``registered`` participants, plus those found under the embedded home or beside
    the hot tier (``where`` as opened: the application role's URLs on PostgreSQL; a
    ledger erased twice finds nothing the second time)."""
    found = list(registered)
    beside = home_participants(where.home) if where.home is not None else []
    for participant in (*beside, *url_participants(where.hot_url)):
        if participant not in found:
            found.append(participant)
    return found


def erase_participants(
    found: Sequence[ErasureParticipant],
    principal: Principal,
    failed: Callable[[str, Exception], None],
) -> dict[str, Mapping[str, int]]:
    """Erase ``principal`` from each participant: counts by participant name. One that
    fails is passed to ``failed`` and the others are still erased."""
    erased: dict[str, Counter[str]] = {}
    for participant in found:
        try:
            counts = participant.erase(principal)
        except Exception as exc:  # noqa: BLE001 (the next participant is still erased)
            failed(participant.name, exc)
            continue
        erased.setdefault(participant.name, Counter()).update(counts)
    return {name: dict(counts) for name, counts in erased.items()}


def answering(
    query: str,
    hits: Sequence[SearchHit],
    embedder: Embedder | None,
    floor: float,
    min_score: float,
) -> list[SearchHit]:
    """The ``hits`` that answer ``query`` as a recalled memory must, each scored as one
    is: the confidence of its cosine with the query (calibrated on ``floor``) and of the
    share of the query's words it holds (:mod:`engram.recall._calibrate`), kept when at
    least ``min_score``. A document search ranks passages against each other (its best
    scores 1.0 for any query); this says whether any answers at all."""
    if not hits:
        return []
    coverage = keyword_coverage(query, [hit.text for hit in hits])
    cosines: list[float | None] = [None] * len(hits)
    if embedder is not None:
        unit = normalise(np.asarray(embedder.embed([query, *(hit.text for hit in hits)])))
        cosines = [float(c) for c in unit[1:] @ unit[0]]
    scored = [
        replace(hit, score=confidence(cosine_confidence(cos, floor), share))
        for hit, cos, share in zip(hits, cosines, coverage, strict=True)
    ]
    return [hit for hit in scored if hit.score >= min_score]
