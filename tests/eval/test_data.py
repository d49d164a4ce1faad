"""Loaders read the real shared benchmark files."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.errors import ConfigError
from engram.eval import load_locomo, load_longmemeval
from engram.eval._data import normalise_evidence


def test_locomo_has_ten_conversations_in_session_order(data_root: Path) -> None:
    conversations = load_locomo(data_root)
    assert len(conversations) == 10
    assert sum(len(c.turns) for c in conversations) == 5882
    assert sum(len(c.questions) for c in conversations) == 1986
    first = conversations[0]
    assert first.turns[0].id == "D1:1" and first.turns[0].speaker == "Caroline"
    assert first.turns[0].date == "1:56 pm on 8 May, 2023"
    sessions = [int(t.session[1:]) for t in first.turns]
    assert sessions == sorted(sessions)


def test_locomo_evidence_names_real_turns(data_root: Path) -> None:
    for conversation in load_locomo(data_root / "locomo" / "locomo10.json"):
        ids = {t.id for t in conversation.turns}
        for question in conversation.questions:
            assert set(question.evidence) <= ids
    unscored = [q for c in load_locomo(data_root) for q in c.questions if not q.evidence]
    assert len(unscored) == 4


def test_photo_captions_are_part_of_the_turn(data_root: Path) -> None:
    turn = next(t for t in load_locomo(data_root)[0].turns if t.id == "D1:5")
    assert "[shares a photo:" in turn.text


@pytest.mark.parametrize(
    ("raw", "ids"),
    [
        ("D1:3", ["D1:3"]),
        ("D8:6; D9:17", ["D8:6", "D9:17"]),
        ("D:11:26", ["D11:26"]),
        ("D30:05", ["D30:5"]),
        ("D9:1 D4:4", ["D9:1", "D4:4"]),
        ("D", []),
    ],
)
def test_evidence_strings_are_normalised(raw: str, ids: list[str]) -> None:
    assert normalise_evidence(raw) == ids


def test_longmemeval_pools_user_turns_and_skips_abstention(data_root: Path) -> None:
    haystack = load_longmemeval(data_root)
    assert len(haystack.questions) == 95
    assert not any(q.id.endswith("_abs") for q in haystack.questions)
    assert len(haystack.turns) == 1088
    assert all(t.speaker == "user" for t in haystack.turns)
    sessions = {t.session for t in haystack.turns}
    assert len(sessions) == 186
    for question in haystack.questions:
        assert set(question.evidence) <= sessions and question.date
    assert len(load_longmemeval(data_root, include_abstention=True).questions) == 97


def test_missing_data_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_locomo(tmp_path)


def test_haystack_selection_by_index() -> None:
    from engram.errors import InvalidInputError
    from engram.eval._benchmarks import parse_indices

    assert parse_indices("0-4", 10) == [0, 1, 2, 3, 4]
    assert parse_indices("5,7, 9", 10) == [5, 7, 9]
    assert parse_indices("1-2,2,8", 10) == [1, 2, 8]
    for bad in ("", "3-", "a", "1-2-3", "4-2", "10"):
        with pytest.raises(InvalidInputError):
            parse_indices(bad, 10)
