"""Large front matter: refused on write past its cap without being parsed (a megabyte of
it once took a minute of pure-Python YAML, parsed twice per write), read as body text in
a file saved by hand, and parsed once per write below the cap."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from engram import InvalidInputError, Principal
from engram.backends.files import FileDocumentStore
from engram.stores.documents import DocumentStore, markdown
from engram.stores.documents.markdown import MAX_FRONT_MATTER, split_front_matter

ALICE = Principal("acme", "alice")


def _front(size: int) -> str:
    """Front matter of about ``size`` bytes (lines of ``kNNNNN: value``)."""
    lines = [f"k{n:06d}: value {n}" for n in range(size // 16 + 1)]
    return "\n".join(lines)[:size].rsplit("\n", 1)[0]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The size of each front matter YAML is asked to read."""
    seen: list[int] = []
    load = markdown._load_yaml

    def counted(raw: str) -> dict[str, Any]:
        seen.append(len(raw))
        return load(raw)

    monkeypatch.setattr(markdown, "_load_yaml", counted)
    yield seen


def test_front_matter_past_the_cap_is_refused_unread(
    store: DocumentStore, parses: list[int]
) -> None:
    for size in (MAX_FRONT_MATTER + 100, 1_100_000):
        text = f"---\n{_front(size)}\n---\n# Notes\n\nbody\n"
        with pytest.raises(InvalidInputError, match="front matter"):
            store.write_text(ALICE, "research/big.md", text)
        with pytest.raises(InvalidInputError, match="front matter"):
            store.write(ALICE, "research/big.md", "body", metadata={"notes": "x" * size})
    assert parses == []
    assert not store.exists(ALICE, "research/big.md")


def test_front_matter_below_the_cap_is_parsed_once_per_write(
    store: DocumentStore, parses: list[int]
) -> None:
    front = _front(MAX_FRONT_MATTER - 100)
    store.write_text(ALICE, "research/fits.md", f"---\n{front}\n---\n# Notes\n\nbody\n")
    assert len(parses) == 1
    document = store.read(ALICE, "research/fits.md")
    assert document.metadata["k000000"] == "value 0" and "body" in document.content


def test_a_file_saved_by_hand_past_the_cap_is_body_text(store: DocumentStore) -> None:
    text = f"---\nwhere: zanzibar\n{_front(MAX_FRONT_MATTER + 100)}\n---\n# Notes\n\nbody\n"
    if isinstance(store, FileDocumentStore):
        file = store.root(ALICE) / "research" / "hand.md"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(text.encode("utf-8"))
    else:
        store._write_text(ALICE, "research/hand.md", text)
    assert store.read_text(ALICE, "research/hand.md") == text
    assert store.read(ALICE, "research/hand.md").metadata == {}
    hits = store.search(ALICE, "zanzibar", k=3, mode="keyword")
    assert [h.path for h in hits] == ["research/hand.md"]


def test_the_cap_counts_utf8_bytes() -> None:
    wide = "k: " + "é" * (MAX_FRONT_MATTER // 2)  # fewer characters than the cap, more bytes
    with pytest.raises(InvalidInputError, match="front matter"):
        split_front_matter(f"---\n{wide}\n---\nbody\n")
    assert split_front_matter("---\nk: é\n---\nbody\n") == ({"k": "é"}, "body\n", 3)


def test_the_c_parser_reads_front_matter_when_pyyaml_has_it() -> None:
    expected = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    assert markdown._LOADER is expected
