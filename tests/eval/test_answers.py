"""Answer-level evaluation with offline chat models: a deterministic answerer that can only
answer from the memory block it is given, and a judge comparing against the gold answer.

The stand-in LoCoMo questions ask about one object each; their gold answer is "in the
attic", which only the evidence turn's text holds next to that object. So an answer is
CORRECT exactly when the evidence was in the context the model read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fake_models
import pytest
from click.testing import CliRunner

from engram.cli import main
from engram.errors import ConfigError
from engram.eval import AnswerSettings, chat_model, load_locomo, load_longmemeval, run_benchmark
from engram.eval._answers import UNJUDGED
from engram.eval._judge import Verdict, parse_verdict

BM25 = "bm25"
PLAIN = "in the attic"


def _run(data: Path, limit: int = 12, **settings: Any) -> dict[str, Any]:
    models = {"answer_model": fake_models.answerer(), "judge_model": fake_models.judge()}
    answers = AnswerSettings(**{**models, "methods": (BM25,), **settings})
    return run_benchmark("locomo", data=data, limit=limit, embedder="hash", answers=answers)


def _log(result: dict[str, Any]) -> list[dict[str, Any]]:
    return list(result["answer_log"])


def test_loaders_read_the_gold_answers(fixture_data: Path) -> None:
    questions = [q for c in load_locomo(fixture_data) for q in c.questions]
    assert {q.answer for q in questions if q.category != "5"} == {PLAIN, "2022", "yes", "no", "n/a"}
    assert {q.answer for q in questions if q.category == "5"} == {""}
    assert {q.answer for q in load_longmemeval(fixture_data).questions} == {"with a cloth"}


def test_accuracy_follows_the_evidence_in_the_context(fixture_data: Path) -> None:
    result = _run(fixture_data, budget=2000)
    row = result["methods"][BM25]["1-4"]
    # 12 scored questions: one adversarial (no gold answer, not asked); of the 11 asked,
    # 8 have the gold "in the attic", 3 a gold (2022, yes, no) no turn states.
    assert (row["qa_n"], row["qa_failed"]) == (11, 0)
    assert row["qa@2000tok"] == pytest.approx(8 / 11, abs=1e-4)
    assert "qa_n" not in result["methods"][BM25]["5"]
    assert result["methods"][BM25]["5"]["n"] == 1  # recall is still measured there
    assert set(result["methods"]) - set(result["answers"]["methods"]) == {
        m for m in result["methods"] if m != BM25
    }


def test_accuracy_falls_when_the_context_lacks_the_evidence(fixture_data: Path) -> None:
    full = _run(fixture_data, budget=2000)["methods"][BM25]["1-4"]["qa@2000tok"]
    empty = _run(fixture_data, budget=3)
    row = empty["methods"][BM25]["1-4"]
    assert row["qa@3tok"] == 0.0 < full and row["qa_evidence"] == 0.0 and row["qa_n"] == 11
    assert {e["answer"] for e in _log(empty)} == {fake_models.DONT_KNOW}


def test_each_verdict_matches_the_evidence_the_model_read(fixture_data: Path) -> None:
    """At a budget of a few turns the hash-embedded dense method misses some evidence:
    exactly those answers are WRONG (the context given is the packed one)."""
    dense = "dense (LangGraph InMemoryStore)"
    result = _run(fixture_data, limit=30, budget=70, methods=(BM25, dense))
    plain = [e for e in _log(result) if e["gold"] == PLAIN]
    assert {e["method"] for e in plain} == {BM25, dense}
    for entry in plain:
        assert (entry["verdict"] == "CORRECT") == (entry["evidence_recall"] == 1.0), entry
    outcomes = {(e["method"], e["verdict"]) for e in plain}
    assert (dense, "WRONG") in outcomes and (dense, "CORRECT") in outcomes
    by_method = result["methods"]
    assert by_method[BM25]["1-4"]["qa@70tok"] > by_method[dense]["1-4"]["qa@70tok"]


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("CORRECT", Verdict.CORRECT),
        ("wrong", Verdict.WRONG),
        ("The answer names the same day in another format.\nCORRECT", Verdict.CORRECT),
        ("It names another city.\n\n**WRONG**.", Verdict.WRONG),
        ("Label: correct", Verdict.CORRECT),
        ('{"label": "WRONG"}', Verdict.WRONG),
        ('Reasoning first. {"label": "correct"}', Verdict.CORRECT),
        ("The generated answer is not correct.", Verdict.WRONG),
        ("Incorrect: it says 2021.", Verdict.WRONG),
        ("It says the same thing, so it is correct.", Verdict.CORRECT),
        ("At first it looks correct, but the year differs.\nWRONG", Verdict.WRONG),
        ("CORRECT or WRONG", None),
        ("It is correct, or maybe wrong.", None),
        ("banana", None),
        ("", None),
        ("CORRECTLY WRONGED", None),
        ('{"label": "maybe"}', None),
    ],
)
def test_judge_replies_parse_or_stay_unjudged(reply: str, verdict: Verdict | None) -> None:
    assert parse_verdict(reply) is verdict


def test_unreadable_verdicts_count_as_wrong_and_are_reported(fixture_data: Path) -> None:
    replies = iter(["correct", "Correct.", "banana"] * 10)
    judge = fake_models.scripted(lambda prompt: next(replies))
    result = _run(fixture_data, limit=9, budget=2000, judge_model=judge, concurrency=1)
    row = result["methods"][BM25]["1-4"]
    assert row["qa_n"] == 8 and row["qa_failed"] == 2  # calls 3 and 6 replied "banana"
    assert row["qa@2000tok"] == pytest.approx(6 / 8, abs=1e-4)
    assert result["answers"]["errors"] == {UNJUDGED: 2}
    assert [e["judge_reply"] for e in _log(result) if e["error"]] == ["banana", "banana"]


def test_a_failing_model_costs_its_questions_not_the_run(fixture_data: Path) -> None:
    asked = fake_models.question_of
    flaky = fake_models.failing(lambda p: "accordion" in asked(p) or "anvil" in asked(p))
    result = _run(fixture_data, budget=2000, answer_model=flaky)
    failed = [e for e in _log(result) if e["error"]]
    assert len(failed) == 2 and all(e["verdict"] is None for e in failed)
    assert all(e["error"] == "answer model: ModelDown: 503 service unavailable" for e in failed)
    row = result["methods"][BM25]["1-4"]
    assert (row["qa_n"], row["qa_failed"]) == (11, 2)
    assert row["qa@2000tok"] == pytest.approx(6 / 11, abs=1e-4)
    assert result["methods"][BM25]["1-4"]["recall@2000tok"] == 1.0  # recall kept


def test_a_dead_model_is_given_up_on(fixture_data: Path) -> None:
    dead = fake_models.failing()
    result = _run(fixture_data, limit=30, budget=2000, answer_model=dead, give_up_after=3)
    assert len(dead.calls) == 8  # one chunk of 2 x concurrency, then no more calls
    errors = result["answers"]["errors"]
    assert errors["answer model: ModelDown: 503 service unavailable"] == 8
    assert errors["not asked: 3 model calls failed in a row"] == result["answers"]["asked"] - 8
    assert result["answers"]["correct"] == 0


def test_a_failing_judge_is_reported_with_the_answer_kept(fixture_data: Path) -> None:
    judge = fake_models.failing()
    result = _run(fixture_data, limit=3, budget=2000, judge_model=judge)
    assert [e["error"] for e in _log(result)] == [
        "judge model: ModelDown: 503 service unavailable"
    ] * 3
    assert all(e["answer"] and PLAIN in e["answer"] for e in _log(result))


def test_unknown_method_and_model_specs_are_config_errors(fixture_data: Path) -> None:
    with pytest.raises(ConfigError, match="unknown method 'bm26'"):
        _run(fixture_data, methods=("bm26",))
    with pytest.raises(ConfigError, match="provider:model"):
        chat_model("gpt-4o-mini")
    with pytest.raises(ConfigError, match="cannot load model 'nosuchprovider:x'"):
        chat_model("nosuchprovider:x")


# --- the command line -------------------------------------------------------------------


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``fake:answer`` / ``fake:judge`` / ``fake:down`` resolve to the offline models."""
    made = {"fake:answer": fake_models.answerer(), "fake:judge": fake_models.judge()}
    made["fake:down"] = fake_models.failing()

    def resolve(spec: str) -> Any:
        return made[spec] if spec in made else chat_model(spec)

    monkeypatch.setattr("engram.eval.chat_model", resolve)
    return made


def _cli(data: Path, out: Path, *extra: str) -> Any:
    args = ["eval", "locomo", "--data", str(data), "--limit", "12", "--embedder", "hash"]
    return CliRunner().invoke(main, [*args, "--quiet", "--out", str(out), *extra])


def test_cli_reports_accuracy_beside_recall(
    fixture_data: Path, tmp_path: Path, models: dict[str, Any]
) -> None:
    extra = ["--answer-model", "fake:answer", "--judge-model", "fake:judge"]
    run = _cli(fixture_data, tmp_path, *extra, "--answer-method", BM25, "--answer-budget", "1000")
    assert run.exit_code == 0, run.output
    assert "answers: 8 of 11 judged CORRECT, 0 failed" in run.output
    doc = json.loads((tmp_path / "locomo.json").read_text())
    assert "answer_log" not in doc and doc["answers"]["judge_model"] == "fake:judge"
    assert doc["methods"][BM25]["1-4"]["qa@1000tok"] == pytest.approx(8 / 11, abs=1e-4)
    log = (tmp_path / "locomo.answers.jsonl").read_text().splitlines()
    assert len(log) == 11 and json.loads(log[0])["method"] == BM25
    table = (tmp_path / "locomo.md").read_text()
    assert "## Answer accuracy, LLM judge (1000 tokens of context)" in table
    assert "| bm25 | 0.727 (1.000) |" in table
    assert len(models["fake:answer"].calls) == 11 == len(models["fake:judge"].calls)


def test_cli_judge_defaults_to_the_answer_model_and_a_dead_model_fails_the_run(
    fixture_data: Path, tmp_path: Path, models: dict[str, Any]
) -> None:
    run = _cli(fixture_data, tmp_path, "--answer-model", "fake:down", "--answer-method", BM25)
    assert run.exit_code == 1
    assert "every answer failed" in run.output
    assert json.loads((tmp_path / "locomo.json").read_text())["answers"]["judge_model"] == (
        "fake:down"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--judge-model", "fake:judge"], "--judge-model needs --answer-model"),
        (["--answer-model", "gpt-4o"], "ConfigError: model must be 'provider:model'"),
        (["--answer-model", "fake:answer", "--answer-method", "bm26"], "unknown method 'bm26'"),
    ],
)
def test_cli_rejects_bad_answer_options(
    fixture_data: Path, tmp_path: Path, models: dict[str, Any], extra: list[str], message: str
) -> None:
    run = _cli(fixture_data, tmp_path, *extra)
    assert run.exit_code != 0 and message in run.output, run.output


def test_longmemeval_questions_carry_their_date_and_pool_in_all(fixture_data: Path) -> None:
    answer = fake_models.answerer()
    answers = AnswerSettings(answer, fake_models.judge(), methods=(BM25,))
    result = run_benchmark("longmemeval", data=fixture_data, embedder="hash", answers=answers)
    rows = result["methods"][BM25]
    assert rows["all"]["qa_n"] == rows["all"]["n"] == 6
    assert sum(rows[g]["qa_n"] for g in rows if g != "all") == 6
    dates = {q.id: q.date for q in load_longmemeval(fixture_data).questions}
    assert sorted(p.split("Today is ", 1)[1].split(".\n", 1)[0] for p in answer.calls) == sorted(
        dates.values()
    )
