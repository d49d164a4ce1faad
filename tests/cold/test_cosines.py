"""``ColdBackend.cosines``: the cosine of named versions with a vector, on every backend.

Recall's re-ranking reads it for candidates the vector search did not return, so it must
score as that search scores, and must never reach past the scan it is given: not another
user's memory, not a superseded or expired version, not a version of another model."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pytest
from cold_support import Clock

from engram import Principal
from engram.recall.filters import parse_filter
from engram.stores.cold import LongTermStore, Scan, View
from engram.stores.cold.contract import ColdBackend

if TYPE_CHECKING:  # the fixtures' types, defined in conftest.py
    from conftest import StoreFactory

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
EVE = Principal("other", "eve")

FACTS = [
    "I keep a sourdough starter in the fridge",
    "My sister lives in Porto and teaches maths",
    "We adopted a grey cat called Miso",
    "I run along the river every Sunday morning",
    "My favourite tea is a smoky lapsang",
    "The quarterly report is due on the first Friday",
]


def _ids(store: LongTermStore, who: Principal, texts: list[str], **fields: object) -> list[str]:
    out = []
    for text in texts:
        record = store.remember(who, text, **fields).record  # type: ignore[arg-type]
        assert record is not None
        out.append(record.id)
    return out


def _scan(store: LongTermStore, who: Principal, **extra: object) -> Scan:
    return Scan(who.namespace, View(store.now()), **extra)  # type: ignore[arg-type]


def _cosines(store: LongTermStore, scan: Scan, ids: list[str], text: str) -> dict[str, float]:
    assert store.embedder is not None
    vector = store.embedder.embed([text])[0]
    return store.backend.cosines(scan, ids, vector, store.embedder.model_id)


def test_scores_as_the_vector_search_does(store: LongTermStore) -> None:
    ids = _ids(store, ALICE, FACTS)
    assert store.embedder is not None
    query = "what pet did we adopt"
    vector = store.embedder.embed([query])[0]
    scan = _scan(store, ALICE)
    searched = dict(store.backend.vector_candidates(scan, vector, store.embedder.model_id, 50))
    assert set(searched) == set(ids)
    got = _cosines(store, scan, [*reversed(ids), ids[0]], query)  # any order, repeats
    assert set(got) == set(ids)
    for row_id in ids:
        assert got[row_id] == pytest.approx(searched[row_id], abs=1e-6)
    assert _cosines(store, scan, [], query) == {}
    assert _cosines(store, scan, ["no-such-id"], query) == {}


def test_never_reaches_past_the_scan(store: LongTermStore) -> None:
    mine = _ids(store, ALICE, FACTS[:3])
    bobs = _ids(store, BOB, FACTS[3:])
    eves = _ids(store, EVE, FACTS[:2])
    everyone = [*mine, *bobs, *eves]
    assert set(_cosines(store, _scan(store, ALICE), everyone, "cat")) == set(mine)
    assert set(_cosines(store, _scan(store, BOB), everyone, "cat")) == set(bobs)
    assert set(_cosines(store, _scan(store, EVE), everyone, "cat")) == set(eves)
    assert set(_cosines(store, Scan(("acme",), View(store.now())), everyone, "cat")) == {
        *mine,
        *bobs,
    }


def test_only_versions_the_view_admits(store: LongTermStore, clock: Clock) -> None:
    old = store.remember(ALICE, "My phone is an Android", key="phone").record
    new = store.remember(ALICE, "My phone is an iPhone now", key="phone").record
    brief = store.remember(ALICE, "The gate code is 4411 this week", ttl=timedelta(days=1)).record
    assert old is not None and new is not None and brief is not None
    ids = [old.id, new.id, brief.id]
    assert set(_cosines(store, _scan(store, ALICE), ids, "phone")) == {new.id, brief.id}
    clock.advance(days=2)
    assert set(_cosines(store, _scan(store, ALICE), ids, "phone")) == {new.id}
    past = Scan(ALICE.namespace, View(store.now(), store.now() - timedelta(days=3)))
    assert set(_cosines(store, past, ids, "phone")) == set()


def test_tags_filters_and_model(store: LongTermStore) -> None:
    tagged = _ids(store, ALICE, FACTS[:2], tags=["family"])
    other = _ids(store, ALICE, FACTS[2:4], value={"kind": "pet"})
    ids = [*tagged, *other]
    by_tag = _scan(store, ALICE, tags=("family",))
    assert set(_cosines(store, by_tag, ids, "sister")) == set(tagged)
    by_value = _scan(store, ALICE, conditions=parse_filter({"kind": "pet"}))
    assert set(_cosines(store, by_value, ids, "cat")) == set(other)
    backend: ColdBackend = store.backend
    assert store.embedder is not None
    vector = store.embedder.embed(["cat"])[0]
    assert backend.cosines(_scan(store, ALICE), ids, vector, "another-model") == {}


class _Angled:
    """Every text points one way but the orchid fact, far from it: a search for the
    nearest vectors of anything returns the fillers first."""

    model_id = "test-angled"
    dim = 8

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            if "orchid" in text and "?" not in text:
                out[row, :2] = (0.2, math.sqrt(1 - 0.04))
            else:
                out[row, 0], out[row, 2] = 1.0, (sum(map(ord, text)) % 97) / 1000
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_a_keyword_match_beyond_the_vector_search_has_its_cosine(
    make_store: StoreFactory,
) -> None:
    """The re-ranked recall searches a pool sized from the results asked for; a keyword
    match the vector search did not reach still gets its own cosine (not none, which
    would leave it out of the cosine leg of the re-ranking and of its calibration)."""
    embedder = _Angled()
    store = make_store(embedder=embedder)
    fillers = [(ALICE.namespace, f"n{i}", {"text": f"note number {i} about the weather"})
               for i in range(400)]  # fmt: skip
    store.put_many([*fillers, (ALICE.namespace, "orchid", {"text": "I repotted the orchid"})])
    query = "When did I repot the orchid?"
    found = store.recall(ALICE, query, k=3)
    assert found[0].record.key == "orchid"
    assert found[0].keyword_rank == 1
    cosine = embedder.embed([query])[0] @ embedder.embed(["I repotted the orchid"])[0]
    assert cosine < 0.3  # (the 400 fillers' cosines are above 0.99)
    assert found[0].similarity == pytest.approx(float(cosine), abs=1e-6)
