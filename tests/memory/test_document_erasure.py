"""Export and erasure of a user through the documents a person saved by hand: front matter
engram cannot read, names the path rules refuse, bytes that are not UTF-8, a document
naming two users. None of them stops another user's recall, or anyone's export or erasure;
a document naming the user, alone or with others, is exported and erased with them."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from engram import Principal
from engram.memory import Memory
from engram.stores.documents.paths import MAX_DEPTH

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
SECRET = "zanzibar-7731"


def _save(memory: Memory, path: str, data: str | bytes) -> Path:
    """Save a file as a person does, past engram."""
    file = memory.documents.root(ALICE).joinpath(*path.split("/"))  # type: ignore[attr-defined]
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return file


def _holding(memory: Memory, needle: str) -> list[str]:
    """The tenant's files whose bytes hold ``needle``."""
    root: Path = memory.documents.root(ALICE)  # type: ignore[attr-defined]
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and
        needle.encode() in p.read_bytes()
    )  # fmt: skip


def _erased(memory: Memory, principal: Principal) -> tuple[str, ...]:
    exported = [d["path"] for d in memory.export(principal)["documents"]]
    memory.export_json(principal)
    report = memory.forget(principal)
    assert set(exported) <= set(report.documents)
    return report.documents


def test_unreadable_front_matter_stops_no_recall_export_or_erasure(memory: Memory) -> None:
    memory.documents.init(ALICE)
    memory.documents.write(ALICE, "users/alice/notes.md", f"# N\n\n{SECRET} alice note\n")
    _save(memory, "research/minutes.md", "---\ndate: 2024-02-30\n---\n# Minutes\n\nteam sync\n")
    _save(memory, "research/big.md", "---\nn: " + "9" * 5000 + "\n---\n# Big\n\nteam sync\n")
    _save(memory, "research/deep.md", "---\na: " + "[" * 3000 + "]" * 3000 + "\n---\nteam\n")
    assert "team sync" in memory.recall(BOB, "team sync").text
    assert _erased(memory, ALICE) == ("users/alice/notes.md",)
    assert _holding(memory, SECRET) == []
    assert len(memory.documents.list(BOB, "research/*")) == 4  # README.md and the three


def test_a_name_in_nfd_or_too_deep_stops_no_erasure(memory: Memory) -> None:
    memory.documents.write(ALICE, "users/alice/notes.md", "# N\n\nalice note\n")
    _save(memory, "users/alice/" + unicodedata.normalize("NFD", "résumé.md"), f"# CV\n\n{SECRET}\n")
    _save(memory, "users/alice/" + "a/" * MAX_DEPTH + "old.md", f"# Old\n\n{SECRET}\n")
    _save(memory, "archive/" * (MAX_DEPTH + 1) + "shared.md", "# Old\n\nthe tenant's\n")
    assert "users/alice/notes.md" in _erased(memory, ALICE)
    assert _holding(memory, SECRET) == [] and _holding(memory, "alice note") == []
    assert memory.forget(ALICE).documents == ()
    assert _erased(memory, BOB) == ()


def test_a_shared_file_that_is_not_utf8_stops_no_erasure(memory: Memory) -> None:
    memory.documents.write(ALICE, "users/alice/notes.md", f"# N\n\n{SECRET} alice note\n")
    _save(memory, "research/legacy.md", "# Caf\xe9 notes\n\nold text\n".encode("latin-1"))
    _save(memory, "users/alice/old.md", f"# Caf\xe9\n\n{SECRET}\n".encode("latin-1"))
    assert set(_erased(memory, ALICE)) == {"users/alice/notes.md", "users/alice/old.md"}
    assert _holding(memory, SECRET) == [] and _holding(memory, "old text") == ["research/legacy.md"]


def test_a_document_naming_two_users_is_exported_and_erased_with_either(
    memory: Memory,
) -> None:
    memory.documents.init(ALICE)
    meeting = f"---\nusers: [alice, bob]\n---\n# Meeting\n\nalice {SECRET} medical leave\n"
    _save(memory, "research/meeting.md", meeting)
    _save(memory, "research/alice-only.md", f"---\nuser: alice\n---\n# A\n\n{SECRET} solo\n")
    exported = {d["path"]: d for d in memory.export(ALICE)["documents"]}
    assert sorted(exported) == ["research/alice-only.md", "research/meeting.md"]
    assert exported["research/meeting.md"]["metadata"] == {"users": ["alice", "bob"]}
    assert [d["path"] for d in memory.export(BOB)["documents"]] == ["research/meeting.md"]
    assert memory.forget(ALICE).documents == ("research/alice-only.md", "research/meeting.md")
    assert _holding(memory, SECRET) == []
    assert memory.export(BOB)["documents"] == []
