"""Memory: remember through the policy, recall within a budget as untrusted data, changed
preferences and ``as_of``, discarded branches, cross-tenant isolation, async twin."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from engram import ConfigError, InvalidInputError, NotFoundError, Principal
from engram.memory import AsyncMemory, Memory
from engram.policy import UNTRUSTED_PREAMBLE
from engram.recall import HashEmbedder, RecentEmbeddings, Vectors
from engram.stores.hot import Threads, thread_config

if TYPE_CHECKING:
    from conftest import Clock

ALICE = Principal("acme", "alice")
BOB = Principal("globex", "bob")
CAROL = Principal("acme", "carol")

RISK = "risk_tolerance"


def _risk(memory: Memory, stance: str, **provenance: str) -> str:
    result = memory.remember(
        ALICE, f"Risk tolerance is {stance}", slot=RISK, tags=("preference",), **provenance
    )
    assert result.stored, result
    assert result.key is not None
    return result.key


def test_remember_says_what_happened(memory: Memory) -> None:
    added = memory.remember(ALICE, "Follows NVDA and AMD every quarter", tags=("fact",))
    again = memory.remember(ALICE, "Follows NVDA and AMD every quarter", tags=("fact",))
    noise = memory.remember(ALICE, "ok thanks", tags=("fact",))
    redacted = memory.remember(ALICE, "Reach me at alice@example.com for reports")
    assert (added.action, added.reason) == ("added", "new fact")
    assert again.action == "ignored" and again.key == added.key
    assert noise.action == "rejected" and noise.reason and "service phrase" in noise.reason
    assert redacted.stored and redacted.redactions == ("email",)
    assert redacted.text is not None and "alice@example.com" not in redacted.text


def test_recall_packs_profile_memories_and_documents_within_budget(memory: Memory) -> None:
    _risk(memory, "conservative", thread_id="t1", checkpoint_id="c1")
    memory.remember(ALICE, "Follows NVDA closely for the AI cycle", message_ids=["m1", "m2"])
    memory.documents.write(ALICE, "research/NVDA-2026-02.md", "# NVDA\n\nNVDA margins rose.\n")

    block = memory.recall(ALICE, "NVDA", 500, include_profile=True)

    assert [i.kind for i in block.items] == ["profile", "memory", "document"]
    assert block.text.startswith(UNTRUSTED_PREAMBLE)
    assert 'kind="profile" score="1.000" source="user"' in block.text
    assert 'thread_id="t1" checkpoint_id="c1"' in block.text
    assert 'message_ids="m1,m2"' in block.text
    assert 'source="research/NVDA-2026-02.md#L3-L3"' in block.text
    assert 0 < block.tokens_used <= 500 and block.dropped == 0
    assert sum(i.tokens for i in block.items) < block.tokens_used


def test_a_small_budget_keeps_the_highest_value_items_first(memory: Memory) -> None:
    _risk(memory, "conservative")
    for n in range(6):
        memory.remember(ALICE, f"Follows ticker number {n} in the NVDA supply chain")
    full = memory.recall(ALICE, "NVDA supply chain", 2000, include_profile=True)
    small = memory.recall(ALICE, "NVDA supply chain", full.tokens_used - 1, include_profile=True)
    assert small.tokens_used <= full.tokens_used - 1 and small.dropped >= 1
    assert small.items[0].kind == "profile"
    assert [i.text for i in small.items] == [i.text for i in full.items[: len(small.items)]]
    with pytest.raises(InvalidInputError):
        memory.recall(ALICE, "x", 0)


def test_a_changed_preference_wins_and_the_old_one_needs_as_of(
    memory: Memory, clock: Clock
) -> None:
    first = _risk(memory, "conservative")
    before_change = clock.advance(days=10)
    clock.advance(days=1)
    second = memory.remember(ALICE, "Risk tolerance is aggressive", slot=RISK, tags=("preference",))
    assert second.action == "updated" and second.key == first
    assert second.previous_text == "Risk tolerance is conservative"

    now = memory.recall(ALICE, "risk tolerance", 400)
    then = memory.recall(ALICE, "risk tolerance", 400, as_of=before_change)

    assert "aggressive" in now.text and "conservative" not in now.text
    assert "conservative" in then.text and "aggressive" not in then.text
    assert [r.text for r in memory.history(ALICE, first)] == [
        "Risk tolerance is conservative",
        "Risk tolerance is aggressive",
    ]


class _Notes(TypedDict):
    notes: Annotated[list[str], operator.add]


def _note_graph(memory: Memory):  # type: ignore[no-untyped-def]
    builder = StateGraph(_Notes)
    builder.add_node("note", lambda state: {})
    builder.add_edge(START, "note")
    builder.add_edge("note", END)
    return builder.compile(checkpointer=memory.checkpointer)


def test_facts_of_a_rewound_branch_are_found_and_removed(memory: Memory) -> None:
    graph = _note_graph(memory)
    config = thread_config("t-rewind", ALICE)
    graph.invoke({"notes": ["a"]}, config)
    fork_point = graph.get_state(config).config["configurable"]["checkpoint_id"]
    graph.invoke({"notes": ["b"]}, config)
    abandoned = graph.get_state(config).config["configurable"]["checkpoint_id"]
    memory.remember(
        ALICE,
        "Prefers dividend stocks (branch b)",
        tags=("preference",),
        thread_id="t-rewind",
        checkpoint_id=abandoned,
    )
    rewound = thread_config("t-rewind", ALICE, checkpoint_id=fork_point)
    graph.invoke({"notes": ["c"]}, rewound)
    kept = graph.get_state(config).config["configurable"]["checkpoint_id"]
    memory.remember(
        ALICE,
        "Prefers growth stocks (branch c)",
        tags=("preference",),
        thread_id="t-rewind",
        checkpoint_id=kept,
    )

    found = memory.branch_facts(ALICE, "t-rewind")
    assert [r.text for r in found.facts] == ["Prefers dividend stocks (branch b)"]
    assert kept in found.kept_checkpoints and fork_point in found.kept_checkpoints
    assert abandoned not in found.kept_checkpoints

    removed = memory.discard_branch(ALICE, "t-rewind")
    assert removed.removed == 1
    texts = [r.text for r in memory.facts(ALICE)]
    assert texts == ["Prefers growth stocks (branch c)"]
    assert memory.branch_facts(ALICE, "t-rewind").facts == ()


def test_after_a_fork_the_source_threads_later_facts_are_identifiable(memory: Memory) -> None:
    graph = _note_graph(memory)
    config = thread_config("t-src", ALICE)
    graph.invoke({"notes": ["a"]}, config)
    fork_point = graph.get_state(config).config["configurable"]["checkpoint_id"]
    graph.invoke({"notes": ["b"]}, config)
    later = graph.get_state(config).config["configurable"]["checkpoint_id"]
    memory.remember(
        ALICE,
        "Holds cash for a house (before fork)",
        tags=("fact",),
        thread_id="t-src",
        checkpoint_id=fork_point,
    )
    memory.remember(
        ALICE,
        "Wants leveraged ETFs (after fork)",
        tags=("preference",),
        thread_id="t-src",
        checkpoint_id=later,
    )
    fork = Threads(memory.checkpointer).fork("t-src", fork_point, "t-fork", ALICE)
    assert fork.thread_id == "t-fork"

    assert memory.branch_facts(ALICE, "t-src").facts == ()  # the source's own lineage
    found = memory.branch_facts(ALICE, "t-src", keep=fork_point)
    assert [r.text for r in found.facts] == ["Wants leveraged ETFs (after fork)"]
    assert memory.discard_branch(ALICE, "t-src", keep=fork_point).removed == 1
    assert [r.text for r in memory.facts(ALICE)] == ["Holds cash for a house (before fork)"]
    with pytest.raises(NotFoundError):
        memory.branch_facts(ALICE, "t-src", keep="no-such-checkpoint")


def test_principals_never_see_each_others_memory(memory: Memory) -> None:
    _risk(memory, "conservative", thread_id="t-alice")
    memory.documents.write(ALICE, "user-profiles/alice.md", "# Alice\n\nRisk tolerance notes.\n")
    memory.documents.write(
        ALICE,
        "users/alice/research/NVDA-2026-03.md",
        "NVDA risk tolerance brief.",
        {"user_id": "alice"},
    )
    memory.documents.write(ALICE, "conventions/risk.md", "# Risk\n\n- State risk tolerance\n")
    _note_graph(memory).invoke({"notes": ["x"]}, thread_config("t-alice", ALICE))

    for other in (BOB, CAROL):
        block = memory.recall(other, "risk tolerance notes brief", 800)
        assert "Alice" not in block.text and "conservative" not in block.text
        assert "NVDA risk tolerance brief" not in block.text
        assert memory.threads(other) == [] and memory.facts(other) == []
        exported = memory.export_json(other)
        assert "conservative" not in exported and "t-alice" not in exported
        with pytest.raises(NotFoundError, match=r"^no thread .t-alice.$"):
            Threads(memory.checkpointer).history("t-alice", other)
    carol = memory.recall(CAROL, "state risk tolerance", 800)
    assert "State risk tolerance" in carol.text  # project conventions are the tenant's
    assert "State risk tolerance" not in memory.recall(BOB, "state risk tolerance", 800).text


def test_export_holds_facts_documents_and_threads(memory: Memory, clock: Clock) -> None:
    _risk(memory, "conservative", thread_id="t-alice", checkpoint_id="c9")
    clock.advance(days=1)
    _risk(memory, "moderate")
    memory.documents.write(ALICE, "user-profiles/alice.md", "# Alice\n")
    memory.documents.write(ALICE, "users/alice/research/AMD-2026-03.md", "AMD brief")
    memory.documents.write(CAROL, "users/carol/research/INTC-2026-03.md", "INTC brief")
    _note_graph(memory).invoke({"notes": ["hello"]}, thread_config("t-alice", ALICE))

    data = memory.export(ALICE)

    facts = sorted(data["facts"], key=lambda f: f["recorded_at"])
    assert [f["text"] for f in facts] == [
        "Risk tolerance is conservative",
        "Risk tolerance is moderate",
    ]
    assert facts[0]["provenance"]["checkpoint_id"] == "c9" and facts[0]["superseded_by"]
    assert [d["path"] for d in data["documents"]] == [
        "user-profiles/alice.md",
        "users/alice/research/AMD-2026-03.md",
    ]
    assert [t["thread_id"] for t in data["threads"]] == ["t-alice"]
    assert data["threads"][0]["state"]["notes"] == ["hello"]


def test_nothing_opens_before_open_and_options_are_checked(tmp_path: Path) -> None:
    from engram.memory._tiers import Locations

    lazy = Memory(Locations.embedded(tmp_path / "h"))
    assert not (tmp_path / "h").exists()
    with pytest.raises(ConfigError):
        lazy.recall(ALICE, "x")
    with pytest.raises(ConfigError):
        Memory.open(tmp_path, url="postgresql://x/y")
    with pytest.raises(ConfigError):
        Memory.open(url="sqlite:///x.db")
    with pytest.raises(InvalidInputError):
        Memory(Locations.embedded(tmp_path / "h"), embedder=42)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Memory(Locations.embedded(tmp_path / "h"), embedder="no-such-model")
    assert Memory(Locations.embedded(tmp_path / "h"), embedder="hash").embedder is not None


async def test_async_memory_runs_the_same_layer(home: Path, clock: Clock) -> None:
    memory = await AsyncMemory.open(home, embedder=HashEmbedder(), clock=clock)
    async with memory:
        added = await memory.remember(ALICE, "Prefers short briefs on NVDA", tags=("preference",))
        block = await memory.recall(ALICE, "NVDA briefs", 300)
        report = await memory.forget(ALICE)
        after = await memory.recall(ALICE, "NVDA briefs", 300)
    assert added.stored and "Prefers short briefs" in block.text
    assert report.facts.keys == 1 and after.items == ()


def test_a_question_nothing_answers_gets_an_empty_block(memory: Memory) -> None:
    memory.remember(ALICE, "Prefers reports as bullet points", tags=("preference",))
    empty = memory.recall(ALICE, "What is the name of my dog?")
    assert empty.items == () and empty.text == ""
    asked = memory.recall(ALICE, "What is the name of my dog?", include_profile=True)
    assert [i.text for i in asked.items] == ["Prefers reports as bullet points"]


def test_profile_facts_come_when_relevant_or_when_asked(memory: Memory) -> None:
    _risk(memory, "conservative")
    memory.remember(ALICE, "Prefers reports as bullet points", tags=("preference",))
    relevant = memory.recall(ALICE, "what is my risk tolerance")
    assert [i.kind for i in relevant.items][:1] == ["profile"]
    assert "Risk tolerance is conservative" in relevant.items[0].text
    assert {i.kind for i in memory.recall(ALICE, "").items} == {"profile"}
    assert len(memory.recall(ALICE, "", include_profile=True).items) == 2
    assert memory.recall(ALICE, "risk tolerance", include_profile=False).items[0].kind == "memory"
    with pytest.raises(InvalidInputError):
        memory.recall(ALICE, "risk", include_profile="yes")  # type: ignore[arg-type]


class _Counting(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += list(texts)
        return super().embed(texts)


def test_each_fact_is_embedded_once_and_forget_drops_what_was_kept(
    home: Path, clock: Clock
) -> None:
    counting = _Counting()
    with Memory.open(home, embedder=counting, clock=clock) as memory:
        memory.remember(ALICE, "Follows the semiconductor sector closely")
        counting.texts.clear()
        for n in range(5):
            memory.remember(ALICE, f"Visited museum number {n} in Lyon with my sister")
        assert sorted(counting.texts) == [
            f"Visited museum number {n} in Lyon with my sister" for n in range(5)
        ]
        kept = memory.embedder
        assert isinstance(kept, RecentEmbeddings) and kept.inner is counting
        report = memory.forget(ALICE)
        assert report.facts.caches_cleared == 5  # backend, stems, counts, excerpts, vectors
        assert kept.clear() == 0


@pytest.mark.parametrize(("threshold", "action"), [(0.75, "updated"), (1.0, "added")])
def test_the_layer_consolidates_with_the_resolver_it_is_given(
    tmp_path: Path, threshold: float, action: str
) -> None:
    """``Memory(resolver=...)`` reaches the cold tier: the restatement step's threshold is
    the caller's (``1.0`` turns it off)."""
    from engram.recall import MiniLMEmbedder
    from engram.stores.cold import RuleResolver

    resolver = RuleResolver(restated_threshold=threshold)
    with Memory.open(home=tmp_path, embedder=MiniLMEmbedder(), resolver=resolver) as memory:
        memory.remember(ALICE, "My emergency fund covers 3 months")
        assert memory.remember(ALICE, "My emergency fund now covers 6 months").action == action


def test_every_public_method_of_memory_has_an_async_twin() -> None:
    synchronous = {
        name
        for name, value in vars(Memory).items()
        if not name.startswith("_") and callable(value) and not isinstance(value, classmethod)
    }
    assert len(synchronous) > 20
    assert synchronous - {"now"} <= set(vars(AsyncMemory))
