"""Each recalled memory carries the signals behind its score (what the inspector shows)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from engram import Memory, Principal
from engram.recall import HashEmbedder

ALICE = Principal("acme", "alice")
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_recalled_memories_carry_their_breakdown(tmp_path: Path) -> None:
    home = tmp_path / ".engram"
    with Memory.open(home, embedder=HashEmbedder(), clock=lambda: NOW) as memory:
        memory.remember(ALICE, "Alice sails a dinghy on the lake", slot="hobby")
        memory.remember(ALICE, "Alice bakes sourdough bread", slot="baking")
        memory.remember(ALICE, "Alice prefers aisle seats", tags=["preference"])
        result = memory.recall(ALICE, "dinghy", 2000, include_profile=True)
        found = {r.record.key: r for r in memory.store.recall(ALICE, "dinghy", k=8)}
    recalled = [i for i in result.items if i.kind == "memory"]
    assert recalled and all(i.breakdown is not None for i in recalled)
    assert all(i.breakdown is None for i in result.items if i.kind == "profile")
    for item in recalled:
        assert item.key is not None and item.breakdown is not None
        hit = found[item.key]
        assert item.breakdown.relevance == hit.relevance
        assert item.breakdown.recency == hit.recency
        assert item.breakdown.similarity == hit.similarity
        assert (item.breakdown.keyword_rank, item.breakdown.vector_rank) == (
            hit.keyword_rank,
            hit.vector_rank,
        )
    by_text = {i.text: i.breakdown for i in recalled}
    dinghy = by_text["Alice sails a dinghy on the lake"]
    assert dinghy is not None and dinghy.keyword_rank == 1 and dinghy.vector_rank is not None
    bread = by_text.get("Alice bakes sourdough bread")
    assert bread is None or bread.keyword_rank is None  # no shared word: no keyword rank
    assert "keyword_rank" not in result.text  # the block the model gets is unchanged
