"""Loaders read LoCoMo and LongMemEval files: the stand-ins the tests write (every quirk of
the formats) and, when present, the real files (their published sizes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_files import (
    CAPTION,
    LOCOMO,
    LOCOMO_DATES,
    LONGMEMEVAL,
    LONGMEMEVAL_FILE,
    TURNS_PER_SESSION,
)

from engram.errors import ConfigError, InvalidInputError
from engram.eval import _data, default_data_root, load_locomo, load_longmemeval
from engram.eval._data import DATA_ENV, normalise_evidence

# --- the stand-ins: every quirk of the formats ------------------------------------------


def test_locomo_turns_follow_session_numbers_not_file_order(fixture_data: Path) -> None:
    conversations = load_locomo(fixture_data)
    assert len(conversations) == LOCOMO.conversations
    assert sum(len(c.turns) for c in conversations) == LOCOMO.turns
    first = conversations[0]
    assert [t.session for t in first.turns[::6]] == ["S1", "S2", "S10"]  # file: 1, 10, 2
    assert first.turns[0].id == "D1:1" and first.turns[0].speaker == "Bob0"
    assert {t.date for t in first.turns if t.session == "S10"} == {LOCOMO_DATES[10]}
    assert len({t.id for c in conversations for t in c.turns}) == len(first.turns)


def test_locomo_evidence_forms_are_read_and_unknown_turns_dropped(fixture_data: Path) -> None:
    questions = {q.text: q for q in load_locomo(fixture_data)[0].questions}
    evidence = {q.id.split("/")[1]: q.evidence for q in questions.values()}
    assert evidence["q5"] == ("D1:2", "D2:3")  # "D1:2; D2:3"
    assert evidence["q6"] == ("D10:3",)  # "D:10:3"
    assert evidence["q7"] == ("D2:5",)  # "D2:05" kept, "D9:99" names no turn
    assert evidence["q9"] == ()  # "D": kept as a question, never scored
    assert len(questions) == LOCOMO.questions // LOCOMO.conversations


def test_locomo_categories_and_unscored_questions(fixture_data: Path) -> None:
    questions = [q for c in load_locomo(fixture_data) for q in c.questions]
    assert len(questions) == LOCOMO.questions
    assert sum(1 for q in questions if not q.evidence) == LOCOMO.unscored
    scored: dict[str, int] = {}
    for q in questions:
        if q.evidence:
            scored[q.category] = scored.get(q.category, 0) + 1
    assert scored == LOCOMO.categories  # integer categories read as "1".."5"
    assert len({q.id for q in questions}) == len(questions)


def test_locomo_photo_captions_join_the_turn_and_summaries_stay_out(fixture_data: Path) -> None:
    turns = [t for c in load_locomo(fixture_data) for t in c.turns]
    photo = next(t for t in turns if t.id == "D2:2")
    assert photo.text.endswith(f"[shares a photo: {CAPTION}]")
    assert sum("[shares a photo:" in t.text for t in turns) == 9  # index 2 of every session
    assert not any("SUMMARYONLY" in t.text or "example.org" in t.text for t in turns)


def test_longmemeval_pools_user_turns_once_in_time_order(fixture_data: Path) -> None:
    haystack = load_longmemeval(fixture_data / LONGMEMEVAL_FILE)
    assert len(haystack.turns) == LONGMEMEVAL.user_turns  # the shared session only once
    assert {t.speaker for t in haystack.turns} == {"user"}
    sessions = {t.session for t in haystack.turns}
    assert len(sessions) == LONGMEMEVAL.sessions
    keys = [(t.date, t.session, int(t.id.rsplit("#", 1)[1])) for t in haystack.turns]
    assert keys == sorted(keys) and haystack.turns[0].session == "sharedsession_1"
    assert [t.id for t in haystack.turns[:3]] == [f"sharedsession_1#{i}" for i in (0, 2, 4)]


def test_longmemeval_with_the_assistant_holds_both_speakers_in_turn_order(
    fixture_data: Path,
) -> None:
    """``assistant=True`` keeps the assistant's replies between the user's turns (a chat
    log of two speakers); the questions and their evidence are the same."""
    users = load_longmemeval(fixture_data)
    both = load_longmemeval(fixture_data, assistant=True)
    assert len(both.turns) == 2 * LONGMEMEVAL.user_turns  # a reply after every message
    assert {t.speaker for t in both.turns} == {"user", "assistant"}
    assert [t for t in both.turns if t.speaker == "user"] == list(users.turns)
    assert [(t.id, t.speaker) for t in both.turns[:3]] == [
        ("sharedsession_1#0", "user"),
        ("sharedsession_1#1", "assistant"),
        ("sharedsession_1#2", "user"),
    ]
    assert both.questions == users.questions
    from engram.eval._benchmarks import load

    with pytest.raises(InvalidInputError, match="locomo has no assistant turns"):
        load("locomo", fixture_data, None, assistant=True)


def test_longmemeval_questions_name_sessions_and_skip_abstention(fixture_data: Path) -> None:
    haystack = load_longmemeval(fixture_data)
    assert len(haystack.questions) == LONGMEMEVAL.questions
    types: dict[str, int] = {}
    for question in haystack.questions:
        assert not question.id.endswith("_abs") and question.date
        assert set(question.evidence) <= {t.session for t in haystack.turns}
        types[question.category] = types.get(question.category, 0) + 1
    assert types == LONGMEMEVAL.types
    assert [len(q.evidence) for q in haystack.questions if q.category == "multi-session"] == [2, 2]
    every = load_longmemeval(fixture_data, include_abstention=True).questions
    assert len(every) == LONGMEMEVAL.questions + LONGMEMEVAL.abstention


def test_a_file_of_the_wrong_shape_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "locomo10.json").write_text('{"sample_id": "x"}')
    (tmp_path / "longmemeval_oracle_sample_seed_42.json").write_text("[1, 2")
    with pytest.raises(InvalidInputError, match="list of samples"):
        load_locomo(tmp_path)
    with pytest.raises(InvalidInputError, match="cannot read"):
        load_longmemeval(tmp_path)


# --- where the data is found ----------------------------------------------------------


def test_the_environment_variable_names_the_data(
    fixture_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_ENV, str(fixture_data))
    assert default_data_root() == fixture_data
    assert len(load_locomo()) == LOCOMO.conversations
    assert len(load_longmemeval().questions) == LONGMEMEVAL.questions


def test_an_environment_variable_naming_no_folder_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "typo"))
    with pytest.raises(ConfigError, match=f"{DATA_ENV}=.*typo is not a folder"):
        load_locomo()


def test_shared_data_beside_the_working_directory_is_the_default(
    fixture_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(fixture_data)
    (tmp_path / "repo").mkdir()
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.chdir(tmp_path / "repo")
    assert default_data_root() == fixture_data.resolve()


def test_no_data_anywhere_is_one_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_data, "_beside_checkout", lambda: [tmp_path / "none"])
    with pytest.raises(ConfigError, match=f"set \\${DATA_ENV}") as caught:
        load_locomo()
    assert "\n" not in str(caught.value)


# --- the real files (skipped without them, required in CI) -------------------------------


def test_real_locomo_has_ten_conversations_in_session_order(real_data: Path) -> None:
    conversations = load_locomo(real_data)
    assert len(conversations) == 10
    assert sum(len(c.turns) for c in conversations) == 5882
    assert sum(len(c.questions) for c in conversations) == 1986
    first = conversations[0]
    assert first.turns[0].id == "D1:1" and first.turns[0].speaker == "Caroline"
    assert first.turns[0].date == "1:56 pm on 8 May, 2023"
    sessions = [int(t.session[1:]) for t in first.turns]
    assert sessions == sorted(sessions)


def test_real_locomo_evidence_names_real_turns(real_data: Path) -> None:
    for conversation in load_locomo(real_data / "locomo" / "locomo10.json"):
        ids = {t.id for t in conversation.turns}
        for question in conversation.questions:
            assert set(question.evidence) <= ids
    unscored = [q for c in load_locomo(real_data) for q in c.questions if not q.evidence]
    assert len(unscored) == 4


def test_real_photo_captions_are_part_of_the_turn(real_data: Path) -> None:
    turn = next(t for t in load_locomo(real_data)[0].turns if t.id == "D1:5")
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


def test_real_longmemeval_pools_user_turns_and_skips_abstention(real_data: Path) -> None:
    haystack = load_longmemeval(real_data)
    assert len(haystack.questions) == 95
    assert not any(q.id.endswith("_abs") for q in haystack.questions)
    assert len(haystack.turns) == 1088
    assert all(t.speaker == "user" for t in haystack.turns)
    sessions = {t.session for t in haystack.turns}
    assert len(sessions) == 186
    for question in haystack.questions:
        assert set(question.evidence) <= sessions and question.date
    assert len(load_longmemeval(real_data, include_abstention=True).questions) == 97


def test_missing_data_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_locomo(tmp_path)


def test_haystack_selection_by_index() -> None:
    from engram.eval._benchmarks import parse_indices

    assert parse_indices("0-4", 10) == [0, 1, 2, 3, 4]
    assert parse_indices("5,7, 9", 10) == [5, 7, 9]
    assert parse_indices("1-2,2,8", 10) == [1, 2, 8]
    for bad in ("", "3-", "a", "1-2-3", "4-2", "10"):
        with pytest.raises(InvalidInputError):
            parse_indices(bad, 10)


def test_distractors_put_other_conversations_in_each_memory(fixture_data: Path) -> None:
    """Each conversation keeps its own turns, questions and evidence, and holds the next
    conversations' turns too (wrapping round), their ids and sessions set apart, with
    the sessions interleaved rather than appended."""
    from engram.eval._benchmarks import load

    _, plain = load("locomo", fixture_data, None)
    _, mixed = load("locomo", fixture_data, None, "1-2", distractors=2)
    assert [c.id for c in mixed] == [plain[1].id, plain[2].id]
    for conversation, others in zip(
        mixed, ([plain[2], plain[0]], [plain[0], plain[1]]), strict=True
    ):
        own = next(c for c in plain if c.id == conversation.id)
        assert conversation.questions == own.questions
        ids = [t.id for t in conversation.turns]
        assert len(set(ids)) == len(ids) == len(own.turns) + sum(len(o.turns) for o in others)
        assert [t for t in conversation.turns if t.id in {u.id for u in own.turns}] == list(
            own.turns
        )
        for other in others:
            theirs = [t for t in conversation.turns if t.id.startswith(f"{other.id}/")]
            assert [t.text for t in theirs] == [t.text for t in other.turns]
            assert {t.session for t in theirs}.isdisjoint(t.session for t in own.turns)
        evidence = {e for q in own.questions for e in q.evidence}
        assert evidence <= {t.id for t in own.turns}
        first = [t.session for t in conversation.turns[: 3 * TURNS_PER_SESSION]]
        assert len({s.split("/")[0] for s in first}) == 3  # one session of each, then on
    with pytest.raises(InvalidInputError, match="distractors"):
        load("locomo", fixture_data, None, distractors=len(plain))
    with pytest.raises(InvalidInputError, match="distractors must be 0"):
        load("longmemeval", fixture_data, None, distractors=1)
