"""One behaviour for every document store: the file store and PostgreSQL (real server)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from engram import ConflictError, InvalidInputError, NotFoundError, PathEscapeError, Principal
from engram.backends.files import FileDocumentStore
from engram.stores.documents import SCAFFOLD, Document, DocumentStore

ALICE = Principal("acme", "alice")
BOB = Principal("globex", "bob")

RATES = """# Rates

The ECB raised its deposit rate in July.

## Outlook

Inflation should fall back to target next year,
says the staff projection.
"""


def test_write_then_read_keeps_body_and_front_matter(store: DocumentStore) -> None:
    info = store.write(ALICE, "research/rates.md", RATES, {"title": "Rates", "tags": ["macro"]})
    assert info.path == "research/rates.md" and info.size > len(RATES)
    doc = store.read(ALICE, "research/rates.md")
    assert doc == Document("research/rates.md", RATES, {"title": "Rates", "tags": ["macro"]})
    assert store.read_text(ALICE, "research/rates.md").startswith("---\ntags:\n- macro\n")


def test_text_round_trips_byte_for_byte(store: DocumentStore) -> None:
    text = "---\ntitle:   Hand written\n---\nbody\n"
    store.write_text(ALICE, "notes.md", text)
    assert store.read_text(ALICE, "notes.md") == text
    assert store.read(ALICE, "notes.md").metadata == {"title": "Hand written"}


def test_overwrite_and_create_only(store: DocumentStore) -> None:
    store.write_text(ALICE, "a.md", "one")
    store.write_text(ALICE, "a.md", "two")
    assert store.read_text(ALICE, "a.md") == "two"
    with pytest.raises(ConflictError):
        store.write_text(ALICE, "a.md", "three", overwrite=False)
    assert store.read_text(ALICE, "a.md") == "two"


def test_files_and_folders_do_not_collide(store: DocumentStore) -> None:
    store.write_text(ALICE, "a.md", "file\n")
    store.write_text(ALICE, "dir/b.md", "inside\n")
    with pytest.raises(InvalidInputError):
        store.write_text(ALICE, "a.md/c.md", "under a file")
    with pytest.raises(InvalidInputError):
        store.write_text(ALICE, "dir", "over a folder")
    with pytest.raises(NotFoundError):
        store.read_text(ALICE, "a.md/c.md")
    assert [i.path for i in store.list(ALICE)] == ["a.md", "dir/b.md"]


def test_missing_document_is_not_found(store: DocumentStore) -> None:
    with pytest.raises(NotFoundError):
        store.read_text(ALICE, "nope.md")
    with pytest.raises(NotFoundError):
        store.delete(ALICE, "nope.md")
    with pytest.raises(NotFoundError):
        store.move(ALICE, "nope.md", "other.md")


def test_list_matches_globs(store: DocumentStore) -> None:
    for path in ["README.md", "research/a.md", "research/deep/b.md", "learnings/c.txt"]:
        store.write_text(ALICE, path, f"# {path}\n")
    assert [i.path for i in store.list(ALICE, "*")] == ["README.md"]
    assert [i.path for i in store.list(ALICE, "research/*.md")] == ["research/a.md"]
    assert [i.path for i in store.list(ALICE, "**/*.md")] == [
        "README.md",
        "research/a.md",
        "research/deep/b.md",
    ]
    assert len(store.list(ALICE)) == 4
    with pytest.raises(PathEscapeError):
        store.list(ALICE, "../*")


def test_delete_file_and_directory(store: DocumentStore) -> None:
    for path in ["keep.md", "old/a.md", "old/sub/b.md"]:
        store.write_text(ALICE, path, "x\n")
    assert store.delete(ALICE, "keep.md") == 1
    assert store.is_dir(ALICE, "old")
    assert store.delete(ALICE, "old") == 2
    assert store.list(ALICE) == []
    assert not store.is_dir(ALICE, "old")


def test_move_file_and_directory(store: DocumentStore) -> None:
    store.write_text(ALICE, "draft.md", "# Draft\n\nunique zebra paragraph\n")
    store.write_text(ALICE, "research/x.md", "x\n")
    store.move(ALICE, "draft.md", "learnings/final.md")
    assert store.read_text(ALICE, "learnings/final.md").startswith("# Draft")
    with pytest.raises(NotFoundError):
        store.read_text(ALICE, "draft.md")
    store.move(ALICE, "research", "archive/research")
    assert [i.path for i in store.list(ALICE)] == ["archive/research/x.md", "learnings/final.md"]
    with pytest.raises(ConflictError):
        store.move(ALICE, "learnings/final.md", "archive/research/x.md")
    with pytest.raises(InvalidInputError):
        store.move(ALICE, "archive", "archive/inner")
    hits = store.search(ALICE, "zebra")
    assert [h.path for h in hits] == ["learnings/final.md"]


def test_search_gives_path_heading_paragraph_and_lines(store: DocumentStore) -> None:
    store.write(ALICE, "research/rates.md", RATES, {"title": "Rates"})
    store.write_text(ALICE, "learnings/cooking.md", "# Cooking\n\nSalt the pasta water.\n")
    hits = store.search(ALICE, "inflation projection", k=3)
    assert hits, "expected a hit"
    top = hits[0]
    assert (top.path, top.heading) == ("research/rates.md", "Outlook")
    assert top.text == "Inflation should fall back to target next year,\nsays the staff projection."
    lines = store.read_text(ALICE, "research/rates.md").split("\n")
    assert lines[top.line_start - 1].startswith("Inflation")
    assert lines[top.line_end - 1] == "says the staff projection."
    assert all(h.path != "learnings/cooking.md" for h in store.search(ALICE, "inflation"))


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_every_search_mode_finds_the_paragraph(store: DocumentStore, mode: str) -> None:
    store.write_text(ALICE, "a.md", "# Alpha\n\nquarterly earnings beat estimates\n")
    store.write_text(ALICE, "b.md", "# Beta\n\nthe office plants need water\n")
    hits = store.search(ALICE, "earnings estimates", mode=mode)  # type: ignore[arg-type]
    assert hits and hits[0].path == "a.md"


PROGRESS = """# Progress

## Done

## Todo

- benchmark the rates model
"""


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
@pytest.mark.parametrize("query", ["done", "progress todo", "what is left to do"])
def test_a_heading_line_alone_is_never_a_passage(
    store: DocumentStore, mode: str, query: str
) -> None:
    store.write_text(ALICE, "progress.md", PROGRESS)
    hits = store.search(ALICE, query, mode=mode)  # type: ignore[arg-type]
    assert all(not h.text.lstrip().startswith("#") for h in hits), hits
    assert all(h.text == "- benchmark the rates model" for h in hits)
    found = store.search(ALICE, "todo", mode="keyword")
    assert [(h.heading, h.text) for h in found] == [("Todo", "- benchmark the rates model")]


def test_rewrite_replaces_indexed_paragraphs(store: DocumentStore) -> None:
    store.write_text(ALICE, "a.md", "walrus facts\n")
    store.write_text(ALICE, "a.md", "penguin facts\n")
    assert store.search(ALICE, "walrus", mode="keyword") == []
    assert [h.path for h in store.search(ALICE, "penguin", mode="keyword")] == ["a.md"]
    store.delete(ALICE, "a.md")
    assert store.search(ALICE, "penguin", mode="keyword") == []


def test_tenants_do_not_see_each_other(store: DocumentStore) -> None:
    store.write_text(ALICE, "secret.md", "acme merger plans\n")
    with pytest.raises(NotFoundError):
        store.read_text(BOB, "secret.md")
    assert store.list(BOB) == []
    assert store.search(BOB, "merger plans") == []
    with pytest.raises(NotFoundError):
        store.delete(BOB, "secret.md")
    assert store.read_text(ALICE, "secret.md") == "acme merger plans\n"


def test_init_scaffolds_the_layout_once(store: DocumentStore) -> None:
    store.write_text(ALICE, "README.md", "mine\n")
    created = store.init(ALICE)
    assert set(created) == set(SCAFFOLD) - {"README.md"}
    assert store.read_text(ALICE, "README.md") == "mine\n"
    assert "## Next" in store.read_text(ALICE, "PROGRESS.md")
    assert store.init(ALICE) == []
    assert all(store.is_dir(ALICE, d) for d in ["research", "learnings", "user-profiles"])


@pytest.mark.parametrize("bad", ["../x.md", "/etc/passwd", "a/../../x", "a\x00b", "C:/x"])
def test_escaping_paths_are_refused(store: DocumentStore, bad: str) -> None:
    with pytest.raises(PathEscapeError):
        store.write_text(ALICE, bad, "x")
    with pytest.raises(PathEscapeError):
        store.read_text(ALICE, bad)


@pytest.mark.parametrize("bad", ["", "a//b", "./a", ".hidden", "a\u202eb", "a\nb", " a"])
def test_odd_paths_are_invalid(store: DocumentStore, bad: str) -> None:
    with pytest.raises(InvalidInputError):
        store.write_text(ALICE, bad, "x")


def test_paths_are_nfc_normalised(store: DocumentStore) -> None:
    decomposed = unicodedata.normalize("NFD", "café.md")
    store.write_text(ALICE, decomposed, "du café\n")
    assert store.read_text(ALICE, "café.md") == "du café\n"
    assert [i.path for i in store.list(ALICE)] == ["café.md"]


def test_a_filtered_vector_search_still_returns_k_among_many_tenants(
    store: DocumentStore,
) -> None:
    tenants = [Principal(f"tenant{n}", "u") for n in range(12)]
    for tenant in tenants:
        for d in range(6):
            store.write_text(tenant, f"d{d}.md", f"market note {tenant.tenant_id} {d}\n")
    hits = store.search(tenants[5], "market note", k=5, mode="semantic")
    assert len(hits) == 5
    assert all("tenant5" in hit.text for hit in hits)


@pytest.mark.parametrize("backend", ["files", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_keyword_search_needs_no_embedder(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "files":
        store: DocumentStore = FileDocumentStore(home=tmp_path)
    else:
        from engram.backends.postgres.documents import PostgresDocumentStore

        store = PostgresDocumentStore(request.getfixturevalue("app_url"))
    with store:
        store.write_text(ALICE, "a.md", "# Alpha\n\nthe gearbox rattles\n")
        assert [h.path for h in store.search(ALICE, "gearbox")] == ["a.md"]
        assert store.search(ALICE, "gearbox", mode="semantic") == []


@pytest.mark.parametrize(
    "metadata",
    [
        {"title": "bad \ud800 title"},
        {"title": "a\x00b"},
        {"title": "a\x1bb"},
        {"title": "a\x85b"},
        {"title": "a\u2028b"},
        {"tags": ["ok", "bad \udfff"]},
        {"bad \ud800 key": "value"},
    ],
)
def test_metadata_that_cannot_round_trip_is_refused_before_anything_is_written(
    store: DocumentStore, metadata: dict[str, object]
) -> None:
    """A lone surrogate, a control character or a character YAML reads as a line break in
    a metadata key or value: a typed error, and no file."""
    with pytest.raises(InvalidInputError):
        store.write(ALICE, "notes/bad.md", "hello there", metadata)
    assert store.list(ALICE, "notes/**") == []


@pytest.mark.parametrize(
    "front",
    ['title: "x \\uD800 y"', 'title: "a\\x00b"', 'title: "a\\u0085b"', 'tags: ["\\uDFFF"]'],
)
def test_front_matter_escapes_that_decode_to_bad_characters_are_refused(
    store: DocumentStore, front: str
) -> None:
    """The text is plain ASCII, but its YAML escapes decode to a lone surrogate or a control
    character: refused like the metadata itself."""
    text = f"---\n{front}\n---\nhello there\n"
    with pytest.raises(InvalidInputError):
        store.write_text(ALICE, "notes/bad.md", text)
    assert store.list(ALICE, "notes/**") == []


def _alias_bomb(levels: int) -> str:
    lines = ["l0: &l0 [a, a, a, a, a, a, a, a, a, a]"]
    for n in range(1, levels + 1):
        lines.append(f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]")
    return "\n".join(lines)


@pytest.mark.parametrize(
    "front",
    [
        _alias_bomb(6),
        "a: &a [*a]",
        "- 1\n- 2",
        ": :\n- [",
        "!!python/object:os.system x",
        "deep: " + "[" * 200 + "]" * 200,
    ],
)
def test_front_matter_a_reader_cannot_take_cheaply_is_invalid_input(
    store: DocumentStore, front: str
) -> None:
    """YAML aliases (a few hundred bytes that expand to millions of nodes, or refer to
    themselves), front matter that is no mapping, malformed YAML and nesting past any
    metadata's depth: a typed error at once, and no file."""
    with pytest.raises(InvalidInputError):
        store.write_text(ALICE, "notes/bad.md", f"---\n{front}\n---\nhello there\n")
    assert store.list(ALICE, "notes/**") == []


def test_a_shared_document_naming_another_user_is_hidden_everywhere_alike(
    store: DocumentStore,
) -> None:
    """A document on a shared path whose front matter names a user (written before paths
    said whose a document is, or by hand): read, list, search and a folder's delete treat
    it as missing for every other user of the tenant, as they do for a private one."""
    alice, bob = Principal("acme", "alice"), Principal("acme", "bob")
    text = "---\nuser_id: alice\n---\nAlice is allergic to penicillin.\n"
    store._write_text(alice, "notes/alice-health.md", text)  # (the tier's checks bypassed)
    store.write_text(bob, "notes/menu.md", "The canteen serves penicillin-free soup.\n")
    with pytest.raises(NotFoundError):
        store.read_text(bob, "notes/alice-health.md")
    assert [i.path for i in store.list(bob, "notes/*")] == ["notes/menu.md"]
    assert {h.path for h in store.search(bob, "penicillin allergic")} == {"notes/menu.md"}
    assert [i.path for i in store.list(alice, "notes/*")] == [
        "notes/alice-health.md",
        "notes/menu.md",
    ]
    assert "notes/alice-health.md" in {h.path for h in store.search(alice, "penicillin")}
    assert store.delete(bob, "notes") == 1
    assert [i.path for i in store.list(alice, "notes/*")] == ["notes/alice-health.md"]
