"""A review queue a person edited by hand (the inspector's document editor saves the user's
own ``review/<user>.md``): a line in the earlier origin form (``thread <id>, checkpoint
<id>, as {...}``) whose write holds values of the wrong type is read exactly as the same
values in the JSON origin form are, so it never breaks listing, approving or discarding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram import Principal
from engram.cli import main
from engram.errors import InvalidInputError, PolicyRejectedError
from engram.memory import Memory
from engram.memory._review import HeldWrite, parse_entry
from engram.stores.documents.review import entry_line, queue_held

ALICE = Principal("acme", "alice")
WHEN = "2026-01-01T00:00:00+00:00"
WRITES = [
    '{"tags": 5}',
    '{"tags": "abc"}',
    '{"tags": {"a": 1}}',
    '{"tags": [1, 2]}',
    '{"tags": ["x", null]}',
    '{"tags": [["x"]]}',
    '{"tags": null}',
    '{"slot": {"a": 1}, "source": "nonsense", "tags": [1, 2]}',
    '{"slot": 5}',
    '{"slot": ["a"]}',
    '{"slot": true}',
    '{"source": ["user"]}',
    '{"source": null}',
    '{"source": {"user": 1}}',
    '{"source": 7}',
    '{"slot": "risk", "source": "tool", "tags": ["preference"]}',
]
REFUSED = ['{"tags": []}', '{"tags": ["", " "]}', '{"slot": ""}']
"""Well-typed values the write policy refuses (in either form): approving them says so."""


def _legacy(write: str, text: str = "Alice X") -> str:
    return f"{WHEN} | held | thread t1, checkpoint c1, as {write} | {text}"


def _seen(entry: HeldWrite) -> tuple[object, ...]:
    return (entry.kind, entry.text, entry.thread_id, entry.checkpoint_id, entry.slot,
            entry.source, entry.tags, entry.key)  # fmt: skip


@pytest.mark.parametrize("write", WRITES + REFUSED)
def test_an_earlier_form_line_reads_as_its_json_form_does(write: str) -> None:
    origin = {"thread": "t1", "checkpoint": "c1", **json.loads(write)}
    as_json = entry_line(WHEN, "held", origin, "Alice X")[2:]
    assert _seen(parse_entry(_legacy(write))) == _seen(parse_entry(as_json))


@pytest.mark.parametrize("write", WRITES)
def test_a_hand_edited_line_lists_approves_and_discards(memory: Memory, write: str) -> None:
    queue_held(memory.documents, ALICE, "- " + _legacy(write), "- " + _legacy(write, "Alice Y"))
    first, second = memory.review_queue(ALICE)
    assert all(isinstance(tag, str) for tag in first.tags)
    assert first.slot is None or isinstance(first.slot, str)
    assert memory.approve_held(ALICE, first.id).action == "added"
    (fact,) = memory.facts(ALICE, include_history=False)
    assert fact.text == "Alice X" and set(first.tags) <= set(fact.tags)
    assert fact.source == first.source and fact.provenance.thread_id == "t1"
    assert memory.discard_held(ALICE, second.id).id == second.id
    assert memory.review_queue(ALICE) == []


@pytest.mark.parametrize("write", REFUSED)
def test_a_hand_edited_line_the_policy_refuses_stays_queued(memory: Memory, write: str) -> None:
    queue_held(memory.documents, ALICE, "- " + _legacy(write))
    (entry,) = memory.review_queue(ALICE)
    with pytest.raises((PolicyRejectedError, InvalidInputError)):
        memory.approve_held(ALICE, entry.id)
    assert memory.review_queue(ALICE) == [entry] and memory.facts(ALICE) == []
    assert memory.discard_held(ALICE, entry.id) == entry and memory.review_queue(ALICE) == []


def test_the_cli_lists_a_hand_edited_queue(memory: Memory, home: Path) -> None:
    queue_held(memory.documents, ALICE, *("- " + _legacy(write) for write in WRITES))
    memory.close()
    who = ["--tenant", "acme", "--user", "alice", "--home", str(home), "--embedder", "hash"]
    for extra in ([], ["--json"]):
        result = CliRunner().invoke(main, ["review", "list", *extra, *who])
        assert result.exit_code == 0, result.output
        assert result.stdout.count("Alice X") == len(WRITES)
