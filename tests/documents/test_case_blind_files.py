"""On a file system that ignores case (macOS and Windows by default), tenant "Acme" and
tenant "acme", or users "Bob" and "bob", would share one folder and read each other's
documents: the file store refuses ids with capitals there, and serves them elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import Principal
from engram.backends.files import _safepath
from engram.backends.files.documents import FileDocumentStore
from engram.errors import InvalidInputError
from engram.recall import HashEmbedder


def _store(tmp_path: Path) -> FileDocumentStore:
    return FileDocumentStore(home=tmp_path / ".engram", embedder=HashEmbedder())


def _blind(monkeypatch: pytest.MonkeyPatch, blind: bool) -> None:
    """Make the probe answer ``blind`` (this machine's file system answers one way only)."""
    monkeypatch.setattr(_safepath, "ignores_case", lambda base: blind)
    monkeypatch.setattr("engram.backends.files.documents.ignores_case", lambda base: blind)


@pytest.mark.parametrize(
    "who", [Principal("Acme", "bob"), Principal("acme", "Bob"), Principal("ACME", "BOB")]
)
def test_ids_with_capitals_are_refused_where_case_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, who: Principal
) -> None:
    _blind(monkeypatch, True)
    with _store(tmp_path) as store:
        store.write(Principal("acme", "bob"), "users/bob/notes.md", "bob's own notes\n")
        store.write(Principal("acme", "bob"), "research/rates.md", "# Rates\n")
        for attempt in (
            lambda: store.read(who, "research/rates.md"),
            lambda: store.read(who, f"users/{who.user_id}/notes.md"),
            lambda: store.list(who),
            lambda: store.search(who, "notes"),
            lambda: store.write(who, f"users/{who.user_id}/x.md", "x\n"),
        ):
            with pytest.raises(InvalidInputError, match="ignores case"):
                attempt()


def test_lower_case_ids_work_where_case_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _blind(monkeypatch, True)
    with _store(tmp_path) as store:
        who = Principal("acme", "bob")
        store.write(who, "users/bob/notes.md", "notes\n")
        assert [i.path for i in store.list(who)] == ["users/bob/notes.md"]


def test_ids_with_capitals_are_their_own_where_case_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _blind(monkeypatch, False)
    with _store(tmp_path) as store:
        store.write(Principal("acme", "bob"), "users/bob/notes.md", "lower\n")
        store.write(Principal("acme", "Bob"), "users/Bob/notes.md", "upper\n")
        assert store.read(Principal("acme", "Bob"), "users/Bob/notes.md").content == "upper\n"
        assert [i.path for i in store.list(Principal("acme", "Bob"))] == ["users/Bob/notes.md"]


def test_the_probe_answers_as_the_file_system_does_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "marker").write_text("x")
    expected = (tmp_path / "MARKER").exists()
    assert _safepath.ignores_case(tmp_path) is expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marker"]
    assert _safepath.ignores_case(tmp_path / "missing") is False
