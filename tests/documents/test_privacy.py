"""Per-user documents are the user's: another user of the same tenant cannot read, list,
search, edit, move, delete or detect them, through the store or the memory tool, and a
document's user comes from the principal writing it, never from its front matter."""

from __future__ import annotations

import pytest

from engram import Principal
from engram.errors import AccessDeniedError, EngramError, InvalidInputError, NotFoundError
from engram.stores.documents import DocumentStore
from engram.stores.documents.paths import private_to
from engram.tools import MemoryTool, document_tools

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
ALICE_ELSEWHERE = Principal("globex", "alice")
SECRET = "zanzibar-7731"

PRIVATE = (
    "user-profiles/alice.md",
    "review/alice.md",
    "users/alice/research/NVDA-2026-03.md",
    "users/alice/notes/deep/n.md",
)


def _fill(store: DocumentStore) -> None:
    for path in PRIVATE:
        store.write(ALICE, path, f"# Private\n\nAlice's {SECRET} note.\n")
    store.write(ALICE, "conventions/style.md", "# Style\n\n- Short sentences\n")


@pytest.mark.parametrize(
    ("path", "owner"),
    [
        ("user-profiles/alice.md", "alice"),
        ("user-profiles/README.md", None),
        ("user-profiles/alice/extra.md", None),
        ("review/bob.md", "bob"),
        ("users/bob", "bob"),
        ("users/bob/", "bob"),
        ("users/bob/a/b.md", "bob"),
        ("users", None),
        ("research/NVDA.md", None),
        ("conventions/users/bob.md", None),
        ("users/Bob/x.md", "Bob"),
        ("users/bo\u0301b/x.md", "b\u00f3b"),  # one NFC name, however it is spelt
    ],
)
def test_a_path_alone_says_whose_it_is(path: str, owner: str | None) -> None:
    assert private_to(path) == owner


def test_another_user_cannot_see_or_detect_private_documents(store: DocumentStore) -> None:
    _fill(store)
    for path in PRIVATE:
        missing = path.replace("alice", "nobody")
        for candidate in (path, missing):
            with pytest.raises(NotFoundError) as caught:
                store.read_text(BOB, candidate)
            assert str(caught.value) == f"no document {candidate!r}"
            assert not store.exists(BOB, candidate)
        assert store.read(ALICE, path).content.endswith(f"{SECRET} note.\n")
    assert not store.is_dir(BOB, "users/alice")
    assert [i.path for i in store.list(BOB)] == ["conventions/style.md"]
    assert store.list(BOB, "users/**") == [] and store.list(BOB, "review/*") == []
    assert SECRET not in repr(store.search(BOB, f"{SECRET} note private", k=20))
    assert len(store.list(ALICE)) == len(PRIVATE) + 1
    assert {h.path for h in store.search(ALICE, SECRET, k=20, mode="keyword")} == set(PRIVATE)


def test_another_user_cannot_change_private_documents(store: DocumentStore) -> None:
    _fill(store)
    for path in PRIVATE:
        with pytest.raises(AccessDeniedError):
            store.write(BOB, path, "# Planted\n")
        with pytest.raises(NotFoundError):
            store.delete(BOB, path)
        with pytest.raises(NotFoundError):
            store.move(BOB, path, "conventions/stolen.md")
    with pytest.raises(AccessDeniedError):
        store.move(BOB, "conventions/style.md", "users/alice/planted.md")
    with pytest.raises(AccessDeniedError):
        store.write(BOB, "users/alice/new.md", "# Planted\n")
    # Bob's directory operations reach his own and the shared documents only.
    store.write(BOB, "review/bob.md", "# Bob's queue\n")
    assert store.delete(BOB, "review") == 1
    assert store.exists(ALICE, "review/alice.md")
    store.move(BOB, "users", "archive")
    for path in PRIVATE:
        assert store.read(ALICE, path).content.endswith(f"{SECRET} note.\n")


def test_a_documents_user_comes_from_the_principal(store: DocumentStore) -> None:
    with pytest.raises(InvalidInputError, match="comes from the principal"):
        store.write(BOB, "users/bob/brief.md", "x", {"user_id": "alice"})
    with pytest.raises(InvalidInputError, match="comes from the principal"):
        store.write_text(BOB, "users/bob/brief.md", "---\nusers: [bob, alice]\n---\nx\n")
    with pytest.raises(InvalidInputError, match="shared by the tenant"):
        store.write(BOB, "research/NVDA-2026-03.md", "x", {"user_id": "bob"})
    store.write(BOB, "users/bob/brief.md", "x", {"user_id": "bob"})
    assert store.list(ALICE, "users/**") == []


def test_tenants_never_meet_even_with_one_user_id(store: DocumentStore) -> None:
    _fill(store)
    assert store.list(ALICE_ELSEWHERE) == []
    with pytest.raises(NotFoundError):
        store.read_text(ALICE_ELSEWHERE, "user-profiles/alice.md")


def test_the_memory_tool_keeps_the_same_rules(store: DocumentStore) -> None:
    _fill(store)
    bob = MemoryTool(store, BOB)
    leaks = 0
    for path in PRIVATE:
        for command in (
            {"command": "view", "path": f"/memories/{path}"},
            {"command": "str_replace", "path": f"/memories/{path}", "old_str": SECRET,
             "new_str": "x"},
            {"command": "insert", "path": f"/memories/{path}", "insert_line": 0,
             "insert_text": "planted"},
            {"command": "delete", "path": f"/memories/{path}"},
            {"command": "rename", "old_path": f"/memories/{path}",
             "new_path": "/memories/conventions/stolen.md"},
            {"command": "create", "path": f"/memories/{path}", "file_text": "planted"},
        ):
            answer = bob.execute(command)
            leaks += SECRET in answer
    listing = bob.execute({"command": "view", "path": "/memories"})
    assert leaks == 0 and "alice" not in listing
    tools = {t.name: t for t in document_tools(store, BOB)}
    assert tools["list_documents"].invoke({"pattern": "**"}) == "conventions/style.md"
    found = tools["search_documents"].invoke({"query": SECRET})
    assert SECRET not in str(found)
    for path in PRIVATE:
        assert store.read(ALICE, path).content.endswith(f"{SECRET} note.\n")


def test_refusals_are_engram_errors(store: DocumentStore) -> None:
    _fill(store)
    for call in (
        lambda: store.write(BOB, "user-profiles/alice.md", "x"),
        lambda: store.read(BOB, "users/alice/notes/deep/n.md"),
    ):
        with pytest.raises(EngramError):
            call()
