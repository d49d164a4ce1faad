"""Strange arguments for the public API: each call works or raises an ``EngramError``
subclass with a one-line message, and a refused call changes nothing."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import EngramError, Memory, Principal
from engram.cli import main
from engram.recall import HashEmbedder
from engram.stores.hot import Threads

ALICE = Principal("acme", "alice")
BOB = Principal("acme", "bob")
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

STRANGE_TEXT = st.sampled_from(
    [
        "",
        "   ",
        "\udc80",
        "ok\ud800",
        "a\x00b",
        "bell\x07",
        "\u202eevil\u202c",
        "\ufeffBOM",
        "ｆｕｌｌ",
        "x" * 20_000,
        "acme",
        "Prefers short briefs",
    ]
)
ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    STRANGE_TEXT,
    st.binary(max_size=8),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=5), STRANGE_TEXT), max_size=3),
    st.tuples(st.text(max_size=4)),
    st.just(("acme", "alice")),
    st.datetimes(),
    st.just(timedelta(seconds=-5)),
    st.just(math.nan),
    st.just({"a": 1}),
)
PRINCIPALS = st.one_of(st.just(ALICE), st.just(BOB), ANYTHING)


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    home = tmp_path_factory.mktemp("inputs") / ".engram"
    with Memory.open(home, embedder=HashEmbedder(), clock=lambda: NOW) as opened:
        opened.remember(ALICE, "Alice prefers conservative risk", slot="risk")
        opened.remember(BOB, "Bob follows AAPL")
        yield opened


def _state(memory: Memory) -> tuple[str, str]:
    return memory.export_json(ALICE), memory.export_json(BOB)


def _attempt(memory: Memory, call: Callable[[], Any]) -> None:
    before = _state(memory)
    try:
        call()
    except EngramError as exc:
        assert "\n" not in str(exc) and str(exc)
        assert _state(memory) == before
    # Anything else propagates and fails the test.


FAST = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FAST
@given(
    principal=PRINCIPALS,
    text=ANYTHING,
    slot=ANYTHING,
    tags=ANYTHING,
    importance=ANYTHING,
    ttl=ANYTHING,
    thread_id=ANYTHING,
    message_ids=ANYTHING,
)
def test_remember(memory: Memory, **args: Any) -> None:
    def call() -> Any:
        return memory.remember(
            args["principal"], args["text"], slot=args["slot"], tags=args["tags"],
            importance=args["importance"], ttl=args["ttl"], thread_id=args["thread_id"],
            message_ids=args["message_ids"],
        )  # fmt: skip

    _attempt(memory, call)


@FAST
@given(
    principal=PRINCIPALS, query=ANYTHING, budget=ANYTHING, k=ANYTHING, passages=ANYTHING,
    as_of=ANYTHING,
)  # fmt: skip
def test_recall(memory: Memory, **args: Any) -> None:
    def call() -> Any:
        return memory.recall(
            args["principal"], args["query"], args["budget"], k=args["k"],
            passages=args["passages"], as_of=args["as_of"],
        )  # fmt: skip

    _attempt(memory, call)


@FAST
@given(principal=PRINCIPALS, key=ANYTHING, keys=ANYTHING, flag=ANYTHING, as_of=ANYTHING)
def test_lookups_and_erasure_of_chosen_keys(memory: Memory, **args: Any) -> None:
    principal = args["principal"]
    for call in (
        lambda: memory.history(principal, args["key"]),
        lambda: memory.facts(principal, include_history=args["flag"]),
        lambda: memory.profile(principal, args["as_of"]),
        lambda: memory.forget(principal, ["no-such-key"] if args["keys"] is None else args["keys"]),
        lambda: memory.store.recall(principal, "risk", k=args["key"]),
        lambda: memory.store.put(args["keys"], "k", {"text": "x"}),
        lambda: memory.store.search(args["keys"], query="risk"),
    ):
        _attempt(memory, call)


@FAST
@given(principal=PRINCIPALS, thread_id=ANYTHING, keep=ANYTHING)
def test_thread_inspection(memory: Memory, **args: Any) -> None:
    threads = Threads(memory.checkpointer)
    principal = args["principal"]
    for call in (
        lambda: threads.history(args["thread_id"], principal),
        lambda: threads.get(args["thread_id"], None, principal),
        lambda: threads.prune(args["thread_id"], args["keep"], principal),
        lambda: threads.check_owner(principal, args["thread_id"]),
        lambda: memory.lineage(principal, args["thread_id"]),
    ):
        _attempt(memory, call)


@FAST
@given(principal=PRINCIPALS, path=ANYTHING, content=ANYTHING, metadata=ANYTHING)
def test_documents(memory: Memory, **args: Any) -> None:
    docs, principal = memory.documents, args["principal"]
    for call in (
        lambda: docs.write(principal, args["path"], args["content"], args["metadata"]),
        lambda: docs.read(principal, args["path"]),
        lambda: docs.list(principal, args["path"]),
        lambda: docs.search(principal, args["content"], k=args["metadata"]),
    ):
        _attempt(memory, call)


def test_a_string_for_a_principal_is_refused_and_stores_nothing(memory: Memory) -> None:
    before = _state(memory)
    with pytest.raises(EngramError, match="a Principal is required"):
        memory.remember("acme", "stored under the wrong namespace")  # type: ignore[arg-type]
    assert _state(memory) == before
    assert memory.recall(Principal("a", "c"), "wrong namespace", 500).items == ()


@pytest.mark.parametrize(
    "args",
    [
        ["remember", "--tenant", "acme", "--user", "alice", "bad \udcff bytes"],
        ["recall", "--tenant", "acme", "--user", "alice", "\udcff"],
        ["docs", "read", "notes/\udcff.md", "--tenant", "acme"],
    ],
)
def test_the_cli_answers_bad_bytes_in_one_line(tmp_path: Path, args: list[str]) -> None:
    home = ["--home", str(tmp_path / ".engram")]
    result = CliRunner().invoke(main, [*args, *home, "--embedder", "hash"][: len(args) + 2])
    assert result.exit_code != 0 and result.exception is not None
    assert isinstance(result.exception, SystemExit)  # a handled error, not a traceback
    assert len(result.output.strip().splitlines()) == 1
