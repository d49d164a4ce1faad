"""``forget`` reaches the stores outside the tiers: the publication outbox under the home
(found by itself) and any erasure participant given to the memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engram import Principal
from engram.agent import PublicationLedger
from engram.memory import ErasureParticipant, Memory
from engram.recall import HashEmbedder

ALICE = Principal("acme", "alice")


@dataclass
class Cache:
    """An application cache that forgets users when asked."""

    name: str = "cache"
    held: dict[Principal, int] = field(default_factory=dict)
    asked: list[Principal] = field(default_factory=list)

    def erase(self, principal: Principal) -> dict[str, int]:
        self.asked.append(principal)
        return {"entries": self.held.pop(principal, 0)}


def test_forget_without_an_outbox_creates_none(home: Path, memory: Memory) -> None:
    memory.remember(ALICE, "Follows NVDA")
    report = memory.forget(ALICE)
    assert report.participants == {} and report.to_json()["participants"] == {}
    assert not (home / "outbox.db").exists()


def test_registered_participants_are_erased_and_reported(tmp_path: Path) -> None:
    caches = [Cache(held={ALICE: 4}), Cache(held={ALICE: 1})]
    outbox = PublicationLedger(tmp_path / ".engram" / "outbox.db")
    outbox.publish(ALICE, "t1", "# brief", "alice")
    registered: list[ErasureParticipant] = [*caches, outbox]
    with Memory.open(tmp_path / ".engram", embedder=HashEmbedder(), participants=registered) as mem:
        mem.forget(ALICE, keys=["nothing"])  # erasing chosen facts leaves the rest alone
        assert caches[0].asked == [] and len(outbox.publications(ALICE)) == 1
        report = mem.forget(ALICE)
    assert [c.asked for c in caches] == [[ALICE], [ALICE]]
    assert report.participants == {"cache": {"entries": 5}, "outbox": {"publications": 1}}
    assert outbox.publications(ALICE) == []


@dataclass
class Broken:
    """A participant that fails the first time it is asked."""

    name: str = "broken"
    failures: int = 1

    def erase(self, principal: Principal) -> dict[str, int]:
        if self.failures:
            self.failures -= 1
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return {"entries": 0}


def test_a_part_that_fails_leaves_no_other_part_unerased_and_nothing_recorded(
    tmp_path: Path,
) -> None:
    """A failing participant (or tier) does not stop the erasure of the others; the
    erasure is not recorded as done, and a second forget finishes it."""
    import pytest

    from engram.errors import BackendError

    broken, cache = Broken(), Cache(held={ALICE: 3})
    home = tmp_path / ".engram"
    with Memory.open(home, embedder=HashEmbedder(), participants=[broken, cache]) as memory:
        memory.remember(ALICE, "Follows NVDA", tags=["fact"])
        memory.documents.write(ALICE, "users/alice/notes.md", "alice's notes")
        with pytest.raises(BackendError, match=r"incomplete.*broken"):
            memory.forget(ALICE)
        assert memory.facts(ALICE) == [] and memory.documents.list(ALICE, "users/**") == []
        assert cache.asked == [ALICE] and memory.erasure_log is not None
        assert memory.erasure_log.list("acme") == []
        report = memory.forget(ALICE)
        assert report.participants["broken"] == {"entries": 0}
        assert [r.user_id for r in memory.erasure_log.list("acme")] == ["alice"]
