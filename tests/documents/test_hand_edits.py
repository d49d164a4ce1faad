"""Files people save by hand, or rows written before today's rules, break nothing: front
matter engram cannot read is body text, a name or depth the path rules refuse is left
out of the index (and reported), never served for another path; and compare-and-swap
sees every byte a person changed."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from engram import InvalidInputError, NotFoundError, Principal, StaleWriteError
from engram.backends.files import FileDocumentStore
from engram.stores.documents import DocumentStore, digest_of, sync
from engram.stores.documents.paths import MAX_DEPTH

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")

UNREADABLE = {
    "impossible date": "date: 2024-02-30",
    "impossible timestamp tag": "when: !!timestamp 2024-13-45",
    "5000-digit integer": "n: " + "9" * 5000,
    "3000 nested lists": "a: " + "[" * 3000 + "]" * 3000,
    "3000 nested mappings": "a: " + "{x: " * 3000 + "1" + "}" * 3000,
}


def _plant(store: DocumentStore, path: str, text: str) -> None:
    """Put ``text`` at ``path`` as a person (files) or an older engram (a row) did,
    past the checks of ``write_text``."""
    if isinstance(store, FileDocumentStore):
        file = store.root(ALICE).joinpath(*path.split("/"))
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(text.encode("utf-8"))
    else:
        store._write_text(ALICE, path, text)


@pytest.mark.parametrize("front", UNREADABLE.values(), ids=list(UNREADABLE))
def test_front_matter_that_cannot_be_read_is_refused_on_write(
    store: DocumentStore, front: str
) -> None:
    text = f"---\n{front}\n---\n# Notes\n\nbody text\n"
    with pytest.raises(InvalidInputError, match=r"front matter|nests deeper"):
        store.write_text(ALICE, "research/api.md", text)
    assert not store.exists(ALICE, "research/api.md")


@pytest.mark.parametrize("front", UNREADABLE.values(), ids=list(UNREADABLE))
def test_a_saved_file_whose_front_matter_cannot_be_read_is_body_text(
    store: DocumentStore, front: str
) -> None:
    store.write(ALICE, "README.md", "# Project\n\nWhere things are kept.\n")
    text = f"---\n{front}\n---\n# Minutes\n\nteam sync weekly\n"
    _plant(store, "research/minutes.md", text)
    for who in (ALICE, BOB):
        assert [i.path for i in store.list(who)] == ["README.md", "research/minutes.md"]
        document = store.read(who, "research/minutes.md")
        assert document.metadata == {} and document.content == text
        hits = store.search(who, "team sync weekly", mode="keyword")
        assert [h.path for h in hits] == ["research/minutes.md"]
    digest = digest_of(text)
    store.write_text(ALICE, "research/minutes.md", "# Minutes\n\nfixed\n", expected=digest)


def test_front_matter_after_a_byte_order_mark_is_front_matter(store: DocumentStore) -> None:
    text = "\ufeff---\nuser: bob\n---\n# Bob\n\nbob private zanzibar\n"
    with pytest.raises(InvalidInputError, match="shared by the tenant"):
        store.write_text(BOB, "research/bom.md", text)
    with pytest.raises(InvalidInputError, match="not its front matter"):
        store.write_text(ALICE, "users/alice/bom.md", text)
    _plant(store, "research/bom.md", text)
    with pytest.raises(NotFoundError):
        store.read_text(ALICE, "research/bom.md")
    assert store.list(ALICE) == [] and store.search(ALICE, "zanzibar") == []
    assert store.read(BOB, "research/bom.md").metadata == {"user": "bob"}
    assert store.read(BOB, "research/bom.md").content == "# Bob\n\nbob private zanzibar\n"


def test_compare_and_swap_sees_an_edit_of_the_front_matter_alone(store: DocumentStore) -> None:
    read = store.write(ALICE, "research/r.md", "# R\n\nbody\n", {"title": "R"})
    seen = store.read_text(ALICE, "research/r.md")
    assert read.digest == digest_of(seen)
    edited = seen.replace("title: R\n", "# DO NOT PUBLISH - legal hold (Carol)\ntitle: R\n")
    for person in (edited, seen.replace("title: R", "title:  R")):
        store.write_text(ALICE, "research/r.md", person)
        with pytest.raises(StaleWriteError):
            store.write_text(ALICE, "research/r.md", seen + "more\n", expected=digest_of(seen))
        assert store.read_text(ALICE, "research/r.md") == person
    assert store.list(ALICE)[0].digest == digest_of(store.read_text(ALICE, "research/r.md"))


def test_sync_copies_an_edit_of_the_front_matter_alone(tmp_path: Path) -> None:
    with (
        FileDocumentStore(home=tmp_path / "a") as source,
        FileDocumentStore(home=tmp_path / "b") as target,
    ):
        source.write(ALICE, "research/r.md", "# R\n\nbody\n", {"title": "R"})
        sync(source, target, ALICE)
        file = source.root(ALICE) / "research/r.md"
        file.write_text(file.read_text().replace("title: R\n", "# legal hold\ntitle: R\n"))
        assert sync(source, target, ALICE).upserted == ("research/r.md",)
        assert "# legal hold" in target.read_text(ALICE, "research/r.md")


def _every_listed_path_serves_its_own_file(store: FileDocumentStore, who: Principal) -> None:
    root = store.root(who)
    listed = [i.path for i in store.list(who)]
    for path in listed:
        on_disk = root.joinpath(*path.split("/")).read_bytes().decode("utf-8")
        assert store.read_text(who, path) == on_disk
    for hit in store.search(who, "zanzibar cafe version", k=50):
        assert hit.path in listed and hit.text in store.read_text(who, hit.path)


def test_a_name_saved_in_nfd_is_never_read_as_another_file(
    file_store: FileDocumentStore,
) -> None:
    file_store.write(ALICE, "users/alice/notes.md", "# N\n\nhello\n")
    folder = file_store.root(ALICE) / "users" / "alice"
    nfd, nfc = (unicodedata.normalize(form, "café.md") for form in ("NFD", "NFC"))
    (folder / nfd).write_text("# Cafe\n\nalice secret zanzibar\n")
    report = file_store.refresh(ALICE)
    listed = [i.path for i in file_store.list(ALICE)]
    assert all(unicodedata.is_normalized("NFC", path) for path in listed)
    if f"users/alice/{nfc}" in listed:  # a file system that folds the two spellings
        assert file_store.read_text(ALICE, f"users/alice/{nfc}").endswith("zanzibar\n")
    else:
        assert report.skipped == (f"users/alice/{nfd}",)
    _every_listed_path_serves_its_own_file(file_store, ALICE)
    file_store.write(ALICE, f"users/alice/{nfc}", "NFC version\n")  # a twin, where it can be
    assert file_store.read_text(ALICE, f"users/alice/{nfc}") == "NFC version\n"
    _every_listed_path_serves_its_own_file(file_store, ALICE)
    assert file_store.delete(ALICE, f"users/alice/{nfc}") == 1


def test_a_folder_nested_deeper_than_the_rules_allow_breaks_no_listing(
    file_store: FileDocumentStore,
) -> None:
    file_store.write(BOB, "users/bob/b.md", "# B\n\nbob note\n")
    deep = file_store.root(BOB).joinpath(*["archive"] * (MAX_DEPTH + 1))
    deep.mkdir(parents=True)
    (deep / "old.md").write_text("# Old\n\nold stuff\n")
    allowed = file_store.root(BOB).joinpath(*["kept"] * (MAX_DEPTH - 1))
    allowed.mkdir(parents=True)
    (allowed / "ok.md").write_text("# Ok\n\nold stuff\n")
    kept = "kept/" * (MAX_DEPTH - 1) + "ok.md"
    assert [i.path for i in file_store.list(BOB)] == [kept, "users/bob/b.md"]
    assert [h.path for h in file_store.search(BOB, "old stuff", mode="keyword")] == [kept]
    assert file_store.refresh(BOB).skipped == ("archive/" * MAX_DEPTH,)
    assert file_store.read(BOB, kept).content == "# Ok\n\nold stuff\n"
    assert file_store.delete(BOB, "archive") == 0 and not deep.exists()
